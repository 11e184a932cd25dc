//! One immutable state of the in-memory index: a compacted `Base` (sorted owner
//! names, one multi-index per kind) and a small `Delta` of recent writes
//! (new entries scanned linearly, removed base owners, base entries shadowed by
//! a newer value). Writers derive a new state and swap it in; readers keep the
//! `Arc` they took, so a query sees one state from start to end.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use copyhound_core::Result;
use copyhound_core::ports::{EntryKind, IndexEntry, IndexHit};

use super::tables::{KindTables, RawEntry};
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

    /// Reads the end and last byte of a name (a load to overlap with others).
    pub fn touch(&self, id: u32) -> u8 {
        let end = self.ends[id as usize];
        self.bytes
            .as_bytes()
            .get(end.saturating_sub(1))
            .copied()
            .unwrap_or(0)
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
        Ok(Self {
            owners: OwnerNames::from_sorted(names),
            kinds: [
                KindTables::build(layout, &documents, names.len())?,
                KindTables::build(layout, &passages, names.len())?,
                KindTables::build(layout, &dna, names.len())?,
                KindTables::build(layout, &anchors, names.len())?,
            ],
        })
    }

    /// Returns every entry of a kind as (owner id, ordinal, fingerprint), in (owner, ordinal) order.
    pub fn raw_entries(&self, slot: usize) -> impl Iterator<Item = RawEntry> + '_ {
        let tables = &self.kinds[slot];
        (0..self.owners.len()).flat_map(move |owner| {
            let range =
                tables.owner_starts[owner] as usize..tables.owner_starts[owner + 1] as usize;
            range.map(move |position| {
                (
                    owner as u32,
                    tables.ordinals[position],
                    tables.fingerprints[position],
                )
            })
        })
    }
}

/// Recent writes not yet compacted into the base.
#[derive(Clone, Debug, Default)]
pub(crate) struct Delta {
    /// Owners unknown to the base; their ids follow the base's.
    pub new_owners: Vec<String>,
    new_owner_ids: HashMap<String, u32>,
    /// Base owners whose base entries are removed.
    pub dead_base_owners: HashSet<u32>,
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

    pub fn shadows(&self, key: (u32, u32)) -> bool {
        self.positions.contains_key(&key)
    }
}

/// A base and the writes after it: what readers see.
#[derive(Debug)]
pub(crate) struct State {
    pub layout: SegmentLayout,
    pub base: Arc<Base>,
    pub delta: Delta,
}

impl State {
    /// Returns the number of live entries.
    pub fn entry_count(&self) -> u64 {
        let mut count = 0_u64;
        for (slot, tables) in self.base.kinds.iter().enumerate() {
            let recent = &self.delta.kinds[slot];
            count += (tables.len() + recent.fingerprints.len()) as u64;
            for &owner in &self.delta.dead_base_owners {
                count -= u64::from(
                    tables.owner_starts[owner as usize + 1] - tables.owner_starts[owner as usize],
                );
            }
            let shadowed = recent.keys.iter().filter(|(owner, ordinal)| {
                (*owner as usize) < self.base.owners.len()
                    && !self.delta.dead_base_owners.contains(owner)
                    && tables.contains(*owner, *ordinal)
            });
            count -= shadowed.count() as u64;
        }
        count
    }

    /// Returns the number of base entries (dead ones included).
    pub fn base_len(&self) -> usize {
        self.base.kinds.iter().map(KindTables::len).sum()
    }

    /// Returns the number of delta entries.
    pub fn delta_len(&self) -> usize {
        self.delta
            .kinds
            .iter()
            .map(|kind| kind.fingerprints.len())
            .sum()
    }

    /// Returns the heap bytes of the state.
    pub fn memory_bytes(&self) -> u64 {
        let base = self.base.owners.memory_bytes()
            + self
                .base
                .kinds
                .iter()
                .map(KindTables::memory_bytes)
                .sum::<u64>();
        let delta_entries = self.delta_len() as u64;
        let delta_owners: usize = self
            .delta
            .new_owners
            .iter()
            .map(|name| name.len() + 64)
            .sum();
        base + delta_entries * 48
            + delta_owners as u64
            + self.delta.dead_base_owners.len() as u64 * 16
    }

    fn owner_id(&self, name: &str) -> Option<u32> {
        self.base
            .owners
            .find(name)
            .or_else(|| self.delta.new_owner_ids.get(name).copied())
    }

