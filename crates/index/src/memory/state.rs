//! One immutable state of the in-memory index: runs of compacted entries
//! (each a [`Base`]: sorted owner names, one multi-index per kind), oldest
//! first, and a small `Delta` of recent writes scanned linearly. Writers
//! derive a new state and swap it in; readers keep the `Arc` they took, so a
//! query sees one state from start to end.
//!
//! Runs are merged like a binary counter (a log-structured merge): a full
//! delta becomes a run, and the two newest runs merge while the older is no
//! larger than the newer. Every entry is rebuilt about log2(n / delta) times,
//! so n inserts cost O(n log n), where rebuilding one base from everything
//! on each full delta cost O(n^2 / delta). A newer version of an entry (same
//! owner, kind and ordinal) in a newer run or the delta hides the older one;
//! a removal hides an owner's entries in every run built before it.

// Keys are owner names and (owner, ordinal) pairs hashed on every write and
// hit; foldhash is several times cheaper than SipHash and still seeded.
use foldhash::{HashMap, HashSet, HashSetExt};
use std::sync::Arc;

use copyhound_core::Result;
use copyhound_core::ports::{EntryKind, IndexEntry, IndexHit};

use super::tables::{KindTables, NO_OWNER, RawEntry};
use super::wal::LogOp;
use crate::layout::{SegmentLayout, hamming};

/// Number of entry kinds (one table set each).
pub(crate) const KIND_COUNT: usize = 4;

/// Returns the slot of a kind.
pub(crate) fn kind_slot(kind: EntryKind) -> usize {
    match kind {
        EntryKind::Document => 0,
        EntryKind::Passage => 1,
        EntryKind::Dna => 2,
        EntryKind::Anchor => 3,
    }
}

/// Owner names sorted, stored back to back; the id of an owner is its rank.
#[derive(Debug, Default)]
pub(crate) struct OwnerNames {
    bytes: String,
    ends: Vec<usize>,
}

impl OwnerNames {
    /// Builds the table from names sorted ascending.
    pub fn from_sorted(names: &[String]) -> Self {
        debug_assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
        let mut bytes = String::with_capacity(names.iter().map(String::len).sum());
        let mut ends = Vec::with_capacity(names.len());
        for name in names {
            bytes.push_str(name);
            ends.push(bytes.len());
        }
        Self { bytes, ends }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn name(&self, id: u32) -> &str {
        let index = id as usize;
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.bytes[start..self.ends[index]]
    }

    pub fn find(&self, name: &str) -> Option<u32> {
        let mut low = 0;
        let mut high = self.len();
        while low < high {
            let middle = (low + high) / 2;
            match self.name(middle as u32).cmp(name) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle as u32),
            }
        }
        None
    }

    /// The ids of the names starting with `prefix`: one range, as the
    /// names are sorted.
    pub fn prefix_range(&self, prefix: &str) -> std::ops::Range<u32> {
        let start = self.partition(0, |name| name < prefix);
        let end = self.partition(start, |name| name.starts_with(prefix));
        start as u32..end as u32
    }

    /// The first id from `low` on whose name fails `before`, which holds
    /// for a leading run of the names from `low`.
    fn partition(&self, mut low: usize, before: impl Fn(&str) -> bool) -> usize {
        let mut high = self.len();
        while low < high {
            let middle = (low + high) / 2;
            if before(self.name(middle as u32)) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    fn memory_bytes(&self) -> u64 {
        (self.bytes.capacity() + self.ends.capacity() * size_of::<usize>()) as u64
    }
}

/// The compacted part: owners and one multi-index per kind.
#[derive(Debug)]
pub(crate) struct Base {
    pub owners: OwnerNames,
    pub kinds: [KindTables; KIND_COUNT],
}

impl Base {
    /// Builds a base from sorted owner names and, per kind, entries sorted by (owner, ordinal).
    pub fn build(
        layout: &SegmentLayout,
        names: &[String],
        entries: [Vec<RawEntry>; KIND_COUNT],
    ) -> Result<Self> {
        let [documents, passages, dna, anchors] = entries;
        let all = layout.tables();
        // DNA codes and anchors are hashes, looked up at distance 0: one
        // table answers that (other distances scan), and they are most of a
        // page's entries.
        let exact = layout.tables_for(0);
        Ok(Self {
            owners: OwnerNames::from_sorted(names),
            kinds: [
                KindTables::build(layout, &documents, names.len(), all)?,
                KindTables::build(layout, &passages, names.len(), all)?,
                KindTables::build(layout, &dna, names.len(), exact)?,
                KindTables::build(layout, &anchors, names.len(), exact)?,
            ],
        })
    }

    /// Returns every entry of a kind as (owner id, ordinal, fingerprint), in (owner, ordinal) order.
    pub fn raw_entries(&self, slot: usize) -> impl Iterator<Item = RawEntry> + '_ {
        let tables = &self.kinds[slot];
        (0..self.owners.len() as u32).flat_map(move |owner| {
            tables
                .positions_of(owner)
                .zip(tables.ordinals_of(owner))
                .map(move |(position, ordinal)| (owner, ordinal, tables.fingerprints[position]))
        })
    }
}

