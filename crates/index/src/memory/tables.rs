//! The immutable multi-index of one entry kind: fingerprints stored once, in
//! owner order, and one table per segment holding the entries' positions
//! grouped by bucket (a counting sort, so building is linear).
//!
//! Each table keeps, beside every position, a 16-bit filter: the fingerprint
//! bits that follow the bucket. Any bit subset of a neighbour within distance
//! `k` differs in at most `k` bits, so an entry whose filter differs in more
//! is rejected without touching the fingerprint array. A later table allows
//! fewer differing bits (`SegmentLayout::differing_allowed`): at 10M random
//! entries about 1% of the first table's bucket passes and 0.03% of the
//! last's. Filters and positions are separate arrays: a query scans 2 bytes
//! per bucket entry and reads a position only when its filter passes.
//! Positions take as many bytes as the kind's size needs (3 up to 16M
//! entries), and ordinals are stored only for owners whose ordinals are not
//! `0..n`: 5 bytes per entry and table, 8 for the fingerprint, and about 2
//! for owners, against 44 with the former 64-bit slots at 10M.

use copyhound_core::{Error, ErrorKind, Result};

use crate::layout::{SegmentLayout, hamming};

/// Bucket keys never exceed this many bits (bounds the offsets array).
const MAX_BUCKET_BITS: u32 = 24;

/// Bits of the per-entry filter.
const FILTER_BITS: u32 = 16;

/// Positions per `owner_blocks` entry: log2.
const OWNER_BLOCK_BITS: u32 = 6;

/// Filters per 64-byte cache line: filters are prefetched line by line.
const LINE_FILTERS: usize = 32;

/// Queries interleaved per group in [`KindTables::query_many`].
const GROUP: usize = 16;

/// One entry in build order: (owner id, ordinal, fingerprint).
pub(crate) type RawEntry = (u32, u32, u64);

/// An entry found by [`KindTables::query_many`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Found {
    /// Index of the query in the batch.
    pub query: usize,
    pub position: u32,
    /// The owner id, or [`NO_OWNER`] when the position is outside the
    /// range the caller asked owners for.
    pub owner: u32,
    pub distance: u32,
}

/// [`Found::owner`] of a hit whose owner was not looked up.
pub(crate) const NO_OWNER: u32 = u32::MAX;

/// One segment table: entries grouped by bucket (the top bits of the segment).
#[derive(Debug)]
struct Table {
    bucket_bits: u32,
    offsets: Vec<u32>,
    /// The 16 fingerprint bits after the bucket, by slot.
    filters: Vec<u16>,
    /// Entry positions by slot.
    positions: Packed,
}

/// Unsigned integers of `width` bytes (1 to 4), little-endian, back to back,
/// with 3 bytes of padding so that every read is one 4-byte load.
#[derive(Debug)]
struct Packed {
    width: usize,
    mask: u32,
    bytes: Vec<u8>,
}

impl Packed {
    /// Returns `count` zeros of the width that values below `1 << bits` need.
    fn zeros(count: usize, bits: u32) -> Self {
        let width = bits.div_ceil(8).clamp(1, 4) as usize;
        Self {
            width,
            mask: (u64::from(u32::MAX) >> (32 - 8 * width as u32)) as u32,
            bytes: vec![0; count * width + 3],
        }
    }

    /// Stores `value` (which fits the width) at `index`.
    #[inline]
    fn set(&mut self, index: usize, value: u32) {
        let at = index * self.width;
        self.bytes[at..at + self.width].copy_from_slice(&value.to_le_bytes()[..self.width]);
    }

    #[inline]
    fn get(&self, index: usize) -> u32 {
        let at = index * self.width;
        let mut word = [0_u8; 4];
        word.copy_from_slice(&self.bytes[at..at + 4]);
        u32::from_le_bytes(word) & self.mask
    }

    #[inline]
    fn prefetch(&self, index: usize) {
        prefetch_index::prefetch_index(&self.bytes, index * self.width);
    }

    fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }
}

/// Ordinals of the owners whose entries are not numbered `0..n` in position
/// order; every other owner's ordinal is its position minus its first.
#[derive(Debug, Default)]
struct Ordinals {
    /// (owner, offset of its first ordinal in `values`), by owner.
    sparse: Vec<(u32, u32)>,
    values: Vec<u32>,
}

