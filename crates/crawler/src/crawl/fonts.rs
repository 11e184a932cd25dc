//! Same-site web fonts for the extractor: text drawn by a site font is read
//! as drawn (see `crate::fonts`). A run fetches each font once, through the
//! same fetcher (robots.txt, pacing, body limits), decodes it off the async
//! threads and shares the map with every page of the run; a font that cannot
//! be had or read is remembered as such and not retried. Fonts on other hosts
//! are not fetched: their text is read as written.

use std::sync::Arc;

use copyhound_core::ports::{Fetcher, Resource};
use tracing::{debug, info};
use url::Url;

use super::run_cache::{Entries, RunCache};
use crate::fonts::apply::{FontLookup, FontRef};
use crate::fonts::{FontMap, MAX_FONT_BYTES, decode_font, system_reference};
use crate::pacer::HostPacer;

/// Fonts remembered per run (fetched or failed).
pub const MAX_FONTS_PER_RUN: usize = 256;
/// Fonts fetched for one page.
pub const MAX_FONTS_PER_PAGE: usize = 4;

/// Decoded fonts by absolute URL; `None` when one could not be had or read.
#[derive(Debug)]
pub(crate) struct FontCache(RunCache<FontMap>);

impl Default for FontCache {
    fn default() -> Self {
        Self(RunCache::new(
            Resource::Font,
            MAX_FONTS_PER_PAGE,
            MAX_FONTS_PER_RUN,
        ))
    }
}

/// Resolves the font references of one page against the fonts at hand.
pub(crate) struct FontTable {
    page: Option<Url>,
    entries: Entries<FontMap>,
}

impl FontTable {
    /// Returns what is known of a font the page names (see [`FontLookup`]).
    pub(crate) fn font(&self, font: &FontRef) -> FontLookup {
        let Some(url) = self.page.as_ref().and_then(|page| resolve(page, font)) else {
            // Not fetchable from here: read as written, never asked for.
            return Some(None);
        };
        self.entries.get(&url).cloned()
    }
}

/// Returns the absolute URL of a same-site font, fragment dropped.
fn resolve(page: &Url, font: &FontRef) -> Option<String> {
    let base = match &font.sheet {
        Some(sheet) => page.join(sheet).ok()?,
        None => page.clone(),
    };
    crate::urls::same_site_url(base.join(&font.url).ok()?, page)
}

impl FontCache {
    /// The fonts known now, for extracting the page at `page_url`.
    pub(crate) fn lookup(&self, page_url: &str) -> FontTable {
        FontTable {
            page: Url::parse(page_url).ok(),
            entries: self.0.snapshot(),
        }
    }

    /// Fetches and decodes the same-site fonts among `fonts` that were never
    /// tried; returns whether one more decoding font is at hand.
    pub(crate) async fn fetch_missing(
        &self,
        page_url: &str,
        fonts: &[FontRef],
        fetcher: &dyn Fetcher,
        pacer: &HostPacer,
        interval: std::time::Duration,
    ) -> bool {
        let Ok(page) = Url::parse(page_url) else {
            return false;
        };
        let urls = fonts.iter().filter_map(|font| resolve(&page, font));
        self.0
            .fetch_missing(urls, fetcher, pacer, interval, decode, FontMap::is_decoding)
            .await
    }
}

