//! Fingerprinting handlers: turn a chapter or a page into a stored fingerprint
//! record and index entries. Work is keyed on (owner, content hash, version)
//! and the title: a record that already exists for the same content, whose
//! anchors are still those of the text and its current title, is not
//! recomputed, so a re-delivered task only re-does the cheap, idempotent index
//! insert, and a retitled chapter is fingerprinted anew (its old title's
//! anchors leave the record and the index). A record of an older
//! [`FINGERPRINT_VERSION`] is never reused: the owner is fingerprinted anew.

use std::sync::Arc;

use chrono::Utc;
use copyhound_core::ids::{PageId, WorkId};
use copyhound_core::model::{
    Chapter, FingerprintOwner, FingerprintRecord, FingerprintStatus, PassageRecord, Task, TaskKind,
};
use copyhound_core::stages::{Stage, time, time_async};
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_fingerprint::{
    DocumentFingerprint, FINGERPRINT_VERSION, Fingerprinter, NormalizedText,
};
use tracing::warn;

use crate::chapters::ChapterCache;
use crate::compare;
use crate::context::{MatcherPorts, page_at};

/// Fingerprints a stored page at `content_sha256`, indexes it, then compares
/// it in the same task: the page and its record are at hand, and a separate
/// comparison task would cost three queue commits and two store reads per
/// page. A new record is stored with the comparison's matches, usually in
/// the same commit of the embedded store (one sync, not two); until then a
/// back-fill that finds the page in the index waits for it (`compare_page`).
/// A failed comparison fails the task; its retry fingerprints again and finds
/// the index entries in place (idempotent).
pub(crate) async fn fingerprint_page(
    ports: &MatcherPorts,
    chapters: &Arc<ChapterCache>,
    page_id: &PageId,
    content_sha256: &str,
) -> Result<()> {
    let Some(page) = page_at(ports, page_id, content_sha256).await? else {
        return Ok(());
    };
    let owner = FingerprintOwner::Page {
        page_id: page_id.clone(),
    };
    let (record, normalized) =
        record_for(ports, owner, page.text.clone(), &page.title, content_sha256).await?;
    index_record(ports, &record).await?;
    // A computed record (normalized text at hand) is not stored yet.
    let unstored = normalized.is_some().then_some(&record);
    compare::compare_fingerprinted(ports, chapters, &page, &record, normalized, unstored).await
}

/// Fingerprints and indexes every chapter of a work, then enqueues its back-fill.
pub(crate) async fn fingerprint_work(ports: &MatcherPorts, work_id: &WorkId) -> Result<()> {
    let chapters = ports.works.list_chapters(work_id).await?;
    for chapter in chapters {
        fingerprint_chapter(ports, chapter).await?;
    }
    let backfill = TaskKind::BackfillWork {
        work_id: work_id.clone(),
    };
    ports
        .queue
        .enqueue(vec![Task::new(backfill, Utc::now())])
        .await
}

async fn fingerprint_chapter(ports: &MatcherPorts, chapter: Chapter) -> Result<()> {
    let owner = FingerprintOwner::Chapter {
        work_id: chapter.work_id.clone(),
        chapter_id: chapter.id.clone(),
    };
    let (record, computed) = record_for(
        ports,
        owner,
        chapter.text,
        &chapter.title,
        &chapter.content_sha256,
    )
    .await?;
    if computed.is_some() {
        time_async(
            Stage::StoreWrite,
            ports.fingerprints.put_fingerprint(&record),
        )
        .await?;
    }
    index_record(ports, &record).await?;
    let status = FingerprintStatus::Indexed {
        version: FINGERPRINT_VERSION,
    };
    ports
        .works
        .set_fingerprint_status(&chapter.work_id, &chapter.id, &status)
        .await
}

