//! Crawl progress on the terminal: pages counted, optionally on a progress bar.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use copyhound_core::model::CrawlCounters;
use copyhound_crawler::crawl::{CrawlProgress, PageOutcome};
use indicatif::ProgressBar;

/// Counts crawled pages, optionally on a progress bar.
#[derive(Debug, Default)]
pub struct PageCounter {
    pages: AtomicU64,
    bar: Option<ProgressBar>,
}

impl PageCounter {
    /// Returns a counter that also updates `bar`'s message.
    pub fn with_bar(bar: ProgressBar) -> Self {
        Self {
            pages: AtomicU64::new(0),
            bar: Some(bar),
        }
    }

    /// Returns the pages fetched so far.
    pub fn pages(&self) -> u64 {
        self.pages.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl CrawlProgress for PageCounter {
    fn page_done(
        &self,
        _url: &str,
        _outcome: &PageOutcome,
        _counters: &CrawlCounters,
        _frontier: usize,
    ) {
        let pages = self.pages.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{pages} pages crawled"));
        }
    }
}
