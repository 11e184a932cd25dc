//! Durability of the in-memory index: the write-ahead log survives a process
//! that never snapshots (kill -9), a torn tail is dropped, a corrupt middle is
//! refused, and replaying a log over a snapshot that holds it converges.

use std::collections::BTreeMap;
use std::path::Path;

use super::state::KIND_COUNT;
use super::wal::{LOG_FILE, LogOp, encode_insert, encode_removal, frame, parse_records};
use super::*;
use crate::testsuite::{random_entries, seeded};

/// (owner, kind slot, ordinal) -> fingerprint: everything an index holds.
type Contents = BTreeMap<(String, usize, u32), u64>;

async fn contents(index: &MemoryFingerprintIndex) -> Contents {
    index.compact().await.unwrap();
    let run = index.current().single_base().unwrap();
    let mut out = Contents::new();
    for slot in 0..KIND_COUNT {
        for (owner, ordinal, fingerprint) in run.base.raw_entries(slot) {
            let name = run.base.owners.name(owner).to_owned();
            out.insert((name, slot, ordinal), fingerprint);
        }
    }
    out
}

/// Opens an index as a fresh process would, after the last one died without a snapshot.
async fn reopen(dir: &Path) -> MemoryFingerprintIndex {
    MemoryFingerprintIndex::open(dir, 3).await.unwrap()
}

/// A mix of writes: inserts across kinds, replacements, removals, re-inserts.
async fn write_history(index: &MemoryFingerprintIndex, seed: u64) {
    let mut rng = seeded(seed);
    let passages = random_entries(&mut rng, EntryKind::Passage, 3_000, 10);
    let anchors = random_entries(&mut rng, EntryKind::Anchor, 500, 5);
    index.insert(&passages[..2_000]).await.unwrap();
    index.insert(&anchors).await.unwrap();
    for chunk in passages[2_000..].chunks(97) {
        index.insert(chunk).await.unwrap();
    }
    let replaced = random_entries(&mut rng, EntryKind::Passage, 30, 10);
    index.insert(&replaced).await.unwrap();
    let removed: Vec<String> = (3..40).map(|owner| format!("p:o{owner:08}")).collect();
    index.remove_owners(&removed).await.unwrap();
    index.insert(&passages[50..60]).await.unwrap();
    // A page fingerprinted anew: removal and insert in one logged record.
    let renewed = random_entries(&mut rng, EntryKind::Passage, 4, 4);
    index
        .replace_owners(&["p:o00000000".to_owned()], &renewed)
        .await
        .unwrap();
}

#[tokio::test]
async fn acknowledged_writes_survive_a_process_that_never_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let index = reopen(dir.path()).await;
    write_history(&index, 21).await;
    let expected = contents(&index).await;
    assert!(expected.len() > 2_500, "{}", expected.len());
    drop(index); // no snapshot: what kill -9 leaves
    assert!(!dir.path().join(SNAPSHOT_FILE).try_exists().unwrap());
    let reopened = reopen(dir.path()).await;
    assert_eq!(contents(&reopened).await, expected);
    // Writes after the replay append to the same log.
    reopened
        .remove_owners(&["p:o00000050".to_owned()])
        .await
        .unwrap();
    let expected = contents(&reopened).await;
    drop(reopened);
    assert_eq!(contents(&reopen(dir.path()).await).await, expected);
}

#[tokio::test]
async fn snapshot_resets_the_log_and_later_writes_replay_on_top() {
    let dir = tempfile::tempdir().unwrap();
    let index = reopen(dir.path()).await;
    write_history(&index, 22).await;
    index.snapshot().await.unwrap();
    let log = dir.path().join(LOG_FILE);
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 12, "header only");
    let more = random_entries(&mut seeded(5), EntryKind::Dna, 200, 4);
    index.insert(&more).await.unwrap();
    index
        .remove_owners(&["p:o00000001".to_owned()])
        .await
        .unwrap();
    let expected = contents(&index).await;
    drop(index);
    assert_eq!(contents(&reopen(dir.path()).await).await, expected);
}

