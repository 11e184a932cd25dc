use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{PageRequest, PageStore};
use crate::error::{Error, Result};
use crate::model::{Recipients, Site};

/// Most stored pages whose header fields a query carries.
pub const RECIPIENT_HEADER_PAGES: u32 = 3;

/// What a recipient lookup is given about a site.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecipientQuery {
    /// The site's host (a name or an IP literal).
    pub host: String,
    /// Response header fields the crawler stored for the site's pages (a CDN
    /// often names itself there: `cf-ray`, `x-amz-cf-id`, `x-served-by`).
    pub headers: Vec<(String, String)>,
}

/// Returns the query for `site`: the host of its first seed, and the header
/// fields the crawler stored for a few of its pages (`InvalidInput` when no
/// seed has a host).
pub async fn recipient_query(site: &Site, pages: &dyn PageStore) -> Result<RecipientQuery> {
    let host = site
        .seeds
        .iter()
        .find_map(|seed| url::Url::parse(seed).ok()?.host_str().map(str::to_string))
        .ok_or_else(|| Error::invalid(format!("site {} has no seed with a host", site.id)))?;
    let request = PageRequest {
        after: None,
        limit: RECIPIENT_HEADER_PAGES,
    };
    let stored = pages.list_pages(&site.id, &request).await?;
    let mut headers: Vec<(String, String)> = Vec::new();
    for page in stored.items.iter().take(RECIPIENT_HEADER_PAGES as usize) {
        for field in &page.fetch.headers {
            if !headers.contains(field) {
                headers.push(field.clone());
            }
        }
    }
    Ok(RecipientQuery { host, headers })
}

/// Finds who to notify about a site: its registrar, its hosting network and
/// the CDN fronting it.
///
/// Contract: a lookup is bounded in time and size; what cannot be found is
/// listed in [`Recipients::problems`] rather than failing the whole lookup,
/// which fails only when nothing could be asked (`InvalidInput` for a host
/// that is no host, `Config` when no registry is configured) or nothing
/// answered (`Timeout`, `Transient`). Answers may be cached and queries are
/// paced per registry server.
#[async_trait]
pub trait RecipientLookup: fmt::Debug + Send + Sync + 'static {
    /// Returns the recipients for `query.host`.
    async fn recipients(&self, query: &RecipientQuery) -> Result<Recipients>;
}

/// Recipients held in memory, by host: for tests and for deployments that
/// want fixed answers.
#[derive(Debug, Default)]
pub struct MemoryRecipientLookup {
    by_host: Mutex<HashMap<String, Recipients>>,
}

impl MemoryRecipientLookup {
    /// Sets the answer for `recipients.host`.
    pub fn insert(&self, recipients: Recipients) {
        self.by_host
            .lock()
            .expect("recipient map lock is never poisoned: no panics while held")
            .insert(recipients.host.to_ascii_lowercase(), recipients);
    }
}

#[async_trait]
impl RecipientLookup for MemoryRecipientLookup {
    async fn recipients(&self, query: &RecipientQuery) -> Result<Recipients> {
        self.by_host
            .lock()
            .expect("recipient map lock is never poisoned: no panics while held")
            .get(&query.host.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| Error::not_found(format!("recipients of {}", query.host)))
    }
}
