//! Back-fill: a work registered today must find yesterday's piracy. Pages are in
//! the same index as chapters, so the work's own fingerprints find the pages worth
//! comparing — no rescan of every stored page. Lookups are bounded per chapter
//! ([`crate::lookup`]).

use std::collections::BTreeSet;

use chrono::Utc;
use copyhound_core::ids::{PageId, WorkId};
use copyhound_core::model::{FingerprintOwner, FingerprintRecord, Task, TaskKind, dna_index_key};
use copyhound_core::ports::{EntryKind, IndexHit};
use copyhound_core::{ErrorKind, Result};
use copyhound_fingerprint::FINGERPRINT_VERSION;
use tracing::info;

use crate::context::MatcherPorts;
use crate::lookup::{HitBudget, distinct, for_each_hits};

/// Enqueues a comparison of every stored page the work's fingerprints hit.
pub(crate) async fn backfill_work(ports: &MatcherPorts, work_id: &WorkId) -> Result<()> {
    let chapters = ports.works.list_chapters(work_id).await?;
    let max_distance = ports.index.max_distance();
    let mut pages: BTreeSet<PageId> = BTreeSet::new();
    for chapter in &chapters {
        let owner = FingerprintOwner::Chapter {
            work_id: work_id.clone(),
            chapter_id: chapter.id.clone(),
        };
        let record = match ports
            .fingerprints
            .get_fingerprint(&owner, FINGERPRINT_VERSION)
            .await
        {
            Ok(record) => record,
            Err(error) if error.kind() == ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        pages_hit(ports, &record, max_distance, &mut pages).await?;
    }
    let mut tasks = Vec::new();
    for page_id in pages {
        match ports.pages.get_page(&page_id).await {
            Ok(page) => tasks.push(Task::new(
                TaskKind::ComparePage {
                    page_id,
                    content_sha256: page.content_sha256,
                },
                Utc::now(),
            )),
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    info!(work_id = %work_id, pages = tasks.len(), "back-fill comparisons queued");
    if tasks.is_empty() {
        return Ok(());
    }
    ports.queue.enqueue(tasks).await
}

/// Adds the pages any of a chapter's fingerprints hit to `pages`.
async fn pages_hit(
    ports: &MatcherPorts,
    record: &FingerprintRecord,
    max_distance: u32,
    pages: &mut BTreeSet<PageId>,
) -> Result<()> {
    let index = ports.index.as_ref();
    let mut budget = HitBudget::per_task();
    let mut collect = |hits: &[IndexHit]| {
        for hit in hits {
            if let Some(FingerprintOwner::Page { page_id }) =
                FingerprintOwner::from_index_key(&hit.entry.owner)
            {
                pages.insert(page_id);
            }
        }
    };
    let lookups = [
        (
            EntryKind::Document,
            distinct([record.simhash, record.shingle_simhash]),
            max_distance,
        ),
        (
            EntryKind::Passage,
            distinct(record.passages.iter().map(|passage| passage.simhash)),
            max_distance,
        ),
        (
            EntryKind::Dna,
            distinct(record.dna.iter().map(|code| dna_index_key(*code))),
            0,
        ),
        (
            EntryKind::Anchor,
            distinct(record.anchors.iter().copied()),
            0,
        ),
    ];
    for (kind, fingerprints, distance) in lookups {
        for_each_hits(
            index,
            kind,
            &fingerprints,
            distance,
            FingerprintOwner::PAGE_KEY_PREFIX,
            &mut budget,
            &mut collect,
        )
        .await?;
    }
    Ok(())
}