/// Delta entries past which the delta becomes a run. Every query scans the
/// delta and every write copies it (readers keep the state they hold), so
/// it stays small: at 2,048 the scan alone cost devset's lookups 0.2 ms a
/// page. Runs are cheap to make at this size.
pub(crate) const DELTA_LIMIT: usize = 512;

/// A base and the sequence number of the last write it holds.
#[derive(Debug)]
pub(crate) struct Run {
    pub base: Base,
    /// Writes up to this sequence number are in the run (or superseded).
    pub seq: u64,
}

impl Run {
    fn len(&self) -> usize {
        self.base.kinds.iter().map(KindTables::len).sum()
    }

    /// Whether the run holds (owner name, kind slot, ordinal).
    fn holds(&self, name: &str, slot: usize, ordinal: u32) -> bool {
        self.base
            .owners
            .find(name)
            .is_some_and(|id| self.base.kinds[slot].contains(id, ordinal))
    }
}

/// The owners of a run whose entries there a removal or a newer run may
/// hide (a superset), with their positions by kind: a lookup needs neither
/// the owner's id nor its name for a hit outside them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hideable {
    /// Owner ids, ascending.
    owners: Vec<u32>,
    /// Their positions by kind slot, ascending.
    positions: [Vec<std::ops::Range<u32>>; KIND_COUNT],
}

impl Hideable {
    fn add(&mut self, base: &Base, id: u32) {
        let Err(at) = self.owners.binary_search(&id) else {
            return;
        };
        self.owners.insert(at, id);
        for (slot, ranges) in self.positions.iter_mut().enumerate() {
            if let Some(range) = positions_of(base, slot, id) {
                let at = ranges.partition_point(|held| held.start < range.start);
                ranges.insert(at, range);
            }
        }
    }

    /// Whether the entry at `position` of kind `slot` may be hidden.
    fn covers(&self, slot: usize, position: u32) -> bool {
        let ranges = &self.positions[slot];
        let after = ranges.partition_point(|range| range.start <= position);
        after > 0 && ranges[after - 1].contains(&position)
    }
}

/// The positions of owner `id`'s entries of kind `slot` in `base`, if any.
fn positions_of(base: &Base, slot: usize, id: u32) -> Option<std::ops::Range<u32>> {
    let range = base.kinds[slot].positions_of(id);
    // Positions fit u32: checked when the base was built.
    (!range.is_empty()).then_some(range.start as u32..range.end as u32)
}

/// Recent writes not yet in a run; owners numbered by first write.
#[derive(Clone, Debug, Default)]
pub(crate) struct Delta {
    pub owners: Vec<String>,
    owner_ids: HashMap<String, u32>,
    pub kinds: [DeltaKind; KIND_COUNT],
}

/// Recent entries of one kind, scanned linearly.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeltaKind {
    pub fingerprints: Vec<u64>,
    /// (owner id, ordinal) by position.
    pub keys: Vec<(u32, u32)>,
    positions: HashMap<(u32, u32), usize>,
}

