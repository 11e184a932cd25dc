use std::sync::Arc;

use async_trait::async_trait;
use copyhound_core::Result;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::{PageStore, SiteStore, TaskHandler, TaskQueue};

use super::{CrawlProgress, Crawler};
use crate::HttpFetcher;

/// The crawler stage's task handler: `crawl_site` and `fetch_page`.
#[derive(Clone)]
pub struct CrawlHandler {
    crawler: Crawler,
    progress: Arc<dyn CrawlProgress>,
}

impl std::fmt::Debug for CrawlHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlHandler")
            .field("crawler", &self.crawler)
            .finish_non_exhaustive()
    }
}

impl CrawlHandler {
    /// Returns the handler over an HTTP fetcher built from `config`.
    pub fn new(
        config: &CrawlerConfig,
        sites: Arc<dyn SiteStore>,
        pages: Arc<dyn PageStore>,
        queue: Arc<dyn TaskQueue>,
        progress: Arc<dyn CrawlProgress>,
    ) -> Result<Self> {
        let fetcher = Arc::new(HttpFetcher::new(config.clone())?);
        let crawler = Crawler::new(config.clone(), fetcher, sites, pages, queue);
        Ok(Self { crawler, progress })
    }

    /// Returns the handler over an existing crawler.
    pub fn with_crawler(crawler: Crawler, progress: Arc<dyn CrawlProgress>) -> Self {
        Self { crawler, progress }
    }
}

#[async_trait]
impl TaskHandler for CrawlHandler {
    async fn admit(&self, task: &Task) -> Result<Option<std::time::Duration>> {
        match &task.kind {
            TaskKind::CrawlSite { site_id, run_id } => {
                self.crawler.admit_run(site_id, run_id).await
            }
            _ => Ok(None),
        }
    }

    async fn handle(&self, task: &Task) -> Result<()> {
        self.crawler.handle_task(task, self.progress.as_ref()).await
    }

    async fn abandon(&self, task: &Task, reason: &str) -> Result<()> {
        match &task.kind {
            TaskKind::CrawlSite { site_id, run_id } => {
                self.crawler.abandon_run(site_id, run_id, reason).await
            }
            // A page task is one page of a run; its failure is that page's.
            _ => Ok(()),
        }
    }
}