impl Ordinals {
    fn new(entries: &[RawEntry], owner_starts: &[u32]) -> Self {
        let mut ordinals = Self::default();
        for owner in 0..owner_starts.len().saturating_sub(1) {
            let range = owner_starts[owner] as usize..owner_starts[owner + 1] as usize;
            let dense = entries[range.clone()]
                .iter()
                .enumerate()
                .all(|(index, entry)| entry.1 as usize == index);
            if !dense {
                ordinals
                    .sparse
                    .push((owner as u32, ordinals.values.len() as u32));
                ordinals
                    .values
                    .extend(entries[range].iter().map(|entry| entry.1));
            }
        }
        ordinals.sparse.shrink_to_fit();
        ordinals.values.shrink_to_fit();
        ordinals
    }

    /// Returns the stored ordinals of `owner`, or `None` when they are `0..n`.
    #[inline]
    fn of(&self, owner: u32) -> Option<u32> {
        if self.sparse.is_empty() {
            return None;
        }
        self.sparse
            .binary_search_by_key(&owner, |entry| entry.0)
            .ok()
            .map(|index| self.sparse[index].1)
    }

    fn heap_bytes(&self) -> usize {
        self.sparse.capacity() * 8 + self.values.capacity() * 4
    }
}

/// Filters per chunk of [`scan`]; filter arrays carry this many of padding.
const CHUNK: usize = 16;

/// Calls `pass(slot)` for each slot in `range` whose filter is within `max_distance` of `query`.
///
/// A bucket holds about 150 filters per table at 10M entries, of which about
/// 1% pass, so filters are tested 16 at a time, lane-wise and branch-free
/// into a bit mask: the compiler turns that into vector code (a nibble-table
/// popcount). Chunks may run past the bucket into the next one or the
/// padding; lanes past the end are dropped, cheaper than a scalar tail.
#[inline]
fn scan(
    filters: &[u16],
    range: std::ops::Range<usize>,
    query: u16,
    max_distance: u32,
    mut pass: impl FnMut(usize),
) {
    let end = range.end;
    // Distances up to 16 fit a lane.
    let limit = max_distance.min(16) as u16;
    let mut base = range.start;
    while base < end {
        let chunk = &filters[base..base + CHUNK];
        let mut passing = chunk
            .iter()
            .enumerate()
            .fold(0_u32, |mask, (bit, &filter)| {
                mask | (u32::from((filter ^ query).count_ones() as u16 <= limit) << bit)
            });
        if end - base < CHUNK {
            passing &= (1 << (end - base)) - 1;
        }
        while passing != 0 {
            pass(base + passing.trailing_zeros() as usize);
            passing &= passing - 1;
        }
        base += CHUNK;
    }
}

/// The multi-index of one kind.
#[derive(Debug)]
pub(crate) struct KindTables {
    /// Fingerprints by position, sorted by (owner, ordinal).
    pub fingerprints: Vec<u64>,
    ordinals: Ordinals,
    /// `owner_starts[o]..owner_starts[o + 1]` are the positions of owner `o`.
    pub owner_starts: Vec<u32>,
    /// `owner_blocks[b]` owns position `b << OWNER_BLOCK_BITS` (clamped to the
    /// last position): narrows `owner_of` to a few owners.
    owner_blocks: Vec<u32>,
    tables: Vec<Table>,
}