    fn owner_name(&self, id: u32) -> &str {
        let base_count = self.base.owners.len();
        if (id as usize) < base_count {
            return self.base.owners.name(id);
        }
        &self.delta.new_owners[id as usize - base_count]
    }

    /// Returns a delta with `entries` applied (later entries win).
    pub fn delta_with_inserts(&self, entries: &[IndexEntry]) -> Delta {
        let mut delta = self.delta.clone();
        for entry in entries {
            let owner = match self.owner_id(&entry.owner) {
                Some(id) => id,
                None => {
                    let id = u32::try_from(self.base.owners.len() + delta.new_owners.len())
                        .expect("fewer than 2^32 owners");
                    let id = *delta.new_owner_ids.entry(entry.owner.clone()).or_insert(id);
                    if id as usize == self.base.owners.len() + delta.new_owners.len() {
                        delta.new_owners.push(entry.owner.clone());
                    }
                    id
                }
            };
            delta.kinds[kind_slot(entry.kind)].upsert((owner, entry.ordinal), entry.fingerprint);
        }
        delta
    }

    /// Returns a delta without any entry of `owners`.
    pub fn delta_with_removals(&self, owners: &[String]) -> Delta {
        let mut delta = self.delta.clone();
        let mut removed = HashSet::new();
        for name in owners {
            if let Some(id) = self.base.owners.find(name) {
                delta.dead_base_owners.insert(id);
                removed.insert(id);
            } else if let Some(&id) = delta.new_owner_ids.get(name) {
                removed.insert(id);
            }
        }
        for kind in &mut delta.kinds {
            kind.retain_owners(&removed);
        }
        delta
    }

    /// Returns, per query, every live entry of `kind` within `max_distance`,
    /// or `None` once a query has more than `max_hits` hits (no hit is
    /// materialised past the cap).
    pub fn query_many(
        &self,
        kind: EntryKind,
        queries: &[u64],
        max_distance: u32,
        max_hits: usize,
    ) -> Vec<Option<Vec<IndexHit>>> {
        let slot = kind_slot(kind);
        let tables = &self.base.kinds[slot];
        let recent = &self.delta.kinds[slot];
        // Base hits are gathered as ids first; their names are read in a
        // second pass, whose loads overlap instead of stalling one hit at a time.
        let mut counts = vec![0_usize; queries.len()];
        let mut found: Vec<(u32, u32, u32, u64, u32)> = Vec::new();
        tables.query_many(
            &self.layout,
            queries,
            max_distance,
            |query, position, distance| {
                if counts[query] > max_hits {
                    return;
                }
                let owner = tables.owner_of(position);
                let ordinal = tables.ordinals[position as usize];
                // Most queries run with an empty delta: skip the hash lookups then.
                if (!self.delta.dead_base_owners.is_empty()
                    && self.delta.dead_base_owners.contains(&owner))
                    || (!recent.positions.is_empty() && recent.shadows((owner, ordinal)))
                {
                    return;
                }
                counts[query] += 1;
                if counts[query] <= max_hits {
                    let fingerprint = tables.fingerprints[position as usize];
                    found.push((query as u32, owner, ordinal, fingerprint, distance));
                }
            },
        );
        let touched = found
            .iter()
            .fold(0_u8, |acc, hit| acc ^ self.base.owners.touch(hit.1));
        std::hint::black_box(touched);
        let mut results: Vec<Option<Vec<IndexHit>>> = counts
            .iter()
            .map(|&count| (count <= max_hits).then(|| Vec::with_capacity(count)))
            .collect();
        for (query, owner, ordinal, fingerprint, distance) in found {
            if let Some(hits) = &mut results[query as usize] {
                hits.push(self.hit(kind, owner, ordinal, fingerprint, distance));
            }
        }
        if recent.keys.is_empty() {
            return results;
        }
        for (result, &query) in results.iter_mut().zip(queries) {
            for (key, &fingerprint) in recent.keys.iter().zip(&recent.fingerprints) {
                let Some(hits) = result else {
                    break;
                };
                if hamming(fingerprint, query) <= max_distance {
                    if hits.len() == max_hits {
                        *result = None;
                        break;
                    }
                    hits.push(self.hit(
                        kind,
                        key.0,
                        key.1,
                        fingerprint,
                        hamming(fingerprint, query),
                    ));
                }
            }
        }
        results
    }

