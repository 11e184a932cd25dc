//! One conformance suite for every `FingerprintIndex` implementation: each test
//! is a generic async function taking a factory, instantiated per backend by
//! `conformance_suite!` (memory here, Redis in `redis_suite.rs`).

mod memory_suite;
#[cfg(feature = "redis")]
mod redis_suite;

use std::sync::Arc;

use async_trait::async_trait;
use rand::RngCore;

use copyhound_core::ErrorKind;
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry, IndexHit};

use crate::testsuite::{flip_bits, linear_scan, random_entries, seeded, sort_hits};

/// Makes fresh, empty indexes of one backend.
#[async_trait]
pub(crate) trait Factory: Send + Sync {
    async fn index(&self, max_distance: u32) -> Arc<dyn FingerprintIndex>;
}

/// Instantiates every conformance test for a factory expression of type `Option<impl Factory>`
/// (`None` skips, e.g. without a test Redis).
macro_rules! conformance_suite {
    ($factory:expr) => {
        conformance_suite!(@tests $factory;
            empty_index_answers_nothing, oracle_matches_linear_scan, exact_index_with_k_zero,
            duplicate_fingerprints_under_different_owners, extreme_fingerprints, remove_then_query,
            reinsert_after_remove, insert_replaces_and_is_idempotent, distance_above_max_is_refused,
            kinds_are_separate, stats_count_live_entries, capped_batches_refuse_common_codes,
            repeated_fingerprints_within_an_owner, owner_filtered_batches_count_every_hit,
            replace_owners_leaves_only_the_new_entries);
    };
    (@tests $factory:expr; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let Some(factory) = $factory else { return };
                crate::tests::$name(&factory).await;
            }
        )*
    };
}
pub(crate) use conformance_suite;

fn entry(owner: &str, kind: EntryKind, ordinal: u32, fingerprint: u64) -> IndexEntry {
    IndexEntry {
        owner: owner.to_owned(),
        kind,
        ordinal,
        fingerprint,
    }
}

async fn sorted_query(
    index: &dyn FingerprintIndex,
    kind: EntryKind,
    query: u64,
    k: u32,
) -> Vec<IndexHit> {
    let mut hits = index.query(kind, query, k).await.unwrap();
    sort_hits(&mut hits);
    hits
}

fn summary(hits: &[IndexHit]) -> Vec<(String, u32, u32)> {
    hits.iter()
        .map(|hit| (hit.entry.owner.clone(), hit.entry.ordinal, hit.distance))
        .collect()
}

