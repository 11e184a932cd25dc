//! Bounded index lookups for comparison and back-fill.
//!
//! What a lookup costs is the number of hits it materialises: distinct query
//! fingerprints times the entries each one hits. Repeated text makes thousands of
//! identical fingerprints, and boilerplate or mass-copied text makes one
//! fingerprint hit thousands of owners; multiplied, one page once asked for
//! hundreds of millions of hits at a time. Here every lookup
//!
//! * asks each distinct fingerprint once;
//! * treats a fingerprint with more hits than its kind's cap as too common to be
//!   evidence (the index stops collecting it early);
//! * goes to the index in chunks, folding each chunk's hits into the caller's
//!   votes before asking the next, so only one chunk of hits is alive at a time;
//! * stops after [`MAX_HITS_PER_TASK`] hits with a warning.

use copyhound_core::Result;
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexHit};
use tracing::warn;

/// Hits alive at a time: a chunk holds this many divided by the kind's cap.
const HITS_PER_CHUNK: usize = 1 << 18;
/// Hits past which a document or passage SimHash nominates nothing (shared by
/// thousands of owners: boilerplate or an empty page, not evidence).
pub(crate) const MAX_SIMHASH_HITS: usize = 4096;
/// Hits past which a DNA code or anchor nominates nothing.
pub(crate) const MAX_CODE_HITS: usize = 256;
/// Hits examined by one comparison, or by the back-fill of one chapter.
pub(crate) const MAX_HITS_PER_TASK: usize = 1 << 22;

/// Returns the cap on hits per query of `kind`.
pub(crate) fn max_hits(kind: EntryKind) -> usize {
    match kind {
        EntryKind::Document | EntryKind::Passage => MAX_SIMHASH_HITS,
        EntryKind::Dna | EntryKind::Anchor => MAX_CODE_HITS,
    }
}

/// Returns the distinct fingerprints of `fingerprints`, ascending.
pub(crate) fn distinct(fingerprints: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut distinct: Vec<u64> = fingerprints.into_iter().collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
}

/// Hits one task may still examine.
#[derive(Debug)]
pub(crate) struct HitBudget {
    remaining: usize,
    warned: bool,
}

impl HitBudget {
    /// Returns the budget of one task.
    pub(crate) fn per_task() -> Self {
        Self::new(MAX_HITS_PER_TASK)
    }

    pub(crate) fn new(hits: usize) -> Self {
        Self {
            remaining: hits,
            warned: false,
        }
    }

    pub(crate) fn is_spent(&self) -> bool {
        self.remaining == 0
    }

    /// Takes `hits` from the budget; false (with one warning) when it runs out.
    fn spend(&mut self, hits: usize, what: &str) -> bool {
        if hits <= self.remaining {
            self.remaining -= hits;
            return true;
        }
        self.remaining = 0;
        if !self.warned {
            self.warned = true;
            warn!(
                task_budget = MAX_HITS_PER_TASK,
                what, "index hit budget spent; remaining lookups skipped"
            );
        }
        false
    }
}

/// Looks up `fingerprints` (distinct) of `kind` in chunks and calls `visit` with
/// the hits of every query that is not too common, until `budget` is spent.
/// Only hits of owners starting with `owner_prefix` are visited (and
/// materialized); all count toward the kind's cap.
pub(crate) async fn for_each_hits(
    index: &dyn FingerprintIndex,
    kind: EntryKind,
    fingerprints: &[u64],
    max_distance: u32,
    owner_prefix: &str,
    budget: &mut HitBudget,
    mut visit: impl FnMut(&[IndexHit]),
) -> Result<()> {
    let cap = max_hits(kind);
    for chunk in fingerprints.chunks((HITS_PER_CHUNK / cap).max(1)) {
        if budget.is_spent() {
            return Ok(());
        }
        let answers = index
            .query_batch_capped_owned(kind, chunk, max_distance, cap, owner_prefix)
            .await?;
        for hits in answers.iter().flatten() {
            if !budget.spend(hits.len(), kind_name(kind)) {
                return Ok(());
            }
            visit(hits);
        }
    }
    Ok(())
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Document => "document",
        EntryKind::Passage => "passage",
        EntryKind::Dna => "dna",
        EntryKind::Anchor => "anchor",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_fingerprints_are_sorted_once() {
        assert_eq!(distinct([5, 1, 5, 3, 1]), [1, 3, 5]);
        assert!(distinct([]).is_empty());
    }

    #[test]
    fn a_budget_runs_out_once() {
        let mut budget = HitBudget::new(10);
        assert!(budget.spend(4, "test"));
        assert!(budget.spend(6, "test"));
        assert!(budget.is_spent());
        assert!(!budget.spend(1, "test"));
        let mut small = HitBudget::new(3);
        assert!(!small.spend(4, "test"));
        assert!(small.is_spent());
    }
}