impl KindTables {
    /// Builds the tables of `entries`, sorted by (owner, ordinal), for
    /// `owner_count` owners: the first `tables` of the layout's (at least
    /// one). Queries that need more tables than were built scan instead.
    pub fn build(
        layout: &SegmentLayout,
        entries: &[RawEntry],
        owner_count: usize,
        tables: usize,
    ) -> Result<Self> {
        let count = entries.len();
        let index_bits = index_bits(count)?;
        let fingerprints: Vec<u64> = entries.iter().map(|entry| entry.2).collect();
        let mut owner_starts = vec![0_u32; owner_count + 1];
        for entry in entries {
            owner_starts[entry.0 as usize + 1] += 1;
        }
        for owner in 0..owner_count {
            owner_starts[owner + 1] += owner_starts[owner];
        }
        let tables = (0..tables.clamp(1, layout.tables()))
            .map(|table| build_table(layout, table, &fingerprints, index_bits))
            .collect();
        let owner_blocks = if count == 0 {
            Vec::new()
        } else {
            let last = count as u32 - 1;
            (0..=(last >> OWNER_BLOCK_BITS) + 1)
                .map(|block| {
                    let position = (block << OWNER_BLOCK_BITS).min(last);
                    let after = owner_starts.partition_point(|start| *start <= position);
                    after.saturating_sub(1) as u32
                })
                .collect()
        };
        Ok(Self {
            ordinals: Ordinals::new(entries, &owner_starts),
            fingerprints,
            owner_starts,
            owner_blocks,
            tables,
        })
    }

    /// Returns the number of entries.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Returns the positions of `owner`.
    pub fn positions_of(&self, owner: u32) -> std::ops::Range<usize> {
        self.owner_starts[owner as usize] as usize..self.owner_starts[owner as usize + 1] as usize
    }

    /// Returns the ordinal of the entry at `position`, which `owner` holds.
    #[inline]
    pub fn ordinal(&self, owner: u32, position: u32) -> u32 {
        let index = position - self.owner_starts[owner as usize];
        match self.ordinals.of(owner) {
            None => index,
            Some(first) => self.ordinals.values[(first + index) as usize],
        }
    }