pub(crate) async fn empty_index_answers_nothing(factory: &impl Factory) {
    let index = factory.index(3).await;
    index.check_connectivity().await.unwrap();
    assert_eq!(index.max_distance(), 3);
    assert!(
        index
            .query(EntryKind::Document, 42, 3)
            .await
            .unwrap()
            .is_empty()
    );
    let batch = index
        .query_batch(EntryKind::Passage, &[0, u64::MAX], 2)
        .await
        .unwrap();
    assert_eq!(batch, vec![Vec::new(), Vec::new()]);
    assert!(
        index
            .query_batch(EntryKind::Dna, &[], 1)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(index.stats().await.unwrap().entries, 0);
    index.remove_owners(&["p:absent".to_owned()]).await.unwrap();
    index.insert(&[]).await.unwrap();
}

pub(crate) async fn oracle_matches_linear_scan(factory: &impl Factory) {
    const K: u32 = 3;
    let index = factory.index(K).await;
    let mut rng = seeded(7);
    let mut entries = random_entries(&mut rng, EntryKind::Passage, 100_000, 16);
    let centres: Vec<u64> = (0..40).map(|_| rng.next_u64()).collect();
    for (centre_index, centre) in centres.iter().enumerate() {
        for distance in 0..=K + 1 {
            for copy in 0..2 {
                let owner = format!("p:planted{centre_index:03}");
                let fingerprint = flip_bits(&mut rng, *centre, distance);
                entries.push(entry(
                    &owner,
                    EntryKind::Passage,
                    distance * 2 + copy,
                    fingerprint,
                ));
            }
        }
    }
    for chunk in entries.chunks(20_000) {
        index.insert(chunk).await.unwrap();
    }
    let mut queries = centres.clone();
    queries.extend((0..40).map(|_| rng.next_u64()));
    for k in 0..=K {
        let answers = index
            .query_batch(EntryKind::Passage, &queries, k)
            .await
            .unwrap();
        assert_eq!(answers.len(), queries.len());
        for (query, mut hits) in queries.iter().zip(answers) {
            sort_hits(&mut hits);
            assert_eq!(
                hits,
                linear_scan(&entries, EntryKind::Passage, *query, k),
                "query {query:#x} at k={k}"
            );
        }
    }
    let planted = sorted_query(index.as_ref(), EntryKind::Passage, centres[0], K).await;
    assert!(
        planted
            .iter()
            .filter(|hit| hit.entry.owner == "p:planted000")
            .count()
            >= 8
    );
    assert_eq!(index.stats().await.unwrap().entries, entries.len() as u64);
}

pub(crate) async fn exact_index_with_k_zero(factory: &impl Factory) {
    let index = factory.index(0).await;
    assert_eq!(index.max_distance(), 0);
    index
        .insert(&[
            entry("p:a", EntryKind::Document, 0, 0xabcd),
            entry("p:b", EntryKind::Document, 0, 0xabcc),
        ])
        .await
        .unwrap();
    let hits = sorted_query(index.as_ref(), EntryKind::Document, 0xabcd, 0).await;
    assert_eq!(summary(&hits), [("p:a".to_owned(), 0, 0)]);
    let error = index
        .query(EntryKind::Document, 0xabcd, 1)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
}

pub(crate) async fn duplicate_fingerprints_under_different_owners(factory: &impl Factory) {
    let index = factory.index(3).await;
    let fingerprint = 0x0f0f_0f0f_1234_5678;
    let owners = ["p:one", "p:two", "c:w1/c1"];
    let entries: Vec<IndexEntry> = owners
        .iter()
        .map(|owner| entry(owner, EntryKind::Passage, 5, fingerprint))
        .collect();
    index.insert(&entries).await.unwrap();
    index
        .insert(&[entry("p:one", EntryKind::Passage, 6, fingerprint)])
        .await
        .unwrap();
    let hits = sorted_query(index.as_ref(), EntryKind::Passage, fingerprint ^ 1, 3).await;
    let expected = [("c:w1/c1", 5), ("p:one", 5), ("p:one", 6), ("p:two", 5)];
    let expected: Vec<(String, u32, u32)> = expected
        .iter()
        .map(|(owner, ordinal)| (owner.to_string(), *ordinal, 1))
        .collect();
    assert_eq!(summary(&hits), expected);
    index.remove_owners(&["p:two".to_owned()]).await.unwrap();
    assert_eq!(
        sorted_query(index.as_ref(), EntryKind::Passage, fingerprint, 0)
            .await
            .len(),
        3
    );
}

pub(crate) async fn extreme_fingerprints(factory: &impl Factory) {
    let index = factory.index(3).await;
    let entries = [
        entry("p:zero", EntryKind::Dna, 0, 0),
        entry("p:ones", EntryKind::Dna, 0, u64::MAX),
        entry("p:near-zero", EntryKind::Dna, 0, 0b1011),
        entry("p:near-ones", EntryKind::Dna, 0, u64::MAX ^ (1 << 63) ^ 1),
    ];
    index.insert(&entries).await.unwrap();
    let zero = sorted_query(index.as_ref(), EntryKind::Dna, 0, 3).await;
    assert_eq!(
        summary(&zero),
        [
            ("p:near-zero".to_owned(), 0, 3),
            ("p:zero".to_owned(), 0, 0)
        ]
    );
    let ones = sorted_query(index.as_ref(), EntryKind::Dna, u64::MAX, 3).await;
    assert_eq!(
        summary(&ones),
        [
            ("p:near-ones".to_owned(), 0, 2),
            ("p:ones".to_owned(), 0, 0)
        ]
    );
    assert_eq!(index.query(EntryKind::Dna, 0, 2).await.unwrap().len(), 1);
}

pub(crate) async fn remove_then_query(factory: &impl Factory) {
    let index = factory.index(3).await;
    let mut rng = seeded(11);
    let entries = random_entries(&mut rng, EntryKind::Passage, 300, 10);
    index.insert(&entries).await.unwrap();
    let removed = ["p:o00000003".to_owned(), "p:o00000007".to_owned()];
    index.remove_owners(&removed).await.unwrap();
    index.remove_owners(&removed).await.unwrap();
    let queries: Vec<u64> = entries.iter().map(|entry| entry.fingerprint).collect();
    let answers = index
        .query_batch(EntryKind::Passage, &queries, 3)
        .await
        .unwrap();
    for (entry, hits) in entries.iter().zip(answers) {
        let found = hits.iter().any(|hit| hit.entry == *entry);
        assert_eq!(found, !removed.contains(&entry.owner), "{entry:?}");
        assert!(hits.iter().all(|hit| !removed.contains(&hit.entry.owner)));
    }
    assert_eq!(index.stats().await.unwrap().entries, 280);
}

pub(crate) async fn reinsert_after_remove(factory: &impl Factory) {
    let index = factory.index(3).await;
    let first = [
        entry("p:x", EntryKind::Document, 0, 0x1111),
        entry("p:x", EntryKind::Document, 1, 0x2222),
    ];
    index.insert(&first).await.unwrap();
    index.remove_owners(&["p:x".to_owned()]).await.unwrap();
    assert!(
        index
            .query(EntryKind::Document, 0x1111, 0)
            .await
            .unwrap()
            .is_empty()
    );
    index
        .insert(&[entry("p:x", EntryKind::Document, 0, 0x9999)])
        .await
        .unwrap();
    assert!(
        index
            .query(EntryKind::Document, 0x1111, 0)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        index
            .query(EntryKind::Document, 0x2222, 0)
            .await
            .unwrap()
            .is_empty()
    );
    let hits = sorted_query(index.as_ref(), EntryKind::Document, 0x9999, 0).await;
    assert_eq!(summary(&hits), [("p:x".to_owned(), 0, 0)]);
    assert_eq!(index.stats().await.unwrap().entries, 1);
}

pub(crate) async fn insert_replaces_and_is_idempotent(factory: &impl Factory) {
    let index = factory.index(3).await;
    let original = entry("p:r", EntryKind::Passage, 2, 0xdead_beef);
    index.insert(std::slice::from_ref(&original)).await.unwrap();
    index.insert(std::slice::from_ref(&original)).await.unwrap();
    assert_eq!(
        index
            .query(EntryKind::Passage, 0xdead_beef, 3)
            .await
            .unwrap()
            .len(),
        1
    );
    let replaced = entry("p:r", EntryKind::Passage, 2, !0xdead_beef_u64);
    index
        .insert(&[original.clone(), replaced.clone()])
        .await
        .unwrap();
    assert!(
        index
            .query(EntryKind::Passage, 0xdead_beef, 3)
            .await
            .unwrap()
            .is_empty()
    );
    let hits = index
        .query(EntryKind::Passage, !0xdead_beef_u64, 0)
        .await
        .unwrap();
    assert_eq!(
        hits,
        [IndexHit {
            entry: replaced,
            distance: 0
        }]
    );
    assert_eq!(index.stats().await.unwrap().entries, 1);
}

/// An owner holding one fingerprint at several ordinals: each ordinal is its
/// own hit, and replacing one leaves the others findable.
pub(crate) async fn repeated_fingerprints_within_an_owner(factory: &impl Factory) {
    let index = factory.index(3).await;
    let (x, y, z) = (
        0x1111_2222_3333_4444_u64,
        0x5555_6666_7777_8888,
        0x9999_aaaa_bbbb_cccc,
    );
    let ordinals = |hits: Vec<IndexHit>| {
        let mut ordinals: Vec<u32> = hits.iter().map(|hit| hit.entry.ordinal).collect();
        ordinals.sort_unstable();
        ordinals
    };
    index
        .insert(&[
            entry("p:s", EntryKind::Passage, 0, x),
            entry("p:s", EntryKind::Passage, 1, x),
            entry("p:s", EntryKind::Passage, 2, y),
        ])
        .await
        .unwrap();
    let query = |fingerprint| index.query(EntryKind::Passage, fingerprint, 0);
    assert_eq!(ordinals(query(x).await.unwrap()), [0, 1]);
    index
        .insert(&[entry("p:s", EntryKind::Passage, 0, z)])
        .await
        .unwrap();
    assert_eq!(ordinals(query(x).await.unwrap()), [1]);
    assert_eq!(ordinals(query(z).await.unwrap()), [0]);
    index
        .insert(&[entry("p:s", EntryKind::Passage, 1, z)])
        .await
        .unwrap();
    assert!(query(x).await.unwrap().is_empty());
    assert_eq!(ordinals(query(z).await.unwrap()), [0, 1]);
    assert_eq!(ordinals(query(y).await.unwrap()), [2]);
    assert_eq!(index.stats().await.unwrap().entries, 3);
    index.remove_owners(&["p:s".to_owned()]).await.unwrap();
    for fingerprint in [x, y, z] {
        assert!(query(fingerprint).await.unwrap().is_empty());
    }
    assert_eq!(index.stats().await.unwrap().entries, 0);
}

pub(crate) async fn distance_above_max_is_refused(factory: &impl Factory) {
    let index = factory.index(2).await;
    let error = index.query(EntryKind::Document, 1, 3).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    let error = index
        .query_batch(EntryKind::Document, &[1, 2], 9)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
}

pub(crate) async fn kinds_are_separate(factory: &impl Factory) {
    let index = factory.index(3).await;
    let fingerprint = 0x5555_aaaa_5555_aaaa;
    let entries = [
        entry("p:k", EntryKind::Document, 0, fingerprint),
        entry("p:k", EntryKind::Passage, 0, fingerprint),
        entry("p:k", EntryKind::Dna, 0, fingerprint ^ 0b11),
    ];
    index.insert(&entries).await.unwrap();
    for kind in [EntryKind::Document, EntryKind::Passage, EntryKind::Dna] {
        let hits = index.query(kind, fingerprint, 3).await.unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].entry.kind, kind);
    }
    index.remove_owners(&["p:k".to_owned()]).await.unwrap();
    assert!(
        index
            .query(EntryKind::Dna, fingerprint, 3)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(crate) async fn stats_count_live_entries(factory: &impl Factory) {
    let index = factory.index(3).await;
    let mut rng = seeded(5);
    let entries = random_entries(&mut rng, EntryKind::Dna, 1_000, 4);
    index.insert(&entries).await.unwrap();
    let stats = index.stats().await.unwrap();
    assert_eq!(stats.entries, 1_000);
    assert!(stats.memory_bytes > 8_000, "{stats:?}");
}

pub(crate) async fn capped_batches_refuse_common_codes(factory: &impl Factory) {
    let index = factory.index(3).await;
    let mut rng = seeded(21);
    let mut entries = random_entries(&mut rng, EntryKind::Dna, 50_000, 8);
    // One code held by 40 owners: too common at a cap of 32.
    let common = rng.next_u64();
    entries.extend((0..40).map(|owner| {
        entry(
            &format!("p:common{owner:02}"),
            EntryKind::Dna,
            0,
            flip_bits(&mut rng, common, owner % 3),
        )
    }));
    index.insert(&entries).await.unwrap();
    // Later writes (an embedded index keeps them apart until compaction).
    let late = entry("p:late", EntryKind::Dna, 0, flip_bits(&mut rng, common, 1));
    index.insert(std::slice::from_ref(&late)).await.unwrap();
    entries.push(late);
    let mut queries: Vec<u64> = entries.iter().step_by(997).map(|e| e.fingerprint).collect();
    queries.insert(17, common);
    queries.push(common);
    queries.extend((0..30).map(|_| rng.next_u64()));
    let capped = index
        .query_batch_capped(EntryKind::Dna, &queries, 3, 32)
        .await
        .unwrap();
    let loose = index
        .query_batch_capped(EntryKind::Dna, &queries, 3, 41)
        .await
        .unwrap();
    assert_eq!(capped.len(), queries.len());
    for ((query, capped), loose) in queries.iter().zip(capped).zip(loose) {
        let expected = linear_scan(&entries, EntryKind::Dna, *query, 3);
        if *query == common {
            assert!(capped.is_none(), "41 hits exceed a cap of 32");
            let mut loose = loose.expect("41 hits fit a cap of 41");
            sort_hits(&mut loose);
            assert_eq!(loose, expected);
        } else {
            let mut capped = capped.expect("a rare code is answered");
            sort_hits(&mut capped);
            assert_eq!(capped, expected, "query {query:#x}");
        }
    }
}

pub(crate) async fn owner_filtered_batches_count_every_hit(factory: &impl Factory) {
    let index = factory.index(3).await;
    let mut rng = seeded(23);
    let shared = rng.next_u64();
    // A code on 3 chapters and 20 pages, some written after the rest.
    let mut entries: Vec<IndexEntry> = (0..3)
        .map(|n| entry(&format!("c:w/ch{n}"), EntryKind::Dna, 0, shared))
        .chain((0..16).map(|n| entry(&format!("p:page{n:02}"), EntryKind::Dna, 0, shared)))
        .collect();
    entries.extend(random_entries(&mut rng, EntryKind::Dna, 5_000, 4));
    index.insert(&entries).await.unwrap();
    let late: Vec<IndexEntry> = (16..20)
        .map(|n| entry(&format!("p:page{n:02}"), EntryKind::Dna, 0, shared))
        .collect();
    index.insert(&late).await.unwrap();
    let rare = entries[100].fingerprint;
    let chapters = index
        .query_batch_capped_owned(EntryKind::Dna, &[shared, rare], 0, 32, "c:")
        .await
        .unwrap();
    let mut hits = chapters[0].clone().expect("23 hits fit a cap of 32");
    sort_hits(&mut hits);
    let owners: Vec<&str> = hits.iter().map(|hit| hit.entry.owner.as_str()).collect();
    assert_eq!(owners, ["c:w/ch0", "c:w/ch1", "c:w/ch2"]);
    assert!(
        chapters[1].as_ref().is_some_and(Vec::is_empty),
        "a page-only code answers no chapter"
    );
    // The pages count toward the cap although they are not answered.
    let capped = index
        .query_batch_capped_owned(EntryKind::Dna, &[shared], 0, 20, "c:")
        .await
        .unwrap();
    assert!(capped[0].is_none(), "23 hits exceed a cap of 20");
    let pages = index
        .query_batch_capped_owned(EntryKind::Dna, &[shared], 0, 32, "p:")
        .await
        .unwrap();
    assert_eq!(pages[0].as_ref().map(Vec::len), Some(20));
}

pub(crate) async fn replace_owners_leaves_only_the_new_entries(factory: &impl Factory) {
    let index = factory.index(3).await;
    let old: Vec<IndexEntry> = (0..5)
        .map(|ordinal| entry("p:page", EntryKind::Passage, ordinal, 0x1111 << ordinal))
        .collect();
    let neighbour = entry("p:other", EntryKind::Passage, 0, 0x1111);
    index.insert(&old).await.unwrap();
    index
        .insert(std::slice::from_ref(&neighbour))
        .await
        .unwrap();
    // The page changed: three passages now, other values.
    let new: Vec<IndexEntry> = (0..3)
        .map(|ordinal| entry("p:page", EntryKind::Passage, ordinal, !(0x2222 << ordinal)))
        .collect();
    index
        .replace_owners(&["p:page".to_owned()], &new)
        .await
        .unwrap();
    for stale in &old {
        let hits = index
            .query(EntryKind::Passage, stale.fingerprint, 0)
            .await
            .unwrap();
        assert!(
            hits.iter().all(|hit| hit.entry.owner != "p:page"),
            "{stale:?} outlived its replacement: {hits:?}"
        );
    }
    for fresh in &new {
        let hits = index
            .query(EntryKind::Passage, fresh.fingerprint, 0)
            .await
            .unwrap();
        assert_eq!(hits.len(), 1, "{fresh:?}");
        assert_eq!(hits[0].entry, *fresh);
    }
    let kept = index.query(EntryKind::Passage, 0x1111, 0).await.unwrap();
    assert_eq!(kept.len(), 1, "the other owner is untouched: {kept:?}");
    assert_eq!(index.stats().await.unwrap().entries, 4);
}
