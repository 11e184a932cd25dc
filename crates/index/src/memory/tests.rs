//! Snapshot, compaction and rebuild behaviour of the in-memory index.

use std::sync::Mutex;

use async_trait::async_trait;

use copyhound_core::ids::PageId;
use copyhound_core::model::{FingerprintOwner, FingerprintRecord, PassageRecord};
use copyhound_core::ports::{FingerprintStore, PageRequest, Paged};

use super::*;
use crate::rebuild::rebuild_in_batches;
use crate::testsuite::{random_entries, seeded, sort_hits};
use crate::{entries_for_record, rebuild_index};

async fn all_hits(index: &MemoryFingerprintIndex, entries: &[IndexEntry]) -> Vec<Vec<IndexHit>> {
    let queries: Vec<u64> = entries.iter().map(|entry| entry.fingerprint).collect();
    let mut answers = index
        .query_batch(EntryKind::Passage, &queries, 3)
        .await
        .unwrap();
    answers.iter_mut().for_each(|hits| sort_hits(hits));
    answers
}

#[tokio::test]
async fn snapshot_round_trips_with_delta_and_removals() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemoryFingerprintIndex::open(dir.path(), 3).await.unwrap();
    let mut rng = seeded(3);
    let entries = random_entries(&mut rng, EntryKind::Passage, 10_000, 8);
    index.insert(&entries).await.unwrap();
    index.insert(&entries[..100]).await.unwrap();
    index
        .remove_owners(&["p:o00000002".to_owned()])
        .await
        .unwrap();
    let before = all_hits(&index, &entries).await;
    let path = index.snapshot().await.unwrap();
    assert!(path.ends_with(SNAPSHOT_FILE));
    let reopened = MemoryFingerprintIndex::open(dir.path(), 3).await.unwrap();
    assert_eq!(all_hits(&reopened, &entries).await, before);
    assert_eq!(reopened.stats().await.unwrap().entries, 10_000 - 8);
    let wider = MemoryFingerprintIndex::open(dir.path(), 5).await.unwrap();
    assert_eq!(
        wider
            .query(EntryKind::Passage, entries[0].fingerprint, 5)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn corrupt_snapshots_are_refused_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemoryFingerprintIndex::open(dir.path(), 3).await.unwrap();
    index
        .insert(&random_entries(&mut seeded(4), EntryKind::Dna, 100, 4))
        .await
        .unwrap();
    let path = index.snapshot().await.unwrap();
    let good = std::fs::read(&path).unwrap();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for bad in [
        flipped,
        good[..good.len() / 2].to_vec(),
        b"not a snapshot".to_vec(),
        Vec::new(),
    ] {
        std::fs::write(&path, &bad).unwrap();
        let error = MemoryFingerprintIndex::open(dir.path(), 3)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Corrupt, "{error}");
    }
    assert_eq!(
        MemoryFingerprintIndex::new(3)
            .unwrap()
            .snapshot()
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Config
    );
}

#[tokio::test]
async fn small_writes_stay_in_the_delta_until_compaction() {
    let index = MemoryFingerprintIndex::new(3).unwrap();
    let entries = random_entries(&mut seeded(9), EntryKind::Passage, 5_000, 5);
    index.insert(&entries[..3_000]).await.unwrap();
    for chunk in entries[3_000..].chunks(100) {
        index.insert(chunk).await.unwrap();
    }
    index
        .remove_owners(&["p:o00000000".to_owned()])
        .await
        .unwrap();
    let before = all_hits(&index, &entries).await;
    assert!(before[0].is_empty() && before[5].len() == 1);
    index.compact().await.unwrap();
    assert_eq!(all_hits(&index, &entries).await, before);
    assert_eq!(index.stats().await.unwrap().entries, 4_995);
}

#[derive(Debug)]
struct RecordsStore(Mutex<Vec<FingerprintRecord>>);