/// Returns the stored record for this content, or computes it (not stored:
/// the caller stores it) and then also returns the normalized text, which
/// comparing needs too.
async fn record_for(
    ports: &MatcherPorts,
    owner: FingerprintOwner,
    text: String,
    title: &str,
    content_sha256: &str,
) -> Result<(FingerprintRecord, Option<NormalizedText>)> {
    match ports
        .fingerprints
        .get_fingerprint(&owner, FINGERPRINT_VERSION)
        .await
    {
        Ok(existing)
            if existing.content_sha256 == content_sha256
                && anchors_hold(ports, &text, title, &existing.anchors).await? =>
        {
            return Ok((existing, None));
        }
        Ok(_) => {}
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let max_input_bytes = ports.fingerprinter.config().normalize.max_input_bytes;
    if text.len() > max_input_bytes {
        warn!(owner = %owner.index_key(), bytes = text.len(), max_input_bytes,
            "text over the fingerprint input budget; only its start is fingerprinted");
    }
    let fingerprinter = ports.fingerprinter.clone();
    let (fingerprint, normalized) =
        compute_normalized(fingerprinter, text, title.to_string()).await?;
    Ok((
        to_record(owner, content_sha256, fingerprint),
        Some(normalized),
    ))
}

/// Whether a stored record of the same text still has the anchors the text
/// and `title` give. The content hash is of the text alone, and the title's
/// anchors are part of the record: a chapter retitled with its text unchanged
/// must lose the old title's anchors and gain the new one's. Only the anchors
/// are computed (normalization and syllables, no words, DNA or passages).
async fn anchors_hold(
    ports: &MatcherPorts,
    text: &str,
    title: &str,
    stored: &[u64],
) -> Result<bool> {
    let fingerprinter = ports.fingerprinter.clone();
    let (text, title) = (text.to_string(), title.to_string());
    let anchors = tokio::task::spawn_blocking(move || {
        time(Stage::Fingerprint, || {
            fingerprinter.titled_anchors(&fingerprinter.normalize(&text), &title)
        })
    })
    .await
    .map_err(|error| Error::internal(format!("fingerprinting panicked: {error}")))?;
    Ok(anchors == stored)
}

/// Runs the CPU-bound fingerprinting off the async threads; the title's
/// anchors join the text's. Returns the normalized text too, which comparing
/// needs.
async fn compute_normalized(
    fingerprinter: Arc<Fingerprinter>,
    text: String,
    title: String,
) -> Result<(DocumentFingerprint, NormalizedText)> {
    tokio::task::spawn_blocking(move || {
        time(Stage::Fingerprint, || {
            let normalized = fingerprinter.normalize(&text);
            let fingerprint = fingerprinter.fingerprint_titled(&normalized, &title);
            (fingerprint, normalized)
        })
    })
    .await
    .map_err(|error| Error::internal(format!("fingerprinting panicked: {error}")))
}

/// Replaces the owner's index entries with the record's.
async fn index_record(ports: &MatcherPorts, record: &FingerprintRecord) -> Result<()> {
    time_async(Stage::IndexWrite, async {
        ports
            .index
            .replace_owners(&[record.owner.index_key()], &record.index_entries())
            .await
    })
    .await
}

/// Returns the stored form of a computed fingerprint.
pub fn to_record(
    owner: FingerprintOwner,
    content_sha256: &str,
    fingerprint: DocumentFingerprint,
) -> FingerprintRecord {
    FingerprintRecord {
        owner,
        version: fingerprint.version,
        content_sha256: content_sha256.to_string(),
        simhash: fingerprint.simhash,
        shingle_simhash: fingerprint.shingle_simhash,
        dna: fingerprint.dna,
        passages: fingerprint
            .passages
            .into_iter()
            .map(|passage| PassageRecord {
                ordinal: passage.ordinal,
                start: passage.start,
                end: passage.end,
                simhash: passage.simhash,
                dna: passage.dna,
            })
            .collect(),
        anchors: fingerprint.anchors,
        normalized_chars: fingerprint.normalized_chars,
        created_at: Utc::now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copyhound_fingerprint::FingerprintConfig;

    #[tokio::test]
    async fn a_title_joins_the_text_anchors() {
        let fingerprinter = Arc::new(Fingerprinter::new(FingerprintConfig::default()).unwrap());
        let text = "话说天下大势，分久必合，合久必分。".repeat(20);
        let (untitled, _) = compute_normalized(fingerprinter.clone(), text.clone(), String::new())
            .await
            .unwrap();
        let (titled, _) = compute_normalized(fingerprinter.clone(), text, "卷一·成仙_某站".into())
            .await
            .unwrap();
        let from_title = fingerprinter.title_anchors("卷一·成仙");
        assert!(!from_title.is_empty());
        assert!(from_title.iter().all(|a| titled.anchors.contains(a)));
        assert!(from_title.iter().all(|a| !untitled.anchors.contains(a)));
        assert!(titled.anchors.windows(2).all(|w| w[0] < w[1]));
        assert!(untitled.anchors.iter().all(|a| titled.anchors.contains(a)));
    }
}