    fn hit(
        &self,
        kind: EntryKind,
        owner: u32,
        ordinal: u32,
        fingerprint: u64,
        distance: u32,
    ) -> IndexHit {
        let owner = self.owner_name(owner).to_owned();
        IndexHit {
            entry: IndexEntry {
                owner,
                kind,
                ordinal,
                fingerprint,
            },
            distance,
        }
    }

    /// Returns a base holding every live entry (base minus dead and shadowed, plus delta).
    pub fn compact(&self) -> Result<Base> {
        let base_owners = self.base.owners.len();
        let total_owners = base_owners + self.delta.new_owners.len();
        // Only base owners the delta removes or writes need the hash lookups.
        let mut touched = vec![false; base_owners];
        for &owner in &self.delta.dead_base_owners {
            touched[owner as usize] = true;
        }
        for kind in &self.delta.kinds {
            for &(owner, _) in &kind.keys {
                if let Some(flag) = touched.get_mut(owner as usize) {
                    *flag = true;
                }
            }
        }
        let mut used = vec![false; total_owners];
        let mut base_parts: [Vec<RawEntry>; KIND_COUNT] = Default::default();
        let mut delta_parts: [Vec<RawEntry>; KIND_COUNT] = Default::default();
        for slot in 0..KIND_COUNT {
            let recent = &self.delta.kinds[slot];
            base_parts[slot].extend(self.base.raw_entries(slot).filter(|(owner, ordinal, _)| {
                !touched[*owner as usize]
                    || (!self.delta.dead_base_owners.contains(owner)
                        && !recent.shadows((*owner, *ordinal)))
            }));
            delta_parts[slot].extend(
                recent
                    .keys
                    .iter()
                    .zip(&recent.fingerprints)
                    .map(|(key, fp)| (key.0, key.1, *fp)),
            );
            for entry in base_parts[slot].iter().chain(&delta_parts[slot]) {
                used[entry.0 as usize] = true;
            }
        }
        // Base ids are ranks in name order already: sort only the new owners, then merge.
        let mut new_live: Vec<u32> = (base_owners as u32..total_owners as u32)
            .filter(|id| used[*id as usize])
            .collect();
        new_live
            .sort_unstable_by(|left, right| self.owner_name(*left).cmp(self.owner_name(*right)));
        let base_live: Vec<u32> = (0..base_owners as u32)
            .filter(|id| used[*id as usize])
            .collect();
        let live = merge_sorted(base_live, new_live, |left, right| {
            self.owner_name(*left) <= self.owner_name(*right)
        });
        let mut renumbered = vec![0_u32; total_owners];
        for (new_id, old_id) in live.iter().enumerate() {
            renumbered[*old_id as usize] = new_id as u32;
        }
        let names: Vec<String> = live
            .iter()
            .map(|id| self.owner_name(*id).to_owned())
            .collect();
        let mut entries: [Vec<RawEntry>; KIND_COUNT] = Default::default();
        for ((collected, base_part), mut delta_part) in
            entries.iter_mut().zip(base_parts).zip(delta_parts)
        {
            // Renumbering keeps base owners in order, so the base part stays sorted.
            let renumber = |entries: &mut Vec<RawEntry>| {
                for entry in entries.iter_mut() {
                    entry.0 = renumbered[entry.0 as usize];
                }
            };
            let mut base_part = base_part;
            renumber(&mut base_part);
            renumber(&mut delta_part);
            delta_part.sort_unstable_by_key(|entry| (entry.0, entry.1));
            *collected = merge_sorted(base_part, delta_part, |left, right| {
                (left.0, left.1) <= (right.0, right.1)
            });
        }
        Base::build(&self.layout, &names, entries)
    }
}

/// Merges two sorted vectors; `first(l, r)` says whether `l` goes before `r`.
fn merge_sorted<T: Copy>(left: Vec<T>, right: Vec<T>, first: impl Fn(&T, &T) -> bool) -> Vec<T> {
    if right.is_empty() {
        return left;
    }
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let mut right = right.into_iter().peekable();
    for item in left {
        while let Some(next) = right.next_if(|next| !first(&item, next)) {
            merged.push(next);
        }
        merged.push(item);
    }
    merged.extend(right);
    merged
}