#[tokio::test]
async fn replaying_a_log_the_snapshot_already_holds_converges() {
    let dir = tempfile::tempdir().unwrap();
    let index = reopen(dir.path()).await;
    // Remove then re-insert an owner with other values, and replace entries:
    // the orders a non-idempotent replay would get wrong.
    write_history(&index, 23).await;
    let owner = "p:o00000007".to_owned();
    index
        .remove_owners(std::slice::from_ref(&owner))
        .await
        .unwrap();
    let reinserted: Vec<IndexEntry> = (0..3)
        .map(|ordinal| IndexEntry {
            owner: owner.clone(),
            kind: EntryKind::Passage,
            ordinal,
            fingerprint: 0xabcd_0000 + u64::from(ordinal),
        })
        .collect();
    index.insert(&reinserted).await.unwrap();
    let log = dir.path().join(LOG_FILE);
    let full_log = std::fs::read(&log).unwrap();
    index.snapshot().await.unwrap();
    let expected = contents(&index).await;
    drop(index);
    // A crash between the snapshot's rename and the log reset.
    std::fs::write(&log, &full_log).unwrap();
    let replayed = reopen(dir.path()).await;
    assert_eq!(contents(&replayed).await, expected);
    assert_eq!(
        replayed.stats().await.unwrap().entries,
        expected.len() as u64
    );
}

#[tokio::test]
async fn a_torn_tail_is_dropped_and_the_log_stays_appendable() {
    let dir = tempfile::tempdir().unwrap();
    let index = reopen(dir.path()).await;
    write_history(&index, 24).await;
    let expected = contents(&index).await;
    drop(index);
    let log = dir.path().join(LOG_FILE);
    let good = std::fs::read(&log).unwrap();
    let extra = encode_insert(&random_entries(&mut seeded(6), EntryKind::Passage, 50, 5)).unwrap();
    // Every cut of an append that never returned, and a zero-filled tail.
    let mut tails: Vec<Vec<u8>> = (1..extra.len())
        .step_by(7)
        .map(|cut| extra[..cut].to_vec())
        .collect();
    let mut flipped = extra.clone();
    *flipped.last_mut().unwrap() ^= 0x40;
    tails.push(flipped);
    tails.push(vec![0; 4096]);
    for tail in tails {
        let mut bytes = good.clone();
        bytes.extend_from_slice(&tail);
        std::fs::write(&log, &bytes).unwrap();
        let reopened = reopen(dir.path()).await;
        assert_eq!(
            contents(&reopened).await,
            expected,
            "tail of {}",
            tail.len()
        );
        assert_eq!(std::fs::read(&log).unwrap(), good, "the torn tail is cut");
    }
    // A write after the cut lands after the valid records.
    let reopened = reopen(dir.path()).await;
    reopened
        .remove_owners(&["p:o00000000".to_owned()])
        .await
        .unwrap();
    let after = contents(&reopened).await;
    drop(reopened);
    assert_eq!(contents(&reopen(dir.path()).await).await, after);
}

#[tokio::test]
async fn a_corrupt_record_in_the_middle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = reopen(dir.path()).await;
    index
        .insert(&random_entries(&mut seeded(7), EntryKind::Passage, 40, 4))
        .await
        .unwrap();
    index
        .remove_owners(&["p:o00000001".to_owned()])
        .await
        .unwrap();
    drop(index);
    let log = dir.path().join(LOG_FILE);
    let good = std::fs::read(&log).unwrap();
    for position in [12 + 4, 12 + 12 + 3, 12 + 12 + 100] {
        let mut bad = good.clone();
        bad[position] ^= 0x01;
        std::fs::write(&log, &bad).unwrap();
        let error = MemoryFingerprintIndex::open(dir.path(), 3)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Corrupt, "{error}");
    }
    for header in [
        b"CHIDXSNP\x01\0\0\0".to_vec(),
        b"CHIDXWAL\x09\0\0\0".to_vec(),
    ] {
        let mut bad = good.clone();
        bad[..12].copy_from_slice(&header);
        std::fs::write(&log, &bad).unwrap();
        let error = MemoryFingerprintIndex::open(dir.path(), 3)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Corrupt, "{error}");
    }
    // A log whose creation was cut short is started again.
    std::fs::write(&log, &good[..5]).unwrap();
    let empty = reopen(dir.path()).await;
    assert_eq!(empty.stats().await.unwrap().entries, 0);
}