impl DeltaKind {
    fn upsert(&mut self, key: (u32, u32), fingerprint: u64) {
        if let Some(&position) = self.positions.get(&key) {
            self.fingerprints[position] = fingerprint;
            return;
        }
        self.positions.insert(key, self.fingerprints.len());
        self.keys.push(key);
        self.fingerprints.push(fingerprint);
    }

    fn retain_owners(&mut self, removed: &HashSet<u32>) {
        let mut kept = DeltaKind::default();
        for (key, fingerprint) in self.keys.iter().zip(&self.fingerprints) {
            if !removed.contains(&key.0) {
                kept.upsert(*key, *fingerprint);
            }
        }
        *self = kept;
    }

    fn shadows(&self, key: (u32, u32)) -> bool {
        self.positions.contains_key(&key)
    }
}

impl Delta {
    fn len(&self) -> usize {
        self.kinds.iter().map(|kind| kind.fingerprints.len()).sum()
    }

    /// The owners this delta holds entries of kind `slot` for (the owners
    /// whose entries of that kind in a run it may hide), each once.
    fn owners_of(&self, slot: usize) -> Vec<&str> {
        let mut ids: Vec<u32> = self.kinds[slot].keys.iter().map(|key| key.0).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .map(|id| self.owners[id as usize].as_str())
            .collect()
    }

    /// Whether the delta holds (owner name, kind slot, ordinal).
    fn holds(&self, name: &str, slot: usize, ordinal: u32) -> bool {
        !self.kinds[slot].positions.is_empty()
            && self
                .owner_ids
                .get(name)
                .is_some_and(|&id| self.kinds[slot].shadows((id, ordinal)))
    }

    /// The delta as a base: owners sorted by name, entries by (owner, ordinal).
    fn to_base(&self, layout: &SegmentLayout) -> Result<Base> {
        let mut order: Vec<u32> = (0..self.owners.len() as u32).collect();
        order.sort_unstable_by(|left, right| {
            self.owners[*left as usize].cmp(&self.owners[*right as usize])
        });
        let mut used = vec![false; self.owners.len()];
        for kind in &self.kinds {
            for key in &kind.keys {
                used[key.0 as usize] = true;
            }
        }
        let mut rank = vec![u32::MAX; self.owners.len()];
        let mut names = Vec::new();
        for id in order {
            if used[id as usize] {
                rank[id as usize] = names.len() as u32;
                names.push(self.owners[id as usize].clone());
            }
        }
        let mut entries: [Vec<RawEntry>; KIND_COUNT] = Default::default();
        for (collected, kind) in entries.iter_mut().zip(&self.kinds) {
            *collected = kind
                .keys
                .iter()
                .zip(&kind.fingerprints)
                .map(|(key, fingerprint)| (rank[key.0 as usize], key.1, *fingerprint))
                .collect();
            collected.sort_unstable_by_key(|entry| (entry.0, entry.1));
        }
        Base::build(layout, &names, entries)
    }
}

/// Runs and the writes after them: what readers see.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub layout: SegmentLayout,
    /// Oldest first.
    pub runs: Vec<Arc<Run>>,
    /// What each run (same index) may have hidden.
    hideable: Vec<Arc<Hideable>>,
    pub delta: Delta,
    /// Sequence number of the last write applied.
    seq: u64,
    /// Owner -> sequence number of its last removal: it hides the owner's
    /// entries in runs older than it. Only owners some run held.
    removed: Arc<HashMap<String, u64>>,
    /// Owners that may have entries in more than one run (a superset): only
    /// their hits are checked for a newer version in a newer run.
    multi: Arc<HashSet<String>>,
}

impl State {
    /// A state of one base (none when it is empty) and nothing else.
    pub fn of_base(layout: &SegmentLayout, base: Base) -> Self {
        let runs = if base.kinds.iter().all(|kind| kind.len() == 0) {
            Vec::new()
        } else {
            vec![Arc::new(Run { base, seq: 0 })]
        };
        Self {
            layout: layout.clone(),
            hideable: vec![Arc::default(); runs.len()],
            runs,
            delta: Delta::default(),
            seq: 0,
            removed: Arc::default(),
            multi: Arc::default(),
        }
    }