#[async_trait]
impl FingerprintStore for RecordsStore {
    async fn put_fingerprint(&self, record: &FingerprintRecord) -> copyhound_core::Result<()> {
        self.0.lock().unwrap().push(record.clone());
        Ok(())
    }
    async fn get_fingerprint(
        &self,
        _: &FingerprintOwner,
        _: u32,
    ) -> copyhound_core::Result<FingerprintRecord> {
        Err(copyhound_core::Error::not_found("record"))
    }
    async fn delete_fingerprints(&self, _: &FingerprintOwner) -> copyhound_core::Result<()> {
        Ok(())
    }
    async fn list_fingerprints(
        &self,
        version: u32,
        page: &PageRequest,
    ) -> copyhound_core::Result<Paged<FingerprintRecord>> {
        let records = self.0.lock().unwrap();
        let start: usize = page
            .after
            .as_deref()
            .map_or(0, |after| after.parse().unwrap());
        let end = (start + page.limit as usize).min(records.len());
        let items = records[start..end]
            .iter()
            .filter(|record| record.version == version)
            .cloned()
            .collect();
        Ok(Paged {
            items,
            next: (end < records.len()).then(|| end.to_string()),
        })
    }
}

fn record(url: &str, seed: u64) -> FingerprintRecord {
    FingerprintRecord {
        owner: FingerprintOwner::Page {
            page_id: PageId::for_url(url),
        },
        version: 1,
        content_sha256: String::new(),
        simhash: seed,
        shingle_simhash: seed ^ 0xff,
        dna: vec![seed.rotate_left(7), seed.rotate_left(7)],
        passages: vec![PassageRecord {
            ordinal: 0,
            start: 0,
            end: 9,
            simhash: !seed,
            dna: vec![],
        }],
        anchors: vec![7],
        normalized_chars: 9,
        created_at: chrono::Utc::now(),
    }
}

#[tokio::test]
async fn rebuild_inserts_every_record() {
    let records: Vec<FingerprintRecord> = (0..1_200)
        .map(|i| record(&format!("http://a/{i}"), i * 0x9e37_79b9))
        .collect();
    assert_eq!(entries_for_record(&records[0]).len(), 5);
    let store = RecordsStore(Mutex::new(records.clone()));
    let index = MemoryFingerprintIndex::new(3).unwrap();
    let progress = Mutex::new(Vec::new());
    let done = rebuild_index(&store, &index, 1, |count| {
        progress.lock().unwrap().push(count)
    })
    .await
    .unwrap();
    assert_eq!(done, 1_200);
    assert_eq!(
        *progress.lock().unwrap(),
        [1_200],
        "6,000 entries: one insert"
    );
    assert_eq!(index.stats().await.unwrap().entries, 5 * 1_200);
    // Small batches: one insert per store page here (2,500 entries each).
    let paged = MemoryFingerprintIndex::new(3).unwrap();
    let progress = Mutex::new(Vec::new());
    rebuild_in_batches(&store, &paged, 1, 2_000, |count| {
        progress.lock().unwrap().push(count)
    })
    .await
    .unwrap();
    assert_eq!(*progress.lock().unwrap(), [500, 1_000, 1_200]);
    assert_eq!(paged.stats().await.unwrap().entries, 5 * 1_200);
    let owner = records[7].owner.index_key();
    let hits = index
        .query(EntryKind::Passage, !records[7].simhash, 0)
        .await
        .unwrap();
    assert!(hits.iter().any(|hit| hit.entry.owner == owner));
}

/// Many small writes (inserts, replacements, removals, re-inserts) cross
/// many run merges; after each batch every query agrees with a model of
/// the contents scanned linearly, and the runs stay logarithmic in number.
#[tokio::test]
async fn runs_and_merges_agree_with_a_model() {
    runs_and_merges_agree_with_a_model_of(EntryKind::Passage).await;
}

