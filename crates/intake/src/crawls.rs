//! Queuing a crawl run: one function for the API, the console, the scheduler
//! and `eval`. A site has one run at a time; overlapping runs fetch every
//! page twice.
//!
//! Write order: the `CrawlSite` task first, the `Queued` run record second.
//! A crash or a store failure in between leaves a task without its record,
//! and the crawler creates the record when the task runs (the run id is in
//! the task), so no run is ever stored that no task will execute. The task id
//! derives from the run id, so enqueueing the same run again is a no-op, and a
//! crawl is never run twice for one run.

use std::time::Duration;

use chrono::Utc;
use copyhound_core::ids::{CrawlRunId, SiteId};
use copyhound_core::model::{CrawlRun, RunScope, Site, Task, TaskKind, Timestamp};
use copyhound_core::ports::{PageRequest, SiteStore, TaskQueue};
use copyhound_core::{Error, ErrorKind, Result};

/// The run of a site that is still queued or running, if any. A run created
/// longer ago than `max_run` and an hour was abandoned (its worker died and
/// the queue gave its task up) and no longer counts.
pub async fn active_run(
    sites: &dyn SiteStore,
    site_id: &SiteId,
    max_run: Duration,
    now: Timestamp,
) -> Result<Option<CrawlRun>> {
    let latest = sites
        .list_crawl_runs(
            site_id,
            &PageRequest {
                after: None,
                limit: 1,
            },
        )
        .await?;
    Ok(latest
        .items
        .into_iter()
        .next()
        .filter(|run| holds_the_site(run, max_run, now)))
}

/// Whether `run` still holds its site: queued or running, and younger than
/// `max_run` and an hour (older, it was abandoned).
pub fn holds_the_site(run: &CrawlRun, max_run: Duration, now: Timestamp) -> bool {
    let stale_after = chrono::Duration::from_std(max_run + Duration::from_secs(3600))
        .unwrap_or(chrono::Duration::MAX);
    !run.status.is_finished() && now.signed_duration_since(run.created_at) < stale_after
}

/// Returns the run id of a site's scheduled slot; equal inputs give equal ids.
pub fn scheduled_run_id(site_id: &SiteId, slot: Timestamp) -> CrawlRunId {
    CrawlRunId::derive_from(&format!("scheduled/{site_id}/{}", slot.timestamp()))
}

/// Enqueues the crawl of `run_id` and records it as queued at `at`, in the
/// order the module docs give. The caller has checked that the site may run.
pub async fn queue_run(
    sites: &dyn SiteStore,
    queue: &dyn TaskQueue,
    site_id: &SiteId,
    run_id: &CrawlRunId,
    at: Timestamp,
) -> Result<CrawlRun> {
    queue_with_scope(sites, queue, site_id, run_id, at, None).await
}

/// The same for a targeted run (a release burst, quiet watching): the run
/// keeps its scope, which the crawler reads when it starts; the task carries
/// it too, so a run whose record was lost still crawls only its scope.
pub async fn queue_scoped_run(
    sites: &dyn SiteStore,
    queue: &dyn TaskQueue,
    site_id: &SiteId,
    run_id: &CrawlRunId,
    at: Timestamp,
    scope: RunScope,
) -> Result<CrawlRun> {
    queue_with_scope(sites, queue, site_id, run_id, at, Some(scope)).await
}

async fn queue_with_scope(
    sites: &dyn SiteStore,
    queue: &dyn TaskQueue,
    site_id: &SiteId,
    run_id: &CrawlRunId,
    at: Timestamp,
    scope: Option<RunScope>,
) -> Result<CrawlRun> {
    let task = Task::new(
        TaskKind::CrawlSite {
            site_id: site_id.clone(),
            run_id: run_id.clone(),
            scope: scope.clone(),
        },
        at,
    );
    queue.enqueue(vec![task]).await?;
    let mut run = CrawlRun::queued(run_id.clone(), site_id.clone(), at);
    run.scope = scope;
    record_queued(sites, run).await
}

async fn record_queued(sites: &dyn SiteStore, run: CrawlRun) -> Result<CrawlRun> {
    let run_id = &run.id;
    if let Err(error) = sites.put_crawl_run(&run).await {
        // The task is queued and will record its run when it starts.
        tracing::warn!(run_id = %run_id, error = %error, "crawl queued; its run is recorded when it starts");
    }
    Ok(run)
}

/// Starts a crawl of an enabled site now, unless a run of it is queued or
/// running (`Conflict` naming it).
pub async fn crawl_now(
    sites: &dyn SiteStore,
    queue: &dyn TaskQueue,
    site: &Site,
    max_run: Duration,
) -> Result<CrawlRun> {
    if !site.enabled {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("site {} is disabled; enable it first", site.id),
        ));
    }
    let now = Utc::now();
    if let Some(active) = active_run(sites, &site.id, max_run, now).await? {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "site {} has a crawl {} ({}); a new one can start when it ends",
                site.id,
                active.status.as_str(),
                active.id
            ),
        ));
    }
    queue_run(sites, queue, &site.id, &CrawlRunId::generate(), now).await
}
