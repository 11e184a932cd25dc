//! Start-up recovery of the registration outbox.
//!
//! A registration stores its chapters (`Pending`), then its work record (the
//! commit marker), then enqueues `fingerprint_work` in the task queue, which is
//! another store: a process killed before the enqueue leaves a committed work
//! that no task will ever fingerprint. The chapters still `Pending` are that
//! outbox; every node start calls [`requeue_pending_works`] to enqueue
//! `fingerprint_work` for their works. The queue does not deduplicate, but the
//! handler is idempotent (stored records are reused, index inserts replace), so
//! a work whose task was not lost is only fingerprinted twice.
//!
//! The same scan upgrades fingerprints after a [`FINGERPRINT_VERSION`] bump:
//! a chapter indexed under an older version has no record of this one (the
//! handler never reuses an older version's), so its work is enqueued too, and
//! its chapters are fingerprinted, indexed and back-filled anew.

use chrono::Utc;
use copyhound_core::Result;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{FingerprintStatus, Task, TaskKind};
use copyhound_core::ports::{Pages, PublisherStore, TaskQueue, WorkStore};
use copyhound_fingerprint::FINGERPRINT_VERSION;

/// Publishers and works read per page while scanning.
const SCAN_PAGE: u32 = 200;

/// What [`requeue_pending_works`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequeueOutcome {
    /// Works looked at.
    pub works: u64,
    /// Works with pending or outdated chapters, whose fingerprinting was
    /// enqueued.
    pub requeued: u64,
    /// Of those, works with a chapter indexed under an older
    /// [`FINGERPRINT_VERSION`] (re-fingerprinted after a version bump).
    pub outdated: u64,
}

/// Whether a chapter's fingerprinting is to be enqueued: it is still
/// `Pending`, or indexed under an older [`FINGERPRINT_VERSION`].
fn indexed_under_older_version(status: &FingerprintStatus) -> bool {
    matches!(status, FingerprintStatus::Indexed { version } if *version < FINGERPRINT_VERSION)
}

/// Enqueues `fingerprint_work` for every work of every publisher that has a
/// chapter still `Pending` or indexed under an older [`FINGERPRINT_VERSION`];
/// one enqueue per page of works.
pub async fn requeue_pending_works(
    publishers: &dyn PublisherStore,
    works: &dyn WorkStore,
    queue: &dyn TaskQueue,
) -> Result<RequeueOutcome> {
    let mut outcome = RequeueOutcome::default();
    let mut pages = Pages::new(SCAN_PAGE);
    while let Some(request) = pages.next_request() {
        for publisher in pages.advance(publishers.list_publishers(&request).await?)? {
            requeue_works_of(&publisher.id, works, queue, &mut outcome).await?;
        }
    }
    if outcome.requeued > 0 {
        tracing::info!(
            works = outcome.works,
            requeued = outcome.requeued,
            outdated = outcome.outdated,
            version = FINGERPRINT_VERSION,
            "re-enqueued fingerprinting of works with pending or outdated chapters"
        );
    }
    Ok(outcome)
}

async fn requeue_works_of(
    publisher_id: &PublisherId,
    works: &dyn WorkStore,
    queue: &dyn TaskQueue,
    outcome: &mut RequeueOutcome,
) -> Result<()> {
    let mut pages = Pages::new(SCAN_PAGE);
    while let Some(request) = pages.next_request() {
        let batch = pages.advance(works.list_works(publisher_id, &request).await?)?;
        let mut tasks = Vec::new();
        for work in &batch {
            outcome.works += 1;
            let chapters = works.list_chapters(&work.id).await?;
            let pending = chapters
                .iter()
                .any(|chapter| chapter.fingerprint_status == FingerprintStatus::Pending);
            let stale = chapters
                .iter()
                .any(|chapter| indexed_under_older_version(&chapter.fingerprint_status));
            if stale {
                outcome.outdated += 1;
            }
            if pending || stale {
                let kind = TaskKind::FingerprintWork {
                    work_id: work.id.clone(),
                };
                tasks.push(Task::new(kind, Utc::now()));
            }
        }
        outcome.requeued += tasks.len() as u64;
        if !tasks.is_empty() {
            queue.enqueue(tasks).await?;
        }
    }
    Ok(())
}
