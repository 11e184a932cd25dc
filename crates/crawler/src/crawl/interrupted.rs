//! Runs a killed process left unfinished. Storing a page and enqueueing its
//! `fingerprint_page` task are two writes to two stores; a process killed
//! between them leaves a stored page no task fingerprints, and the next crawl
//! sees it unchanged. A run still `running` when a crawl starts was cut short
//! that way (or is this run's own earlier delivery), so pages it stored last
//! are fingerprinted again even when unchanged (the handler is idempotent).

use std::collections::HashSet;

use chrono::Utc;
use copyhound_core::Result;
use copyhound_core::ids::{CrawlRunId, SiteId};
use copyhound_core::model::{CrawlRun, CrawlRunStatus};
use copyhound_core::ports::{PageRequest, PageStore, Pages, SiteStore};
use tracing::warn;

use super::outcome::push_recent_error;

/// Recent runs of a site examined at the start of a crawl.
const RECENT_RUNS: u32 = 20;

/// Returns the runs of `site_id` that were cut short: `run` itself when it
/// was already running (a redelivered task), and other runs still `running`,
/// which are marked `failed` on the way.
pub(crate) async fn interrupted_runs(
    sites: &dyn SiteStore,
    site_id: &SiteId,
    run: &CrawlRun,
) -> Result<HashSet<CrawlRunId>> {
    let mut interrupted = HashSet::new();
    if run.status == CrawlRunStatus::Running {
        interrupted.insert(run.id.clone());
    }
    let request = PageRequest {
        after: None,
        limit: RECENT_RUNS,
    };
    for mut other in sites.list_crawl_runs(site_id, &request).await?.items {
        if other.id == run.id || other.status != CrawlRunStatus::Running {
            continue;
        }
        warn!(site_id=%site_id, run_id=%other.id, "a crawl run was cut short; re-fingerprinting the pages it stored");
        interrupted.insert(other.id.clone());
        other.status = CrawlRunStatus::Failed;
        other.finished_at = Some(Utc::now());
        push_recent_error(
            &mut other.recent_errors,
            None,
            "interrupted: the crawling process stopped before the run finished".into(),
        );
        sites.put_crawl_run(&other).await?;
    }
    Ok(interrupted)
}

/// URLs of the pages of `site_id` that `run_id` stored: what an interrupted
/// delivery of the run got done. One pass over the site's pages, only when a
/// run resumes.
pub(crate) async fn stored_by(
    pages: &dyn PageStore,
    site_id: &SiteId,
    run_id: &CrawlRunId,
) -> Result<HashSet<String>> {
    let mut stored = HashSet::new();
    let mut listing = Pages::new(500);
    while let Some(request) = listing.next_request() {
        for page in listing.advance(pages.list_pages(site_id, &request).await?)? {
            if page.fetch.crawl_run_id.as_ref() == Some(run_id) {
                stored.insert(page.url);
            }
        }
    }
    Ok(stored)
}