    /// The one base of a compacted state (an empty one when it holds nothing).
    pub fn single_base(&self) -> Result<Arc<Run>> {
        match self.runs.as_slice() {
            [] if self.delta.len() == 0 => Ok(Arc::new(Run {
                base: Base::build(&self.layout, &[], Default::default())?,
                seq: self.seq,
            })),
            [run] if self.delta.len() == 0 && self.removed.is_empty() => Ok(Arc::clone(run)),
            _ => Err(copyhound_core::Error::internal(
                "the index state is not compacted",
            )),
        }
    }

    /// Returns the number of live entries.
    pub fn entry_count(&self) -> u64 {
        let mut count = self.delta.len() as u64;
        for (index, run) in self.runs.iter().enumerate() {
            let newer = &self.runs[index + 1..];
            for owner in 0..run.base.owners.len() as u32 {
                let name = run.base.owners.name(owner);
                if self.removed_after(name, run.seq) {
                    continue;
                }
                for (slot, tables) in run.base.kinds.iter().enumerate() {
                    count += tables
                        .ordinals_of(owner)
                        .filter(|ordinal| !self.hidden(name, slot, *ordinal, newer))
                        .count() as u64;
                }
            }
        }
        count
    }

    /// Returns the number of delta entries.
    pub fn delta_len(&self) -> usize {
        self.delta.len()
    }

    /// Whether no owner is removed from a run or written in two.
    #[cfg(test)]
    pub fn rewrites_nothing(&self) -> bool {
        self.removed.is_empty() && self.multi.is_empty()
    }

    /// Returns the number of runs.
    #[cfg(test)]
    pub fn run_count(&self) -> usize {
        self.runs.len()
    }

    /// Returns the heap bytes of the state.
    pub fn memory_bytes(&self) -> u64 {
        let runs: u64 = self
            .runs
            .iter()
            .map(|run| {
                run.base.owners.memory_bytes()
                    + run
                        .base
                        .kinds
                        .iter()
                        .map(KindTables::memory_bytes)
                        .sum::<u64>()
            })
            .sum();
        let delta_owners: usize = self.delta.owners.iter().map(|name| name.len() + 64).sum();
        let bookkeeping: usize = self
            .removed
            .keys()
            .chain(self.multi.iter())
            .map(|name| name.len() + 48)
            .sum();
        runs + self.delta_len() as u64 * 48 + delta_owners as u64 + bookkeeping as u64
    }

    fn removed_after(&self, name: &str, seq: u64) -> bool {
        !self.removed.is_empty() && self.removed.get(name).is_some_and(|at| *at > seq)
    }

    /// Whether a newer run or the delta holds a newer version of the entry.
    fn hidden(&self, name: &str, slot: usize, ordinal: u32, newer: &[Arc<Run>]) -> bool {
        (!self.multi.is_empty()
            && self.multi.contains(name)
            && newer.iter().any(|run| run.holds(name, slot, ordinal)))
            || self.delta.holds(name, slot, ordinal)
    }

    /// Applies one write to a state no reader holds yet (the writer's
    /// copy); a full delta becomes a run, and runs merge.
    pub fn apply(&mut self, op: &LogOp) -> Result<()> {
        self.seq += 1;
        match op {
            LogOp::Insert(entries) => self.insert(entries),
            LogOp::RemoveOwners(owners) => self.remove(owners),
        }
        if self.delta.len() > DELTA_LIMIT {
            self.freeze()?;
        }
        if self.removed.len() > self.owner_total() / 8 + 64 {
            // Many removed owners: drop their entries for good.
            *self = self.compacted()?;
        }
        Ok(())
    }

    fn owner_total(&self) -> usize {
        self.runs.iter().map(|run| run.base.owners.len()).sum()
    }

