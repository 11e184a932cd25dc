//! Back-fill: a work registered today must find yesterday's piracy. Pages are in
//! the same index as chapters, so the work's own fingerprints find the pages worth
//! comparing — no rescan of every stored page.

use std::collections::BTreeSet;

use chrono::Utc;
use copyhound_core::ids::{PageId, WorkId};
use copyhound_core::model::{FingerprintOwner, Task, TaskKind, dna_index_key};
use copyhound_core::ports::EntryKind;
use copyhound_core::{ErrorKind, Result};
use copyhound_fingerprint::FINGERPRINT_VERSION;
use tracing::info;

use crate::context::MatcherPorts;

/// Hits past which a DNA code or anchor is too common to nominate pages.
const COMMON_CODE_HITS: usize = 256;

/// Enqueues a comparison of every stored page the work's fingerprints hit.
pub(crate) async fn backfill_work(ports: &MatcherPorts, work_id: &WorkId) -> Result<()> {
    let chapters = ports.works.list_chapters(work_id).await?;
    let max_distance = ports.index.max_distance().min(3);
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
        let documents = [record.simhash, record.shingle_simhash];
        let passages: Vec<u64> = record
            .passages
            .iter()
            .map(|passage| passage.simhash)
            .collect();
        let mut codes: Vec<u64> = record.dna.iter().map(|code| dna_index_key(*code)).collect();
        codes.sort_unstable();
        codes.dedup();
        let hits = [
            ports
                .index
                .query_batch(EntryKind::Document, &documents, max_distance)
                .await?,
            ports
                .index
                .query_batch(EntryKind::Passage, &passages, max_distance)
                .await?,
        ];
        // Common codes (hitting many entries) nominate nothing; the index stops early.
        let shared = [
            ports
                .index
                .query_batch_capped(EntryKind::Dna, &codes, 0, COMMON_CODE_HITS)
                .await?,
            ports
                .index
                .query_batch_capped(EntryKind::Anchor, &record.anchors, 0, COMMON_CODE_HITS)
                .await?,
        ];
        let shared_hits = shared.iter().flatten().flatten().flatten();
        for hit in hits.iter().flatten().flatten().chain(shared_hits) {
            if let Some(FingerprintOwner::Page { page_id }) =
                FingerprintOwner::from_index_key(&hit.entry.owner)
            {
                pages.insert(page_id);
            }
        }
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
