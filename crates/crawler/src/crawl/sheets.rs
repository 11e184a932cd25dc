//! Same-site style sheets for the extractor: what a reader sees depends on
//! them (see `crate::style`). A run fetches each sheet once, through the same
//! fetcher (robots.txt, pacing, body limits), and shares it with every page of
//! the run; a sheet that cannot be had is remembered as such and not retried.
//! Sheets on other hosts are not fetched: the page is then read as one whose
//! sheets are unknown, which trusts less of its CSS.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use copyhound_core::ports::{Fetcher, Resource};
use tracing::debug;
use url::Url;

use crate::pacer::{HostPacer, fetch_paced};

/// Sheets remembered per run (fetched or failed).
pub const MAX_SHEETS_PER_RUN: usize = 64;
/// Sheets fetched for one page.
pub const MAX_SHEETS_PER_PAGE: usize = 8;
/// Bytes kept of one sheet.
pub const MAX_SHEET_BYTES: usize = 256 * 1024;

/// Sheets by absolute URL; `None` when one could not be fetched.
#[derive(Debug, Default)]
pub(crate) struct SheetCache {
    entries: Mutex<HashMap<String, Option<Arc<str>>>>,
}

/// Resolves the hrefs of one page against the sheets at hand.
pub(crate) struct SheetLookup {
    page: Option<Url>,
    entries: HashMap<String, Option<Arc<str>>>,
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
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<Arc<str>>>> {
        self.entries
            .lock()
            .expect("sheet cache lock is never poisoned: no panics while held")
    }

    /// The sheets known now, for extracting the page at `page_url`.
    pub(crate) fn lookup(&self, page_url: &str) -> SheetLookup {
        SheetLookup {
            page: Url::parse(page_url).ok(),
            entries: self.lock().clone(),
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
        let wanted: Vec<String> = {
            let entries = self.lock();
            let mut wanted: Vec<String> = hrefs
                .iter()
                .filter_map(|href| resolve(&page, href))
                .filter(|url| !entries.contains_key(url))
                .collect();
            wanted.dedup();
            let room = MAX_SHEETS_PER_RUN.saturating_sub(entries.len());
            wanted.truncate(MAX_SHEETS_PER_PAGE.min(room));
            wanted
        };
        let mut added = false;
        for url in wanted {
            let sheet =
                match fetch_paced(fetcher, pacer, interval, &url, Resource::StyleSheet).await {
                    Ok(fetched) if (200..300).contains(&fetched.status) => {
                        let body = &fetched.body[..fetched.body.len().min(MAX_SHEET_BYTES)];
                        Some(Arc::<str>::from(String::from_utf8_lossy(body).as_ref()))
                    }
                    Ok(fetched) => {
                        debug!(url=%url, status=fetched.status, "style sheet not fetched");
                        None
                    }
                    Err(error) => {
                        debug!(url=%url, error=%error, "style sheet not fetched");
                        None
                    }
                };
            added |= sheet.is_some();
            self.lock().insert(url, sheet);
        }
        added
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