    fn insert(&mut self, entries: &[IndexEntry]) {
        for entry in entries {
            // A write's entries share an owner: look it up before cloning.
            let owner = match self.delta.owner_ids.get(&entry.owner) {
                Some(&id) => id,
                None => {
                    let id = self.delta.owners.len() as u32;
                    self.delta.owner_ids.insert(entry.owner.clone(), id);
                    self.delta.owners.push(entry.owner.clone());
                    id
                }
            };
            self.delta.kinds[kind_slot(entry.kind)]
                .upsert((owner, entry.ordinal), entry.fingerprint);
        }
    }

    fn remove(&mut self, owners: &[String]) {
        let mut in_delta = HashSet::new();
        for name in owners {
            if let Some(&id) = self.delta.owner_ids.get(name) {
                in_delta.insert(id);
            }
            if self.mark_hideable(name) {
                Arc::make_mut(&mut self.removed).insert(name.clone(), self.seq);
            }
        }
        if !in_delta.is_empty() {
            for kind in &mut self.delta.kinds {
                kind.retain_owners(&in_delta);
            }
        }
    }

    /// Marks `name`'s entries hideable in every run that holds it (a removal
    /// or a newer write is coming); returns whether any does.
    fn mark_hideable(&mut self, name: &str) -> bool {
        let mut held = false;
        for (run, hideable) in self.runs.iter().zip(&mut self.hideable) {
            if let Some(id) = run.base.owners.find(name) {
                held = true;
                Arc::make_mut(hideable).add(&run.base, id);
            }
        }
        held
    }

    /// Turns the delta into the newest run, then merges while the older of
    /// the two newest runs is no larger than the newer.
    fn freeze(&mut self) -> Result<()> {
        let base = self.delta.to_base(&self.layout)?;
        // Owners written again: their older entries are checked on every hit.
        let mut rewritten = Vec::new();
        for id in 0..base.owners.len() as u32 {
            let name = base.owners.name(id);
            if self.mark_hideable(name) {
                rewritten.push(name.to_owned());
            }
        }
        if !rewritten.is_empty() {
            Arc::make_mut(&mut self.multi).extend(rewritten);
        }
        self.delta = Delta::default();
        self.runs.push(Arc::new(Run {
            base,
            seq: self.seq,
        }));
        self.hideable.push(Arc::default());
        while let [.., older, newer] = self.runs.as_slice()
            && older.len() <= newer.len()
        {
            self.merge_newest()?;
        }
        Ok(())
    }

    /// Merges the two newest runs into one. Nothing can hide the merged
    /// run's entries yet: the merge drops what removals hid, and no run is
    /// newer (later removals and rewrites mark it, as any run).
    fn merge_newest(&mut self) -> Result<()> {
        let at = self.runs.len() - 2;
        let merged = self.merge(&self.runs[at], &self.runs[at + 1])?;
        self.runs.truncate(at);
        self.hideable.truncate(at);
        self.runs.push(Arc::new(merged));
        self.hideable.push(Arc::default());
        Ok(())
    }

    /// Everything in one run: entries hidden by newer versions or removals are dropped.
    pub fn compacted(&self) -> Result<State> {
        let mut next = self.clone();
        if next.delta.len() > 0 {
            next.freeze()?;
        }
        while next.runs.len() > 1 {
            next.merge_newest()?;
        }
        if let Some(run) = next.runs.pop() {
            let run = if next.removed.is_empty() {
                run
            } else {
                Arc::new(next.merge_one(&run)?)
            };
            next.runs.push(run);
        }
        next.removed = Arc::default();
        next.multi = Arc::default();
        if next.runs.first().is_some_and(|run| run.len() == 0) {
            next.runs.clear();
        }
        // Nothing is removed or in two runs any more.
        next.hideable = vec![Arc::default(); next.runs.len()];
        Ok(next)
    }

    /// One run without the entries removals hide.
    fn merge_one(&self, run: &Run) -> Result<Run> {
        let empty = Run {
            base: Base::build(&self.layout, &[], Default::default())?,
            seq: 0,
        };
        self.merge(run, &empty).map(|merged| Run {
            seq: run.seq,
            ..merged
        })
    }

