use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// One HTTP fetch, with what is known from the previous visit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchRequest {
    /// Absolute URL.
    pub url: String,
    /// ETag of the previous visit, for a conditional GET.
    pub etag: Option<String>,
    /// Last-Modified of the previous visit, for a conditional GET.
    pub last_modified: Option<String>,
    /// What is fetched, which decides the content types accepted.
    #[serde(default)]
    pub resource: Resource,
}

/// The kind of resource a [`FetchRequest`] fetches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// A page: HTML or plain text.
    #[default]
    Page,
    /// A style sheet a page links: CSS.
    StyleSheet,
    /// A sitemap (XML, gzip or a text list of URLs) or robots.txt, read for its URLs.
    Sitemap,
    /// What a page rendered by a browser asks for: scripts, data, style sheets.
    Subresource,
    /// A web font a page's CSS applies: WOFF2, WOFF, TTF or OTF.
    Font,
}

/// A fetched response, already size-capped and decompressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchedPage {
    /// The URL after redirects.
    pub final_url: String,
    /// HTTP status (2xx, or 304 with an empty body).
    pub status: u16,
    /// Content-Type header.
    pub content_type: Option<String>,
    /// ETag header.
    pub etag: Option<String>,
    /// Last-Modified header.
    pub last_modified: Option<String>,
    /// The response's header fields as received, in order (bounded by the
    /// fetcher): evidence packages replay them.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Time taken, milliseconds.
    pub duration_ms: u64,
    /// When the response's header arrived, when the fetcher knows.
    pub received_at: Option<crate::model::Timestamp>,
    /// How the response reached the fetcher, when it knows.
    pub connection: Option<crate::model::Connection>,
}

/// Fetches pages politely and within limits.
///
/// Contract: never hangs past its configured total timeout; never buffers more
/// than its body cap; refuses private addresses unless allowed. Errors carry a
/// kind: `NotFound` (404/410), `Forbidden` (401/403), `Blocked` (robots.txt,
/// address policy, content type), `Timeout`, `TooLarge`, `Transient` (5xx,
/// resets; retry later), `InvalidInput` (bad URL, redirect loop).
#[async_trait]
pub trait Fetcher: fmt::Debug + Send + Sync + 'static {
    /// Fetches one URL.
    async fn fetch(&self, request: &FetchRequest) -> Result<FetchedPage>;
}