    /// Returns the ordinals of `owner`'s entries, in position order.
    pub fn ordinals_of(&self, owner: u32) -> impl Iterator<Item = u32> + '_ {
        let range = self.positions_of(owner);
        let first = self.ordinals.of(owner);
        (0..range.len() as u32).map(move |index| match first {
            None => index,
            Some(first) => self.ordinals.values[(first + index) as usize],
        })
    }

    /// Returns whether the base holds (owner, ordinal).
    pub fn contains(&self, owner: u32, ordinal: u32) -> bool {
        let range = self.positions_of(owner);
        match self.ordinals.of(owner) {
            None => (ordinal as usize) < range.len(),
            Some(first) => {
                let first = first as usize;
                self.ordinals.values[first..first + range.len()]
                    .binary_search(&ordinal)
                    .is_ok()
            }
        }
    }

    /// Returns the owner id of the entry at `position`.
    pub fn owner_of(&self, position: u32) -> u32 {
        let block = (position >> OWNER_BLOCK_BITS) as usize;
        let low = self.owner_blocks[block] as usize;
        let high = self.owner_blocks[block + 1] as usize + 1;
        let after = self.owner_starts[low..=high].partition_point(|start| *start <= position);
        u32::try_from(low + after.saturating_sub(1)).expect("owner ids fit u32 by construction")
    }

    /// Calls `found(position, distance)` once for every entry within `max_distance` of `query`.
    #[cfg(test)]
    pub fn query(
        &self,
        layout: &SegmentLayout,
        query: u64,
        max_distance: u32,
        mut found: impl FnMut(u32, u32),
    ) {
        self.query_many(layout, &[query], max_distance, 0..u32::MAX, |group| {
            for hit in group {
                found(hit.position, hit.distance);
            }
        });
    }

    /// Calls `found` with every entry within `max_distance` of each query,
    /// a group of queries at a time, queries in order.
    ///
    /// Queries run in groups, one stage at a time (bucket bounds, filter
    /// touches, filter scans, position loads, fingerprint loads, owners):
    /// the loads of a stage are independent, so the CPU overlaps their cache
    /// misses instead of waiting on each. The caller gets a group's hits at
    /// once for the same reason. Owners are looked up (a search that misses
    /// cache) only for hits at positions in `owned`.
    pub fn query_many(
        &self,
        layout: &SegmentLayout,
        queries: &[u64],
        max_distance: u32,
        owned: std::ops::Range<u32>,
        mut found: impl FnMut(&[Found]),
    ) {
        if self.fingerprints.is_empty() {
            return;
        }
        let tables = layout.tables_for(max_distance);
        if tables > self.tables.len() {
            return self.scan_many(queries, max_distance, owned, found);
        }
        let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(GROUP * tables);
        // (query index, table, slot, then position) of entries passing the filter.
        let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
        let mut loaded: Vec<u64> = Vec::new();
        let mut verified: Vec<Found> = Vec::new();
        // Bucket bounds of the next group, whose filters are being prefetched
        // while this group's are scanned.
        let mut next: Vec<(u32, u32)> = Vec::with_capacity(GROUP * tables);
        let bounds = |chunk: &[u64], ranges: &mut Vec<(u32, u32)>| {
            ranges.clear();
            for &query in chunk {
                for (table_index, table) in self.tables[..tables].iter().enumerate() {
                    let bucket = layout.bucket(table_index, query, table.bucket_bits) as usize;
                    ranges.push((table.offsets[bucket], table.offsets[bucket + 1]));
                }
            }
        };
        // Prefetches the filters of query `offset` of the group `ranges` bounds.
        let prefetch = |ranges: &[(u32, u32)], offset: usize| {
            for (table, &(start, end)) in ranges[offset * tables..(offset + 1) * tables]
                .iter()
                .enumerate()
            {
                let filters = &self.tables[table].filters;
                for slot in (start as usize..end as usize).step_by(LINE_FILTERS) {
                    prefetch_index::prefetch_index(filters, slot);
                }
                if start < end {
                    prefetch_index::prefetch_index(filters, end as usize - 1);
                }
            }
        };
        let limits: Vec<u32> = (0..tables)
            .map(|table| {
                let first = layout.start(table) + self.tables[table].bucket_bits;
                layout.differing_allowed(table, first, FILTER_BITS, max_distance)
            })
            .collect();
        let mut groups = queries.chunks(GROUP).enumerate().peekable();
        if let Some((_, chunk)) = groups.peek() {
            bounds(chunk, &mut next);
            for offset in 0..chunk.len() {
                prefetch(&next, offset);
            }
        }
        while let Some((group, chunk)) = groups.next() {
            let first = group * GROUP;
            std::mem::swap(&mut ranges, &mut next);
            match groups.peek() {
                Some((_, following)) => bounds(following, &mut next),
                None => next.clear(),
            }
            candidates.clear();
            for (offset, &query) in chunk.iter().enumerate() {
                if offset < next.len() / tables {
                    prefetch(&next, offset);
                }
                for (table_index, table) in self.tables[..tables].iter().enumerate() {
                    let (start, end) = ranges[offset * tables + table_index];
                    let query_filter = filter(layout, table_index, query, table.bucket_bits);
                    scan(
                        &table.filters,
                        start as usize..end as usize,
                        query_filter,
                        limits[table_index],
                        |slot| {
                            table.positions.prefetch(slot);
                            candidates.push((offset as u32, table_index as u32, slot as u32));
                        },
                    );
                }
            }
            for candidate in &mut candidates {
                candidate.2 = self.tables[candidate.1 as usize]
                    .positions
                    .get(candidate.2 as usize);
            }
            loaded.clear();
            loaded.extend(
                candidates
                    .iter()
                    .map(|&(_, _, position)| self.fingerprints[position as usize]),
            );
            verified.clear();
            for (&(offset, table_index, position), &candidate) in candidates.iter().zip(&loaded) {
                let query = chunk[offset as usize];
                let table_index = table_index as usize;
                let distance = hamming(candidate, query);
                if distance > max_distance
                    || layout.segment(table_index, candidate) != layout.segment(table_index, query)
                    || layout.found_earlier(table_index, query, candidate)
                {
                    continue;
                }
                verified.push(Found {
                    query: first + offset as usize,
                    position,
                    owner: NO_OWNER,
                    distance,
                });
            }
            for hit in &mut verified {
                if owned.contains(&hit.position) {
                    hit.owner = self.owner_of(hit.position);
                }
            }
            found(&verified);
        }
    }

    /// [`Self::query_many`] by comparing every entry: for a distance the
    /// built tables cannot answer.
    fn scan_many(
        &self,
        queries: &[u64],
        max_distance: u32,
        owned: std::ops::Range<u32>,
        mut found: impl FnMut(&[Found]),
    ) {
        let mut hits = Vec::new();
        for (index, &query) in queries.iter().enumerate() {
            hits.clear();
            for (position, &fingerprint) in self.fingerprints.iter().enumerate() {
                let distance = hamming(fingerprint, query);
                if distance <= max_distance {
                    // Positions fit u32: checked when built.
                    let position = position as u32;
                    hits.push(Found {
                        query: index,
                        position,
                        owner: if owned.contains(&position) {
                            self.owner_of(position)
                        } else {
                            NO_OWNER
                        },
                        distance,
                    });
                }
            }
            found(&hits);
        }
    }

    /// Returns the heap bytes of this structure.
    pub fn memory_bytes(&self) -> u64 {
        let tables: usize = self
            .tables
            .iter()
            .map(|table| {
                table.offsets.capacity() * 4
                    + table.filters.capacity() * 2
                    + table.positions.heap_bytes()
            })
            .sum();
        (self.fingerprints.capacity() * 8
            + self.ordinals.heap_bytes()
            + (self.owner_starts.capacity() + self.owner_blocks.capacity()) * 4
            + tables) as u64
    }
}

