//! Crawl progress on the terminal: pages counted, optionally on a progress bar.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use copyhound_core::model::CrawlCounters;
use copyhound_crawler::crawl::{CrawlProgress, PageOutcome};
use indicatif::ProgressBar;

/// Counts crawled pages, optionally on a progress bar: pages the crawler
/// stored (or found unchanged) apart from fetches that stored nothing (404s,
/// robots.txt and policy skips, failures).
#[derive(Debug, Default)]
pub struct PageCounter {
    pages: AtomicU64,
    not_stored: AtomicU64,
    bar: Option<ProgressBar>,
}

impl PageCounter {
    /// Returns a counter that also updates `bar`'s message.
    pub fn with_bar(bar: ProgressBar) -> Self {
        Self {
            bar: Some(bar),
            ..Self::default()
        }
    }

    /// Pages stored or found unchanged so far.
    pub fn pages(&self) -> u64 {
        self.pages.load(Ordering::Relaxed)
    }

    /// Fetches that stored no page (errors such as 404, skips by rule).
    pub fn not_stored(&self) -> u64 {
        self.not_stored.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl CrawlProgress for PageCounter {
    fn page_done(
        &self,
        _url: &str,
        outcome: &PageOutcome,
        _counters: &CrawlCounters,
        _frontier: usize,
    ) {
        match outcome {
            PageOutcome::Stored { .. } | PageOutcome::NotModified => {
                self.pages.fetch_add(1, Ordering::Relaxed);
            }
            PageOutcome::Skipped { .. } | PageOutcome::Failed { .. } => {
                self.not_stored.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} pages crawled, {} not stored",
                self.pages(),
                self.not_stored()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use copyhound_core::ports::PageUpsert;

    use super::*;

    #[test]
    fn only_stored_pages_count_as_crawled() {
        let counter = PageCounter::default();
        let counters = CrawlCounters::default();
        let stored = PageOutcome::Stored {
            upsert: PageUpsert::New,
            bytes: 10,
            fingerprinted: true,
        };
        let missing = PageOutcome::Failed {
            reason: "http_404".into(),
            message: "404".into(),
        };
        counter.page_done("a", &stored, &counters, 0);
        counter.page_done("b", &PageOutcome::NotModified, &counters, 0);
        counter.page_done("c", &missing, &counters, 0);
        assert_eq!((counter.pages(), counter.not_stored()), (2, 1));
    }
}
