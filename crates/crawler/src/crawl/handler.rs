use std::sync::Arc;

use std::time::Duration;

use copyhound_core::Result;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::ids::{CrawlRunId, SiteId, WorkId};
use copyhound_core::model::{RunScope, Timestamp};
use copyhound_core::ports::{PageStore, SiteStore, TaskQueue};

use super::{CrawlProgress, Crawler};
use crate::HttpFetcher;

/// The crawler stage's task handler: `crawl_site` and `fetch_page`.
#[derive(Clone)]
pub struct CrawlHandler {
    crawler: Crawler,
    progress: Arc<dyn CrawlProgress>,
    watcher: Option<crate::watch::Watcher>,
    discoverer: Option<crate::discover::Discoverer>,
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
        let fetcher = Arc::new(HttpFetcher::new(config.clone())?.with_shared_pacing(queue.clone()));
        let crawler = Crawler::new(config.clone(), fetcher, sites, pages, queue);
        Ok(Self {
            crawler,
            progress,
            watcher: None,
            discoverer: None,
        })
    }

    /// Returns the handler over an existing crawler.
    pub fn with_crawler(crawler: Crawler, progress: Arc<dyn CrawlProgress>) -> Self {
        Self {
            crawler,
            progress,
            watcher: None,
            discoverer: None,
        }
    }

    /// Also runs `revisit_watch` tasks (release bursts and quiet watching).
    pub fn with_watcher(mut self, watcher: crate::watch::Watcher) -> Self {
        self.watcher = Some(watcher);
        self
    }

    /// Also runs `verify_suggestion` tasks (checks of suggested sites),
    /// through this crawler's fetcher, and searches sites with a known search
    /// for the publisher's titles on full runs.
    pub fn with_discovery(mut self, ports: copyhound_core::ports::Ports) -> Self {
        self.crawler = self.crawler.with_works(ports.works.clone());
        self.discoverer = Some(crate::discover::Discoverer::new(
            ports,
            self.crawler.fetcher(),
            self.crawler.config().verify_suggestions,
        ));
        self
    }

    /// Runs `verify_suggestion`: robots.txt and one page of a suggested site.
    pub async fn verify_suggestion(
        &self,
        publisher_id: &copyhound_core::ids::PublisherId,
        suggestion_id: &str,
    ) -> Result<()> {
        self.discoverer
            .as_ref()
            .ok_or_else(|| {
                copyhound_core::Error::internal(
                    "this crawler runs no discovery for verify_suggestion tasks",
                )
            })?
            .verify(publisher_id, suggestion_id)
            .await
    }

    fn watcher(&self) -> Result<&crate::watch::Watcher> {
        self.watcher.as_ref().ok_or_else(|| {
            copyhound_core::Error::internal("this crawler runs no watcher for revisit_watch tasks")
        })
    }

    /// Whether a `revisit_watch` visit is due; `Some(delay)` puts it back.
    pub fn admit_revisit(&self, due: Timestamp) -> Result<Option<Duration>> {
        Ok(self.watcher()?.admit(due))
    }

    /// Runs `revisit_watch`: one visit of a release burst or of quiet watching.
    pub async fn revisit_watch(
        &self,
        work_id: &WorkId,
        release: Timestamp,
        step: u32,
    ) -> Result<()> {
        self.watcher()?
            .visit(work_id, release, step)
            .await
            .map(drop)
    }
}

/// The crawler stage's tasks, one method per kind: the runtime's dispatcher
/// matches the task kind (the one map from kind to stage) and calls these.
impl CrawlHandler {
    /// Whether the `crawl_site` task of `run_id` may start now (its
    /// publisher's share of crawl slots); `Some(delay)` puts it back.
    pub async fn admit_crawl(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
    ) -> Result<Option<Duration>> {
        self.crawler.admit_run(site_id, run_id).await
    }

    /// Runs `crawl_site`: crawls the site for the run, in a crawl slot of its
    /// publisher's share while one is held.
    pub async fn crawl_site(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        scope: Option<&RunScope>,
    ) -> Result<()> {
        let slot = self.crawler.hold_slot(site_id, run_id).await;
        let crawled = self
            .crawler
            .run_crawl_in(site_id, run_id, scope, self.progress.as_ref())
            .await
            .map(drop);
        if let Some(slot) = slot {
            slot.release().await;
        }
        crawled
    }

    /// Runs `fetch_page`: one page of a run, and its links one level deeper.
    pub async fn fetch_page(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        url: &str,
        depth: u32,
    ) -> Result<()> {
        self.crawler
            .handle_fetch_page(site_id, run_id, url, depth)
            .await
            .map(drop)
    }

    /// A `crawl_site` task that will not run to completion: ends its run
    /// `failed` with `reason`. (A `fetch_page` task is one page of a run; its
    /// failure is that page's, so it has nothing to abandon.)
    pub async fn abandon_crawl(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        reason: &str,
    ) -> Result<()> {
        self.crawler.abandon_run(site_id, run_id, reason).await
    }
}
