use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Which fingerprint an index entry holds; queries usually ask for one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Whole-document SimHash.
    Document,
    /// Passage SimHash.
    Passage,
    /// Pinyin-initial DNA code (keyed), queried at distance 0.
    Dna,
    /// Anchor: a sampled syllable-run hash, queried at distance 0.
    Anchor,
}

/// One indexed fingerprint. Identity is (owner, kind, ordinal).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IndexEntry {
    /// The owner key (`FingerprintOwner::index_key`): removal by owner drops all its entries.
    pub owner: String,
    /// Kind of fingerprint.
    pub kind: EntryKind,
    /// Position among the owner's entries of this kind.
    pub ordinal: u32,
    /// The 64-bit fingerprint.
    pub fingerprint: u64,
}

/// An entry within the queried distance.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IndexHit {
    /// The matching entry.
    pub entry: IndexEntry,
    /// Hamming distance to the query.
    pub distance: u32,
}

/// Size figures of an index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Number of entries.
    pub entries: u64,
    /// Memory used by the index structures, bytes (approximate for Redis).
    pub memory_bytes: u64,
}

/// An exact near-duplicate index over 64-bit fingerprints.
///
/// Contract: `query(f, k)` returns every entry of `kind` whose fingerprint is
/// within Hamming distance `k` of `f` and no other (no false negatives, no false
/// positives), for any `k <= max_distance()`; a larger `k` is refused with
/// `InvalidInput`. Inserting an entry that exists (same owner, kind, ordinal)
/// replaces it; removing an absent one is not an error. A query concurrent with
/// a rebuild sees the old or the new state, never a mix.
#[async_trait]
pub trait FingerprintIndex: fmt::Debug + Send + Sync + 'static {
    /// Returns `Ok` when the backend answers.
    async fn check_connectivity(&self) -> Result<()>;

    /// Returns the largest distance this index answers exactly (fixed per index).
    fn max_distance(&self) -> u32;

    /// Inserts or replaces entries.
    async fn insert(&self, entries: &[IndexEntry]) -> Result<()>;

    /// Removes every entry of each owner; absent owners are ignored.
    async fn remove_owners(&self, owners: &[String]) -> Result<()>;

    /// Removes every entry of `owners`, then inserts `entries` (a page or
    /// chapter fingerprinted anew). Implementations may do both in one write.
    async fn replace_owners(&self, owners: &[String], entries: &[IndexEntry]) -> Result<()> {
        self.remove_owners(owners).await?;
        self.insert(entries).await
    }

    /// Returns, per query fingerprint, every entry of `kind` within `max_distance`.
    async fn query_batch(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
    ) -> Result<Vec<Vec<IndexHit>>>;

    /// Like [`FingerprintIndex::query_batch`], for codes that may be common: a
    /// query with more than `max_hits` hits answers `None` (too common to be
    /// evidence), and implementations may stop collecting its hits early.
    async fn query_batch_capped(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
        max_hits: usize,
    ) -> Result<Vec<Option<Vec<IndexHit>>>> {
        let results = self.query_batch(kind, fingerprints, max_distance).await?;
        Ok(results
            .into_iter()
            .map(|hits| (hits.len() <= max_hits).then_some(hits))
            .collect())
    }

    /// Like [`FingerprintIndex::query_batch_capped`], answering only the hits
    /// whose owner starts with `owner_prefix`; every hit still counts toward
    /// `max_hits`. Implementations may skip materializing the others: a
    /// comparison wants the chapters among hits that are mostly other pages.
    async fn query_batch_capped_owned(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
        max_hits: usize,
        owner_prefix: &str,
    ) -> Result<Vec<Option<Vec<IndexHit>>>> {
        let mut results = self
            .query_batch_capped(kind, fingerprints, max_distance, max_hits)
            .await?;
        for hits in results.iter_mut().flatten() {
            hits.retain(|hit| hit.entry.owner.starts_with(owner_prefix));
        }
        Ok(results)
    }

    /// Returns every entry of `kind` within `max_distance` of `fingerprint`.
    async fn query(
        &self,
        kind: EntryKind,
        fingerprint: u64,
        max_distance: u32,
    ) -> Result<Vec<IndexHit>> {
        let mut results = self.query_batch(kind, &[fingerprint], max_distance).await?;
        Ok(results.pop().unwrap_or_default())
    }

    /// Returns entry counts and memory use.
    async fn stats(&self) -> Result<IndexStats>;
}