/// The same for a kind built with one table: queries past distance 0 scan.
#[tokio::test]
async fn runs_and_merges_of_exact_kinds_agree_with_a_model() {
    runs_and_merges_agree_with_a_model_of(EntryKind::Anchor).await;
}

async fn runs_and_merges_agree_with_a_model_of(kind: EntryKind) {
    use std::collections::BTreeMap;

    use rand::Rng;

    use crate::testsuite::{flip_bits, linear_scan};

    let index = MemoryFingerprintIndex::new(3).unwrap();
    let mut rng = seeded(41);
    let mut model: BTreeMap<(String, u32), u64> = BTreeMap::new();
    let mut max_runs = 0;
    for round in 0..400_u32 {
        let owner = format!("p:o{:04}", rng.random_range(0..300_u32));
        if round % 7 == 3 {
            index
                .remove_owners(std::slice::from_ref(&owner))
                .await
                .unwrap();
            model.retain(|(name, _), _| *name != owner);
        } else {
            // A page of entries; some owners come back with new values.
            let entries: Vec<IndexEntry> = (0..rng.random_range(1..80_u32))
                .map(|ordinal| IndexEntry {
                    owner: owner.clone(),
                    kind,
                    ordinal,
                    fingerprint: rng.random(),
                })
                .collect();
            index.insert(&entries).await.unwrap();
            for entry in entries {
                model.insert((entry.owner, entry.ordinal), entry.fingerprint);
            }
        }
        max_runs = max_runs.max(index.current().run_count());
        if round % 40 != 39 {
            continue;
        }
        let live: Vec<IndexEntry> = model
            .iter()
            .map(|((owner, ordinal), fingerprint)| IndexEntry {
                owner: owner.clone(),
                kind,
                ordinal: *ordinal,
                fingerprint: *fingerprint,
            })
            .collect();
        let queries: Vec<u64> = live
            .iter()
            .step_by(13)
            .map(|entry| {
                let distance = rng.random_range(0..=3);
                flip_bits(&mut rng, entry.fingerprint, distance)
            })
            .collect();
        let answers = index.query_batch(kind, &queries, 3).await.unwrap();
        for (query, mut hits) in queries.iter().zip(answers) {
            sort_hits(&mut hits);
            assert_eq!(hits, linear_scan(&live, kind, *query, 3), "round {round}");
        }
        assert_eq!(
            index.stats().await.unwrap().entries,
            live.len() as u64,
            "round {round}"
        );
    }
    let total = model.len();
    assert!(
        max_runs >= 3,
        "the writes crossed several runs ({max_runs})"
    );
    assert!(max_runs <= 8, "{max_runs} runs for {total} entries");
    index.compact().await.unwrap();
    assert_eq!(index.current().run_count(), 1);
    assert_eq!(index.stats().await.unwrap().entries, total as u64);
}

