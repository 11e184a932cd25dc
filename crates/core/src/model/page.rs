use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{CrawlRunId, PageId, SiteId};

/// How a page was fetched, for evidence and conditional re-fetching.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchMeta {
    /// HTTP status.
    pub status: u16,
    /// The URL after redirects.
    pub final_url: String,
    /// Content-Type header.
    pub content_type: Option<String>,
    /// ETag header, for conditional GET.
    pub etag: Option<String>,
    /// Last-Modified header, for conditional GET.
    pub last_modified: Option<String>,
    /// The latest response's header fields as received, in order (at most
    /// 100 fields and 16 KiB); empty for pages stored before they were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// Time to fetch, milliseconds.
    pub duration_ms: u64,
    /// The run that fetched it.
    pub crawl_run_id: Option<CrawlRunId>,
    /// Set when the page is one part of a chapter split over several pages ("第1/3页").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pagination: Option<Pagination>,
    /// How the text was read, when it is not the markup as served.
    #[serde(default, skip_serializing_if = "Reading::is_plain")]
    pub reading: Reading,
    /// The page whose link led the crawler here first (none for seeds): for a
    /// chapter, the list or table of contents that announces it, which is
    /// where its work's next chapters appear (`crawler::watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_via: Option<String>,
    /// When the response that `status`, `headers` and the body describe was
    /// received. A `304` revalidation keeps it (the revalidation goes to
    /// `revalidations`); none for pages stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_at: Option<Timestamp>,
    /// How that response reached the crawler (resolver answers, peer, TLS);
    /// none for pages stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<Connection>,
    /// The `304 Not Modified` answers since that response, oldest first (at
    /// most [`MAX_REVALIDATIONS`], the oldest dropped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revalidations: Vec<Revalidation>,
}

/// Most revalidations a page keeps.
pub const MAX_REVALIDATIONS: usize = 20;

/// A `304 Not Modified` answer to a conditional request: the server said the
/// stored response was still current at `at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Revalidation {
    /// When the `304` was received.
    pub at: Timestamp,
    /// Its header fields as received, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// How it reached the crawler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<Connection>,
}

/// How one response reached the crawler, for the capture log of evidence
/// bundles. Each field is what the crawler saw; what it could not see stays
/// empty rather than guessed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// The addresses the crawler's resolver answered for the host, and when
    /// (a pooled connection may have been opened on an earlier answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
    /// The address of the server the response came from (`ip:port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_address: Option<String>,
    /// The server's TLS certificates, DER in standard base64, leaf first
    /// (the HTTP client exposes the leaf only); empty over plain HTTP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tls_certificates: Vec<String>,
    /// The request header fields the crawler set (the client adds `Host`,
    /// `Accept` and `Accept-Encoding` on the wire).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_headers: Vec<(String, String)>,
}

/// A resolver's answer for one host name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    /// The name resolved.
    pub host: String,
    /// The addresses kept by the address policy, in the resolver's order.
    pub addresses: Vec<String>,
    /// When the answer came.
    pub at: Timestamp,
}

/// How a page's text was read from what the site served: evidence says so,
/// and a page whose text could not be read is reported, never taken as clean.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Reading {
    /// Rendered by headless Chromium (its scripts ran) before extraction.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rendered: bool,
    /// Characters read through the site's web fonts rather than as coded
    /// (replaced by the glyph they draw, or dropped as blank decoys).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub font_decoded_chars: u64,
    /// Why the text still looks like no language, when it does
    /// (`private_use`, `script_not_run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl Reading {
    /// Whether the text is the markup as served.
    pub fn is_plain(&self) -> bool {
        self == &Self::default()
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Where a page sits in a chapter split over several pages. Each part is a page
/// of its own (own URL, id and text: the unit that matches are reported on);
/// the first part also carries the joined text of the whole logical page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pagination {
    /// Normalized URL of the first part, which names the logical page.
    pub first_url: String,
    /// 1-based position of this part.
    pub part: u32,
    /// Normalized URLs of every part in reading order, the first included.
    pub part_urls: Vec<String>,
    /// On the first part only: the texts of all parts joined by a newline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined_text: Option<String>,
}

/// An earlier content of a page, kept when the content changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageVersion {
    /// SHA-256 of the raw body of that version.
    pub body_sha256: String,
    /// When that version was first seen.
    pub first_seen: Timestamp,
    /// When that version was last seen.
    pub last_seen: Timestamp,
}

/// A crawled page (a logical page: parts of a paginated chapter are joined).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// Derived from the normalized URL.
    pub id: PageId,
    /// Normalized URL.
    pub url: String,
    /// The site it was crawled from.
    pub site_id: SiteId,
    /// Page title.
    pub title: String,
    /// Raw body as received (the store compresses it); evidence is hashed over it.
    #[serde(with = "crate::model::page::base64_bytes")]
    pub raw_body: Vec<u8>,
    /// Whether `raw_body` was cut at the configured cap.
    pub body_truncated: bool,
    /// SHA-256 of the full raw body, hex.
    pub body_sha256: String,
    /// The charset the body was decoded with.
    pub charset: String,
    /// Extracted main text.
    pub text: String,
    /// SHA-256 of `text`: the idempotency key of fingerprinting and comparison.
    pub content_sha256: String,
    /// First fetch.
    pub first_seen: Timestamp,
    /// Latest fetch.
    pub last_seen: Timestamp,
    /// Latest fetch metadata.
    pub fetch: FetchMeta,
    /// Earlier contents, oldest first.
    #[serde(default)]
    pub previous_versions: Vec<PageVersion>,
}

super::persisted::persisted_v1!(Page => "page");

/// Bytes as standard base64 in JSON, so documents stay text.
pub(crate) mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

/// A page's text as people are shown it: the private-use characters the
/// crawler writes for characters a site drew as pictures (one per picture,
/// from U+F0000) become U+FFFC, the object replacement character, instead of
/// a blank box.
pub fn shown_text(text: &str) -> std::borrow::Cow<'_, str> {
    let named = |c: char| ('\u{F0000}'..='\u{FFFFD}').contains(&c);
    if text.chars().any(named) {
        text.chars()
            .map(|c| if named(c) { '\u{FFFC}' } else { c })
            .collect::<String>()
            .into()
    } else {
        text.into()
    }
}
