//! The crawl scheduler: turns site cron schedules into `CrawlSite` tasks.
//!
//! Restart-safe and duplicate-free without a lock:
//! - due-ness is derived from stored state only: a site is due when the latest
//!   cron slot at or before `now` is later than the `created_at` of its newest
//!   crawl run (or, with no run yet, than the site's `created_at`);
//! - the run id is derived from (site id, slot time) with
//!   [`CrawlRunId::derive_from`], and the task id from the run id, so two
//!   schedulers (or one restarted mid-tick) that find the same slot due produce
//!   the same run and the same task. The run is written only if absent and its
//!   `created_at` is the slot time, so both write the same document; the queue
//!   sees the same task id twice and the crawler skips a finished run.
//!
//! Missed slots (scheduler down for a day) are not back-filled: only the latest
//! one runs.
//!
//! A site has one run at a time: a slot that comes while a run is queued or
//! running is skipped (see [`active_run`]), and slots closer than the floor
//! (`crawler.min_schedule_interval_seconds`) to the last run are skipped too,
//! so a schedule stored before the floor existed cannot outrun it either.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use copyhound_core::ids::CrawlRunId;
use copyhound_core::model::{Site, Timestamp};
use copyhound_core::ports::{PageRequest, SiteStore, TaskQueue, collect_all};
use copyhound_core::{ErrorKind, Result};
use copyhound_intake::crawls::{holds_the_site, queue_run};
use tracing::{info, warn};

use crate::site::{SitePolicy, last_slot, next_slot, parse_schedule};

/// Longest sleep between ticks, so new and edited sites are picked up.
pub const MAX_TICK_INTERVAL: Duration = Duration::from_secs(60);
/// Sites listed per store request.
const LIST_PAGE_SIZE: u32 = 200;

/// Enqueues due crawls; see the module docs.
#[derive(Clone, Debug)]
pub struct Scheduler {
    sites: Arc<dyn SiteStore>,
    queue: Arc<dyn TaskQueue>,
    policy: SitePolicy,
}

pub use copyhound_intake::crawls::{active_run, scheduled_run_id};

impl Scheduler {
    /// Returns a scheduler over the site store and the queue.
    pub fn new(sites: Arc<dyn SiteStore>, queue: Arc<dyn TaskQueue>) -> Self {
        Self {
            sites,
            queue,
            policy: SitePolicy::default(),
        }
    }

    /// Uses the deployment's floor and run budget (`SitePolicy::for_crawler`).
    pub fn with_policy(mut self, policy: SitePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Enqueues a crawl of every enabled site due at `now`; returns the runs
    /// enqueued. A site that fails (bad cron, store error) is logged and skipped.
    pub async fn tick(&self, now: Timestamp) -> Result<Vec<CrawlRunId>> {
        let mut enqueued = Vec::new();
        for site in self.all_sites().await? {
            match self.tick_site(&site, now).await {
                Ok(Some(run_id)) => enqueued.push(run_id),
                Ok(None) => {}
                Err(error) if error.kind() == ErrorKind::Unavailable => return Err(error),
                Err(error) => warn!(site_id=%site.id, error=%error, "cannot schedule site"),
            }
        }
        Ok(enqueued)
    }

    /// Ticks until `shutdown` completes, sleeping until the next due slot (at
    /// most [`MAX_TICK_INTERVAL`]); tick failures are logged, never fatal.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let now = Utc::now();
            match self.tick(now).await {
                Ok(runs) if !runs.is_empty() => info!(count = runs.len(), "scheduled crawls"),
                Ok(_) => {}
                Err(error) => warn!(error=%error, "scheduler tick failed"),
            }
            let wait = match self.next_due(now).await {
                Ok(Some(next)) => (next - Utc::now())
                    .to_std()
                    .unwrap_or(Duration::ZERO)
                    .min(MAX_TICK_INTERVAL),
                _ => MAX_TICK_INTERVAL,
            };
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Returns the earliest next slot over all enabled, scheduled sites.
    pub async fn next_due(&self, now: Timestamp) -> Result<Option<Timestamp>> {
        let sites = self.all_sites().await?;
        let next = sites
            .iter()
            .filter(|site| site.enabled)
            .filter_map(|site| parse_schedule(site.schedule.as_deref()?).ok())
            .filter_map(|cron| next_slot(&cron, now))
            .min();
        Ok(next)
    }

    async fn tick_site(&self, site: &Site, now: Timestamp) -> Result<Option<CrawlRunId>> {
        let Some(schedule) = site.schedule.as_deref().filter(|_| site.enabled) else {
            return Ok(None);
        };
        let cron = parse_schedule(schedule)?;
        let Some(slot) = last_slot(&cron, now) else {
            return Ok(None);
        };
        let run_id = scheduled_run_id(&site.id, slot);
        let latest = self
            .sites
            .list_crawl_runs(
                &site.id,
                &PageRequest {
                    after: None,
                    limit: 1,
                },
            )
            .await?;
        let last = latest.items.first();
        if slot <= last.map_or(site.created_at, |run| run.created_at) {
            return Ok(None);
        }
        let floor = chrono::Duration::from_std(self.policy.min_schedule_interval)
            .unwrap_or(chrono::Duration::MAX);
        if last.is_some_and(|run| slot.signed_duration_since(run.created_at) < floor) {
            return Ok(None);
        }
        if let Some(active) = last.filter(|run| holds_the_site(run, self.policy.max_run, now)) {
            info!(site_id=%site.id, run_id=%active.id, "slot skipped: the site's last run has not finished");
            return Ok(None);
        }
        match self.sites.get_crawl_run(&run_id).await {
            Ok(_) => return Ok(None),
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        // A crash before the record leaves the slot due: the next tick queues
        // the same run (and task id) again.
        queue_run(
            self.sites.as_ref(),
            self.queue.as_ref(),
            &site.id,
            &run_id,
            slot,
        )
        .await?;
        Ok(Some(run_id))
    }

    async fn all_sites(&self) -> Result<Vec<Site>> {
        collect_all(LIST_PAGE_SIZE, |request| async move {
            self.sites.list_sites(None, &request).await
        })
        .await
    }
}