/// Decodes a font off the async threads.
async fn decode(url: String, body: Vec<u8>) -> Option<Arc<FontMap>> {
    if body.len() > MAX_FONT_BYTES {
        debug!(url=%url, bytes = body.len(), "font over its size bound");
        return None;
    }
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        match decode_font(&body, &system_reference()) {
            Ok(map) => {
                info!(
                    url = %url,
                    covered = map.covered(),
                    changed = map.changed(),
                    truncated = map.truncated,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "web font decoded"
                );
                Some(Arc::new(map))
            }
            Err(error) => {
                debug!(url=%url, error=%error, "font not read");
                None
            }
        }
    })
    .await
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use copyhound_core::ports::{FetchRequest, FetchedPage};

    use super::*;
    use crate::fonts::Drawn;
    use crate::fonts::testfont::{TestGlyph, build_font};

    /// Serves one font file; every other URL is a 404. Records what was asked.
    #[derive(Debug)]
    struct FontSite {
        font_url: String,
        font: Vec<u8>,
        asked: Mutex<Vec<(String, Resource)>>,
    }

    #[async_trait]
    impl Fetcher for FontSite {
        async fn fetch(&self, request: &FetchRequest) -> copyhound_core::Result<FetchedPage> {
            self.asked
                .lock()
                .unwrap()
                .push((request.url.clone(), request.resource));
            let found = request.url == self.font_url;
            Ok(FetchedPage {
                final_url: request.url.clone(),
                status: if found { 200 } else { 404 },
                content_type: Some("font/ttf".to_string()),
                etag: None,
                last_modified: None,
                headers: Vec::new(),
                body: if found { self.font.clone() } else { Vec::new() },
                duration_ms: 0,
                received_at: None,
                connection: None,
            })
        }
    }

    #[tokio::test]
    async fn fonts_are_fetched_once_decoded_and_failures_remembered() {
        // Private-use code points drawn with shapes no reference font has.
        let glyphs: Vec<TestGlyph> = (0..12)
            .map(|at| TestGlyph::boxes(at + 1, 1000).scaled(7))
            .collect();
        let cmap: Vec<(char, u16)> = (0..12)
            .map(|at| (char::from_u32(0xE000 + at).unwrap(), at as u16 + 1))
            .collect();
        let site = FontSite {
            font_url: "http://127.0.0.1:8001/font/a.ttf".to_string(),
            font: build_font(1000, &glyphs, &cmap),
            asked: Mutex::new(Vec::new()),
        };
        let page = "http://127.0.0.1:8001/book/1.html";
        let fonts = [
            FontRef {
                sheet: None,
                url: "../font/a.ttf".to_string(),
            },
            FontRef {
                sheet: None,
                url: "../font/missing.woff2".to_string(),
            },
            FontRef {
                sheet: None,
                url: "http://elsewhere.example/b.ttf".to_string(),
            },
        ];
        let cache = FontCache::default();
        let pacer = HostPacer::new();
        let interval = std::time::Duration::ZERO;
        assert!(
            cache
                .fetch_missing(page, &fonts, &site, &pacer, interval)
                .await
        );
        let asked = site.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 2, "same origin only: {asked:?}");
        assert!(
            asked
                .iter()
                .all(|(_, resource)| *resource == Resource::Font)
        );
        let table = cache.lookup(page);
        let map = table.font(&fonts[0]).flatten().expect("decoded");
        assert!(map.is_decoding());
        assert_eq!(map.drawn('\u{E000}'), Some(Drawn::Unknown));
        assert_eq!(table.font(&fonts[1]), Some(None), "a 404 is remembered");
        assert!(
            !cache
                .fetch_missing(page, &fonts, &site, &pacer, interval)
                .await
        );
        assert_eq!(site.asked.lock().unwrap().len(), 2, "nothing fetched twice");
    }

    #[test]
    fn fonts_resolve_against_their_sheet_and_stay_on_site() {
        let page = Url::parse("http://127.0.0.1:8001/book/1/2.html").unwrap();
        let inline = FontRef {
            sheet: None,
            url: "../../static/font/a.woff2#x".to_string(),
        };
        assert_eq!(
            resolve(&page, &inline).as_deref(),
            Some("http://127.0.0.1:8001/static/font/a.woff2")
        );
        let in_sheet = FontRef {
            sheet: Some("/css/site.css".to_string()),
            url: "fonts/b.woff".to_string(),
        };
        assert_eq!(
            resolve(&page, &in_sheet).as_deref(),
            Some("http://127.0.0.1:8001/css/fonts/b.woff")
        );
        let elsewhere = FontRef {
            sheet: None,
            url: "https://cdn.example/c.ttf".to_string(),
        };
        assert_eq!(resolve(&page, &elsewhere), None);
        let table = FontCache::default().lookup(page.as_str());
        assert_eq!(table.font(&elsewhere), Some(None), "never asked for");
        assert_eq!(table.font(&inline), None, "not fetched yet");
    }
}
