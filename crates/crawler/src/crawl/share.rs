//! Crawl slots shared between tenants. A crawl holds a worker's crawl slot for
//! as long as its site takes, and a slow site (a low rate limit, a slow
//! server) takes hours: without a share, one publisher's slow sites would hold
//! every slot and everyone else's crawls would wait on them.
//!
//! A publisher has `crawler.max_crawls_per_publisher` runs going at once, over
//! all workers. The slots are leases in the queue backend, so every worker
//! sees the same count: taken when the task is admitted, renewed while the run
//! goes, freed when it ends, and lapsing after [`LEASE`] if its worker dies.
//! A run past the share goes back to the queue without counting an attempt,
//! stays `queued`, and is tried again after [`WAIT`]; the worker's slot goes
//! to the next task meanwhile.

use std::sync::Arc;
use std::time::Duration;

use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::ports::TaskQueue;
use copyhound_core::{ErrorKind, Result};
use tracing::{info, warn};

use super::Crawler;

/// How long a slot outlives a silent holder.
pub const LEASE: Duration = Duration::from_secs(120);
/// How long a run past its publisher's share waits before it asks again.
pub const WAIT: Duration = Duration::from_secs(30);

/// The slot group of a publisher's crawls.
pub fn group(publisher: &PublisherId) -> String {
    format!("crawls/{publisher}")
}

impl Crawler {
    /// Takes a crawl slot of the site's publisher for `run_id`; `Some(wait)`
    /// when the publisher holds all of its share. A finished run, or one of a
    /// site that is gone, is admitted: running it only ends it.
    pub async fn admit_run(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
    ) -> Result<Option<Duration>> {
        let limit = self.config.max_crawls_per_publisher;
        if limit == 0 {
            return Ok(None);
        }
        match self.sites.get_crawl_run(run_id).await {
            Ok(run) if run.status.is_finished() => return Ok(None),
            Ok(_) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        let publisher = match self.sites.get_site(site_id).await {
            Ok(site) => site.publisher_id,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let group = group(&publisher);
        if self
            .queue
            .acquire_slot(&group, run_id.as_str(), limit, LEASE)
            .await?
        {
            return Ok(None);
        }
        info!(%publisher, run_id = %run_id, limit, "publisher at its share of crawl slots; the run waits its turn");
        Ok(Some(self.share_wait))
    }

    /// Holds the run's slot (taken at admission, or now) until it ends.
    pub(super) async fn hold_slot(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
    ) -> Option<SlotHold> {
        let limit = self.config.max_crawls_per_publisher;
        if limit == 0 {
            return None;
        }
        let site = self.sites.get_site(site_id).await.ok()?;
        Some(SlotHold::hold(
            self.queue.clone(),
            group(&site.publisher_id),
            run_id.as_str().to_string(),
            limit,
        ))
    }

    /// Frees the run's slot, if its site still says whose it was.
    pub(super) async fn release_slot(&self, site_id: &SiteId, run_id: &CrawlRunId) {
        if self.config.max_crawls_per_publisher == 0 {
            return;
        }
        if let Ok(site) = self.sites.get_site(site_id).await
            && let Err(error) = self
                .queue
                .release_slot(&group(&site.publisher_id), run_id.as_str())
                .await
        {
            warn!(run_id = %run_id, error = %error, "freeing the crawl slot failed; its lease lapses");
        }
    }
}

/// A slot renewed in the background while a run goes.
pub(super) struct SlotHold {
    renew: tokio::task::JoinHandle<()>,
    queue: Arc<dyn TaskQueue>,
    group: String,
    holder: String,
}

impl SlotHold {
    fn hold(queue: Arc<dyn TaskQueue>, group: String, holder: String, limit: u32) -> Self {
        let renew = tokio::spawn({
            let (queue, group, holder) = (queue.clone(), group.clone(), holder.clone());
            async move {
                loop {
                    // Renews the slot, or takes it when the run was not admitted here.
                    match queue.acquire_slot(&group, &holder, limit, LEASE).await {
                        Ok(true) => {}
                        Ok(false) => warn!(
                            group,
                            holder,
                            "the run's crawl slot lapsed and is taken; it goes on outside the share"
                        ),
                        Err(error) => {
                            warn!(group, holder, error = %error, "renewing the crawl slot failed")
                        }
                    }
                    tokio::time::sleep(LEASE / 4).await;
                }
            }
        });
        Self {
            renew,
            queue,
            group,
            holder,
        }
    }

    /// Stops renewing and frees the slot.
    pub(super) async fn release(self) {
        self.renew.abort();
        if let Err(error) = self.queue.release_slot(&self.group, &self.holder).await {
            warn!(holder = %self.holder, error = %error, "freeing the crawl slot failed; its lease lapses");
        }
    }
}

impl Drop for SlotHold {
    fn drop(&mut self) {
        // A run that panicked leaves its slot to lapse.
        self.renew.abort();
    }
}