#[test]
fn records_round_trip_and_parse_stops_at_the_valid_prefix() {
    let entries = random_entries(&mut seeded(8), EntryKind::Anchor, 30, 7);
    let owners = vec!["p:o00000001".to_owned(), "c:w/c1".to_owned()];
    let insert = encode_insert(&entries).unwrap();
    let removal = encode_removal(&owners).unwrap();
    // A group commit's record, then a record of one write.
    let first = frame(&[insert.clone(), removal.clone()]).unwrap();
    let mut bytes = first.clone();
    bytes.extend(frame(&[insert]).unwrap());
    let parsed = parse_records(&bytes).unwrap();
    assert_eq!(
        parsed.ops,
        [
            LogOp::Insert(entries.clone()),
            LogOp::RemoveOwners(owners.clone()),
            LogOp::Insert(entries.clone())
        ]
    );
    assert_eq!(parsed.valid_bytes, bytes.len() as u64);
    assert_eq!(parsed.torn_bytes, 0);
    let cut = parse_records(&bytes[..bytes.len() - 1]).unwrap();
    assert_eq!(
        cut.ops,
        [LogOp::Insert(entries), LogOp::RemoveOwners(owners)]
    );
    assert_eq!(cut.valid_bytes, first.len() as u64);
    assert_eq!(cut.torn_bytes, (bytes.len() - 1 - first.len()) as u64);
}

#[tokio::test]
async fn concurrent_writers_share_syncs_and_all_survive() {
    let dir = tempfile::tempdir().unwrap();
    let index = Arc::new(reopen(dir.path()).await);
    let entries = random_entries(&mut seeded(11), EntryKind::Passage, 8_000, 4);
    let mut writers = tokio::task::JoinSet::new();
    for (writer, part) in entries.chunks(1_000).enumerate() {
        let index = Arc::clone(&index);
        let part = part.to_vec();
        writers.spawn(async move {
            for chunk in part.chunks(25) {
                index.insert(chunk).await.unwrap();
            }
            let owner = format!("p:o{:08}", writer * 250);
            index.remove_owners(&[owner]).await.unwrap();
        });
    }
    while let Some(done) = writers.join_next().await {
        done.unwrap();
    }
    let expected = contents(&index).await;
    assert_eq!(expected.len(), 8_000 - 8 * 4);
    drop(index);
    assert_eq!(contents(&reopen(dir.path()).await).await, expected);
}

#[tokio::test]
async fn the_log_is_folded_into_a_snapshot_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = reopen(dir.path()).await;
    index.durable.as_mut().unwrap().log_snapshot_min_bytes = 64 * 1024;
    let entries = random_entries(&mut seeded(10), EntryKind::Passage, 20_000, 8);
    for chunk in entries.chunks(400) {
        index.insert(chunk).await.unwrap();
    }
    let log = dir.path().join(LOG_FILE);
    let snapshot = std::fs::metadata(dir.path().join(SNAPSHOT_FILE)).unwrap();
    let log_bytes = std::fs::metadata(&log).unwrap().len();
    assert!(
        log_bytes <= snapshot.len().max(64 * 1024) + 400 * 40,
        "log {log_bytes} B, snapshot {} B",
        snapshot.len()
    );
    let expected = contents(&index).await;
    assert_eq!(expected.len(), 20_000);
    drop(index);
    assert_eq!(contents(&reopen(dir.path()).await).await, expected);
}