/// Returns the bits a position needs for `count` entries (at least 1).
fn index_bits(count: usize) -> Result<u32> {
    if count > u32::MAX as usize {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("{count} entries of one kind exceed the in-memory index"),
        ));
    }
    let largest = count.saturating_sub(1) as u64;
    Ok((64 - largest.leading_zeros()).max(1))
}

/// Returns the 16 fingerprint bits that follow the `bucket_bits` of segment `table` (wrapping).
#[inline]
fn filter(layout: &SegmentLayout, table: usize, fingerprint: u64, bucket_bits: u32) -> u16 {
    let rotated = fingerprint.rotate_left(layout.start(table) + bucket_bits);
    (rotated >> (64 - FILTER_BITS)) as u16
}

fn build_table(
    layout: &SegmentLayout,
    table: usize,
    fingerprints: &[u64],
    index_bits: u32,
) -> Table {
    let bucket_bits = index_bits
        .saturating_sub(3)
        .clamp(1, MAX_BUCKET_BITS)
        .min(layout.length(table));
    let buckets = 1_usize << bucket_bits;
    let mut offsets = vec![0_u32; buckets + 1];
    for &fingerprint in fingerprints {
        offsets[layout.bucket(table, fingerprint, bucket_bits) as usize + 1] += 1;
    }
    for bucket in 0..buckets {
        offsets[bucket + 1] += offsets[bucket];
    }
    let mut cursors = offsets.clone();
    let mut filters = vec![0_u16; fingerprints.len() + CHUNK];
    let mut positions = Packed::zeros(fingerprints.len(), index_bits);
    for (position, &fingerprint) in fingerprints.iter().enumerate() {
        let bucket = layout.bucket(table, fingerprint, bucket_bits) as usize;
        let slot = cursors[bucket] as usize;
        filters[slot] = filter(layout, table, fingerprint, bucket_bits);
        // Positions fit u32: checked by `index_bits`.
        positions.set(slot, position as u32);
        cursors[bucket] += 1;
    }
    Table {
        bucket_bits,
        offsets,
        filters,
        positions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exactly_the_neighbours() {
        let layout = SegmentLayout::new(3).unwrap();
        let fingerprints = [0_u64, 1, 0b111, 0b1111, u64::MAX, 0x8000_0000_0000_0001];
        let entries: Vec<RawEntry> = fingerprints
            .iter()
            .enumerate()
            .map(|(i, fp)| (i as u32, 0, *fp))
            .collect();
        let tables = KindTables::build(&layout, &entries, entries.len(), 4).unwrap();
        let mut found = Vec::new();
        tables.query(&layout, 0, 3, |position, distance| {
            found.push((position, distance))
        });
        found.sort_unstable();
        assert_eq!(found, [(0, 0), (1, 1), (2, 3), (5, 2)]);
        assert_eq!(tables.owner_of(4), 4);
        assert_eq!(tables.tables[0].positions.width, 1);
        assert_eq!(index_bits(0).unwrap(), 1);
        assert_eq!(index_bits(1 << 20).unwrap(), 20);
        assert_eq!(index_bits((1 << 20) + 1).unwrap(), 21);
    }

    #[test]
    fn packed_values_round_trip_at_every_width() {
        for bits in [1, 8, 9, 16, 17, 24, 25, 32] {
            let largest = (u64::from(u32::MAX) >> (32 - bits)) as u32;
            let values = [0, 1, largest, largest / 3, largest - 1];
            let mut packed = Packed::zeros(values.len(), bits);
            for (index, value) in values.iter().enumerate() {
                packed.set(index, *value);
            }
            assert_eq!(packed.width, bits.div_ceil(8) as usize);
            for (index, value) in values.iter().enumerate() {
                assert_eq!(packed.get(index), *value, "bits {bits}");
            }
        }
    }

    /// Every width of positions, dense and sparse ordinals, against a scan.
    #[test]
    fn answers_agree_with_a_scan_at_every_position_width() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let layout = SegmentLayout::new(3).unwrap();
        for count in [200_usize, 20_000, 70_000] {
            let mut fingerprints: Vec<u64> = (0..count).map(|_| rng.random()).collect();
            let centres: Vec<u64> = fingerprints[..50].to_vec();
            for (index, centre) in centres.iter().enumerate() {
                fingerprints.push(centre ^ (1 << (index % 64)) ^ (1 << ((index * 7) % 64)));
            }
            // Owners of 10 entries; every third owner skips ordinal 4.
            let entries: Vec<RawEntry> = fingerprints
                .iter()
                .enumerate()
                .map(|(i, fp)| {
                    let (owner, index) = (i / 10, (i % 10) as u32);
                    let ordinal = if owner % 3 == 0 && index >= 4 {
                        index + 1
                    } else {
                        index
                    };
                    (owner as u32, ordinal, *fp)
                })
                .collect();
            let owners = entries.len().div_ceil(10);
            let tables = KindTables::build(&layout, &entries, owners, 4).unwrap();
            // One table answers distance 0 and scans beyond.
            let exact = KindTables::build(&layout, &entries, owners, 1).unwrap();
            assert_eq!(exact.tables.len(), 1);
            let width = index_bits(entries.len()).unwrap().div_ceil(8) as usize;
            assert_eq!(tables.tables[0].positions.width, width);
            let mut queries = centres.clone();
            queries.extend((0..50).map(|_| rng.random::<u64>()));
            for k in 0..=3 {
                let mut expected: Vec<(usize, u32, u32)> = Vec::new();
                for (query_index, query) in queries.iter().enumerate() {
                    for (position, fp) in fingerprints.iter().enumerate() {
                        let distance = hamming(*fp, *query);
                        if distance <= k {
                            expected.push((query_index, position as u32, distance));
                        }
                    }
                }
                for (built, name) in [(&tables, "four tables"), (&exact, "one table")] {
                    let mut found = Vec::new();
                    built.query_many(&layout, &queries, k, 0..u32::MAX, |group| {
                        for hit in group {
                            assert_eq!(hit.owner, entries[hit.position as usize].0);
                            found.push((hit.query, hit.position, hit.distance));
                        }
                    });
                    found.sort_unstable();
                    assert_eq!(found, expected, "{name}, count {count}, k = {k}");
                }
                // Owners only inside the asked range, for both ways of answering.
                for built in [&tables, &exact] {
                    let mut hits = 0;
                    built.query_many(&layout, &queries, k, 100..200, |group| {
                        for hit in group {
                            hits += 1;
                            let expected = if (100..200).contains(&hit.position) {
                                entries[hit.position as usize].0
                            } else {
                                NO_OWNER
                            };
                            assert_eq!(hit.owner, expected);
                        }
                    });
                    assert_eq!(hits, expected.len());
                }
            }
            for (position, entry) in entries.iter().enumerate() {
                let owner = tables.owner_of(position as u32);
                assert_eq!(owner, entry.0);
                assert_eq!(tables.ordinal(owner, position as u32), entry.1);
                assert!(tables.contains(owner, entry.1));
            }
            assert!(!tables.contains(0, 4));
            assert!(tables.contains(1, 4));
            assert!(!tables.contains(1, 10));
            assert_eq!(
                tables.ordinals_of(3).collect::<Vec<_>>(),
                [0, 1, 2, 3, 5, 6, 7, 8, 9, 10]
            );
            assert_eq!(tables.ordinals.sparse.len(), owners.div_ceil(3));
        }
    }
}
