//! Same-site style sheets for the extractor: what a reader sees depends on
//! them (see `crate::style`). A run fetches each sheet once, through the same
//! fetcher (robots.txt, pacing, body limits), and shares it with every page of
//! the run; a sheet that cannot be had is remembered as such and not retried.
//! Sheets on other hosts are not fetched: the page is then read as one whose
//! sheets are unknown, which trusts less of its CSS.

use std::sync::Arc;

use copyhound_core::ports::{Fetcher, Resource};
use url::Url;

use super::run_cache::{Entries, RunCache};
use crate::pacer::HostPacer;

/// Sheets remembered per run (fetched or failed).
pub const MAX_SHEETS_PER_RUN: usize = 64;
/// Sheets fetched for one page.
pub const MAX_SHEETS_PER_PAGE: usize = 8;
/// Bytes kept of one sheet.
pub const MAX_SHEET_BYTES: usize = 256 * 1024;

/// Sheets by absolute URL; `None` when one could not be fetched.
#[derive(Debug)]
pub(crate) struct SheetCache(RunCache<str>);

impl Default for SheetCache {
    fn default() -> Self {
        Self(RunCache::new(
            Resource::StyleSheet,
            MAX_SHEETS_PER_PAGE,
            MAX_SHEETS_PER_RUN,
        ))
    }
}

/// Resolves the hrefs of one page against the sheets at hand.
pub(crate) struct SheetLookup {
    page: Option<Url>,
    entries: Entries<str>,
}

impl SheetLookup {
    pub(crate) fn sheet(&self, href: &str) -> Option<Arc<str>> {
        let url = resolve(self.page.as_ref()?, href)?;
        self.entries.get(&url).cloned().flatten()
    }
}

fn resolve(page: &Url, href: &str) -> Option<String> {
    crate::urls::same_site_url(page.join(href).ok()?, page)
}

impl SheetCache {
    /// The sheets known now, for extracting the page at `page_url`.
    pub(crate) fn lookup(&self, page_url: &str) -> SheetLookup {
        SheetLookup {
            page: Url::parse(page_url).ok(),
            entries: self.0.snapshot(),
        }
    }

    /// Fetches the same-site sheets among `hrefs` that were never tried;
    /// returns whether one more is at hand.
    pub(crate) async fn fetch_missing(
        &self,
        page_url: &str,
        hrefs: &[String],
        fetcher: &dyn Fetcher,
        pacer: &HostPacer,
        interval: std::time::Duration,
    ) -> bool {
        let Ok(page) = Url::parse(page_url) else {
            return false;
        };
        let urls = hrefs.iter().filter_map(|href| resolve(&page, href));
        let read = |_url: String, body: Vec<u8>| async move {
            let body = body
                .get(..body.len().min(MAX_SHEET_BYTES))
                .unwrap_or_default();
            Some(Arc::<str>::from(String::from_utf8_lossy(body).as_ref()))
        };
        self.0
            .fetch_missing(urls, fetcher, pacer, interval, read, |_| true)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_same_site_sheets_resolve() {
        let page = Url::parse("http://127.0.0.1:8001/book/1.html").unwrap();
        assert_eq!(
            resolve(&page, "../css/a.css#x").as_deref(),
            Some("http://127.0.0.1:8001/css/a.css")
        );
        assert_eq!(resolve(&page, "http://127.0.0.1:8002/a.css"), None);
        assert_eq!(resolve(&page, "//cdn.example/a.css"), None);
        assert_eq!(resolve(&page, "data:text/css,p{}"), None);
    }
}
