//! Plugs the crawler into the worker loop, reporting pages to a progress bar.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use copyhound_core::config::Config;
use copyhound_core::model::{CrawlCounters, Task};
use copyhound_crawler::HttpFetcher;
use copyhound_crawler::crawl::{CrawlProgress, Crawler, PageOutcome};
use copyhound_matcher::TaskHandler;
use indicatif::ProgressBar;

use crate::backends::Backends;

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

/// Runs `crawl_site` and `fetch_page` tasks.
#[derive(Debug)]
pub struct CrawlHandler {
    crawler: Crawler,
    progress: Arc<PageCounter>,
}

impl CrawlHandler {
    /// Returns the handler over the backends' stores and queue.
    pub fn new(
        config: &Config,
        backends: &Backends,
        progress: Arc<PageCounter>,
    ) -> anyhow::Result<Self> {
        let fetcher = Arc::new(HttpFetcher::new(config.crawler.clone())?);
        let crawler = Crawler::new(
            config.crawler.clone(),
            fetcher,
            backends.stores.sites.clone(),
            backends.stores.pages.clone(),
            backends.queue.clone(),
        );
        Ok(Self { crawler, progress })
    }
}

#[async_trait]
impl TaskHandler for CrawlHandler {
    async fn handle(&self, task: &Task) -> copyhound_core::Result<()> {
        self.crawler.handle_task(task, self.progress.as_ref()).await
    }
}