/// Owner-filtered, capped queries against a model, while the writes cross
/// runs and the delta: chapters and pages share fingerprints (so caps bite,
/// counting hits of every owner), owners are rewritten (the delta hides
/// their older entries, then a newer run does) and removed. Exact kinds are
/// asked at distance 0 (their one table) and 2 (a scan).
#[tokio::test]
async fn owned_capped_queries_agree_with_a_model() {
    use std::collections::BTreeMap;

    use rand::Rng;

    use crate::testsuite::linear_scan;

    let index = MemoryFingerprintIndex::new(3).unwrap();
    let mut rng = seeded(43);
    let pool: Vec<u64> = (0..24).map(|_| rng.random()).collect();
    let mut model: BTreeMap<(String, EntryKind, u32), u64> = BTreeMap::new();
    let (mut plain_checks, mut other_checks) = (0, 0);
    for round in 0..300_u32 {
        // New owners first (no owner rewritten), then rewrites and removals.
        let number = if round < 120 {
            round
        } else if round == 120 {
            // A page written early: in a run by now.
            1
        } else {
            rng.random_range(0..120)
        };
        let owner = if number % 5 == 0 {
            format!("c:w/ch{number:03}")
        } else {
            format!("p:{number:03}")
        };
        let removal = round > 130 && round % 7 == 3;
        if removal {
            index
                .remove_owners(std::slice::from_ref(&owner))
                .await
                .unwrap();
            model.retain(|(name, _, _), _| *name != owner);
        } else {
            let mut entries = Vec::new();
            for kind in [EntryKind::Anchor, EntryKind::Passage] {
                for ordinal in 0..rng.random_range(1..12_u32) {
                    let base = pool[rng.random_range(0..pool.len())];
                    let fingerprint = if rng.random_bool(0.5) {
                        base
                    } else {
                        base ^ (1 << rng.random_range(0..64))
                    };
                    entries.push(IndexEntry {
                        owner: owner.clone(),
                        kind,
                        ordinal,
                        fingerprint,
                    });
                }
            }
            index.insert(&entries).await.unwrap();
            for entry in entries {
                model.insert((entry.owner, entry.kind, entry.ordinal), entry.fingerprint);
            }
        }
        if round % 12 != 11 && round != 120 && !removal {
            continue;
        }
        let current = index.current();
        if current.rewrites_nothing() && current.runs.len() > 1 {
            plain_checks += 1;
        } else if !current.rewrites_nothing() {
            other_checks += 1;
        }
        let live: Vec<IndexEntry> = model
            .iter()
            .map(|((owner, kind, ordinal), fingerprint)| IndexEntry {
                owner: owner.clone(),
                kind: *kind,
                ordinal: *ordinal,
                fingerprint: *fingerprint,
            })
            .collect();
        let queries: Vec<u64> = pool.iter().flat_map(|base| [*base, base ^ 0b101]).collect();
        for (kind, distance) in [
            (EntryKind::Anchor, 0),
            (EntryKind::Anchor, 2),
            (EntryKind::Passage, 2),
        ] {
            for cap in [4, 40] {
                let answers = index
                    .query_batch_capped_owned(kind, &queries, distance, cap, "c:")
                    .await
                    .unwrap();
                for (query, answer) in queries.iter().zip(answers) {
                    let all = linear_scan(&live, kind, *query, distance);
                    assert_eq!(
                        sorted(answer),
                        owned_answer(all, cap),
                        "round {round}, {kind:?} at {distance}, cap {cap}"
                    );
                }
            }
            // A cap of exactly the live hits: one hit too many (a hidden
            // entry counted) or too few shows.
            for query in &queries {
                let all = linear_scan(&live, kind, *query, distance);
                let cap = all.len();
                let answer = index
                    .query_batch_capped_owned(kind, &[*query], distance, cap, "c:")
                    .await
                    .unwrap()
                    .pop()
                    .unwrap();
                assert!(answer.is_some(), "round {round}, {kind:?}, cap {cap}");
                assert_eq!(sorted(answer), owned_answer(all, cap));
                if cap > 0 {
                    let capped = index
                        .query_batch_capped_owned(kind, &[*query], distance, cap - 1, "c:")
                        .await
                        .unwrap();
                    assert_eq!(capped, [None], "round {round}, {kind:?}, cap {}", cap - 1);
                }
            }
        }
    }
    assert!(
        plain_checks > 1,
        "checks over several runs, nothing rewritten"
    );
    assert!(other_checks > 1, "checks with owners rewritten or removed");
}

fn sorted(answer: Option<Vec<IndexHit>>) -> Option<Vec<IndexHit>> {
    answer.map(|mut hits| {
        sort_hits(&mut hits);
        hits
    })
}

/// The chapters' hits of a scan's, or none past the cap (counting all).
fn owned_answer(all: Vec<IndexHit>, cap: usize) -> Option<Vec<IndexHit>> {
    (all.len() <= cap).then(|| {
        all.into_iter()
            .filter(|hit| hit.entry.owner.starts_with("c:"))
            .collect()
    })
}