    /// `older` and `newer` as one run: a key in both keeps the newer value,
    /// and entries a removal hides are dropped.
    fn merge(&self, older: &Run, newer: &Run) -> Result<Run> {
        let (old_names, new_names) = (&older.base.owners, &newer.base.owners);
        let old_dead: Vec<bool> = (0..old_names.len() as u32)
            .map(|id| self.removed_after(old_names.name(id), older.seq))
            .collect();
        let new_dead: Vec<bool> = (0..new_names.len() as u32)
            .map(|id| self.removed_after(new_names.name(id), newer.seq))
            .collect();
        // Both name lists are sorted: merge them, numbering the live ones.
        let mut names: Vec<String> = Vec::new();
        let mut old_ids = vec![u32::MAX; old_names.len()];
        let mut new_ids = vec![u32::MAX; new_names.len()];
        let (mut left, mut right) = (0_usize, 0_usize);
        while left < old_names.len() || right < new_names.len() {
            let order = match (left < old_names.len(), right < new_names.len()) {
                (true, true) => old_names
                    .name(left as u32)
                    .cmp(new_names.name(right as u32)),
                (true, false) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let id = names.len() as u32;
            let take_old = order != std::cmp::Ordering::Greater;
            let take_new = order != std::cmp::Ordering::Less;
            let live = (take_old && !old_dead[left]) || (take_new && !new_dead[right]);
            if live {
                let name = if take_new {
                    new_names.name(right as u32)
                } else {
                    old_names.name(left as u32)
                };
                names.push(name.to_owned());
            }
            if take_old {
                old_ids[left] = if live && !old_dead[left] {
                    id
                } else {
                    u32::MAX
                };
                left += 1;
            }
            if take_new {
                new_ids[right] = if live && !new_dead[right] {
                    id
                } else {
                    u32::MAX
                };
                right += 1;
            }
        }
        let mut entries: [Vec<RawEntry>; KIND_COUNT] = Default::default();
        for (slot, collected) in entries.iter_mut().enumerate() {
            let renumber = |run: &Run, ids: &[u32]| -> Vec<RawEntry> {
                run.base
                    .raw_entries(slot)
                    .filter(|entry| ids[entry.0 as usize] != u32::MAX)
                    .map(|(owner, ordinal, fingerprint)| {
                        (ids[owner as usize], ordinal, fingerprint)
                    })
                    .collect()
            };
            let old_part = renumber(older, &old_ids);
            let new_part = renumber(newer, &new_ids);
            *collected = merge_newer(old_part, new_part);
        }
        Ok(Run {
            base: Base::build(&self.layout, &names, entries)?,
            seq: newer.seq,
        })
    }

    /// Returns, per query, every live entry of `kind` within `max_distance`
    /// whose owner starts with `owner_prefix`, or `None` once a query has
    /// more than `max_hits` hits of any owner (no hit is materialised past the
    /// cap, nor one of another owner).
    pub fn query_many(
        &self,
        kind: EntryKind,
        queries: &[u64],
        max_distance: u32,
        max_hits: usize,
        owner_prefix: &str,
    ) -> Vec<Option<Vec<IndexHit>>> {
        let slot = kind_slot(kind);
        let mut counts = vec![0_usize; queries.len()];
        let mut results: Vec<Option<Vec<IndexHit>>> = vec![Some(Vec::new()); queries.len()];
        // A hit of an owner outside the prefix that nothing may hide (no
        // removal, newer run or delta entry of its owner) only counts toward
        // the cap: it needs neither its owner's id nor its name.
        let in_delta = if owner_prefix.is_empty() {
            Vec::new()
        } else {
            self.delta.owners_of(slot)
        };
        for (index, run) in self.runs.iter().enumerate() {
            let newer = &self.runs[index + 1..];
            let hideable = &self.hideable[index];
            let tables = &run.base.kinds[slot];
            let owners = &run.base.owners;
            let (owned, shadowed) = if !owner_prefix.is_empty() {
                let prefixed = owners.prefix_range(owner_prefix);
                (
                    tables.owner_starts[prefixed.start as usize]
                        ..tables.owner_starts[prefixed.end as usize],
                    in_delta
                        .iter()
                        .filter_map(|name| owners.find(name))
                        .filter_map(|id| positions_of(&run.base, slot, id))
                        .collect::<Vec<_>>(),
                )
            } else {
                (0..u32::MAX, Vec::new())
            };
            tables.query_many(&self.layout, queries, max_distance, owned, |group| {
                // Load the hits' names first: their misses overlap.
                let touched = group.iter().filter(|found| found.owner != NO_OWNER).fold(
                    0_u8,
                    |acc, found| {
                        acc ^ owners
                            .name(found.owner)
                            .as_bytes()
                            .first()
                            .copied()
                            .unwrap_or(0)
                    },
                );
                std::hint::black_box(touched);
                for found in group {
                    let query = found.query;
                    if counts[query] > max_hits {
                        continue;
                    }
                    // The live hit's (name, ordinal), or None when it only counts.
                    let live = if found.owner != NO_OWNER
                        || hideable.covers(slot, found.position)
                        || shadowed.iter().any(|range| range.contains(&found.position))
                    {
                        let owner = match found.owner {
                            NO_OWNER => tables.owner_of(found.position),
                            owner => owner,
                        };
                        let ordinal = tables.ordinal(owner, found.position);
                        let name = owners.name(owner);
                        if self.removed_after(name, run.seq)
                            || self.hidden(name, slot, ordinal, newer)
                        {
                            continue;
                        }
                        Some((name, ordinal))
                    } else {
                        None
                    };
                    counts[query] += 1;
                    match &mut results[query] {
                        Some(hits) if counts[query] <= max_hits => {
                            if let Some((name, ordinal)) = live
                                && name.starts_with(owner_prefix)
                            {
                                hits.push(hit(
                                    kind,
                                    name,
                                    ordinal,
                                    tables.fingerprints[found.position as usize],
                                    found.distance,
                                ));
                            }
                        }
                        result => *result = None,
                    }
                }
            });
        }
        let recent = &self.delta.kinds[slot];
        if recent.keys.is_empty() {
            return results;
        }
        for ((result, count), &query) in results.iter_mut().zip(&mut counts).zip(queries) {
            for (key, &fingerprint) in recent.keys.iter().zip(&recent.fingerprints) {
                let Some(hits) = result else {
                    break;
                };
                let distance = hamming(fingerprint, query);
                if distance <= max_distance {
                    *count += 1;
                    if *count > max_hits {
                        *result = None;
                        break;
                    }
                    let owner = &self.delta.owners[key.0 as usize];
                    if owner.starts_with(owner_prefix) {
                        hits.push(hit(kind, owner, key.1, fingerprint, distance));
                    }
                }
            }
        }
        results
    }
}

fn hit(kind: EntryKind, owner: &str, ordinal: u32, fingerprint: u64, distance: u32) -> IndexHit {
    IndexHit {
        entry: IndexEntry {
            owner: owner.to_owned(),
            kind,
            ordinal,
            fingerprint,
        },
        distance,
    }
}

/// Merges two lists sorted by (owner, ordinal); a key in both keeps `newer`'s.
fn merge_newer(older: Vec<RawEntry>, newer: Vec<RawEntry>) -> Vec<RawEntry> {
    if newer.is_empty() {
        return older;
    }
    let mut merged = Vec::with_capacity(older.len() + newer.len());
    let mut newer = newer.into_iter().peekable();
    for item in older {
        while let Some(next) = newer.next_if(|next| (next.0, next.1) <= (item.0, item.1)) {
            let same = (next.0, next.1) == (item.0, item.1);
            merged.push(next);
            if same {
                break;
            }
        }
        if merged
            .last()
            .is_some_and(|last: &RawEntry| (last.0, last.1) == (item.0, item.1))
        {
            continue;
        }
        merged.push(item);
    }
    merged.extend(newer);
    merged
}
