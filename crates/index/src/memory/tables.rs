//! The immutable multi-index of one entry kind: fingerprints stored once, in
//! owner order, and one table per segment holding packed slots grouped by
//! bucket (a counting sort, so building is linear).
//!
//! A slot packs the entry's position (the high `index_bits`) with a filter: the
//! remaining fingerprint bits that follow the table's segment. Slots are `u32`
//! up to 2^21 entries and `u64` beyond, where a `u32` would leave fewer than 11
//! filter bits and buckets grow past a hundred slots: the wide filter keeps
//! candidates to true neighbours at 10M entries for 12 more bytes per entry. Any bit
//! subset of a neighbour within distance `k` differs in at most `k` bits, so a
//! slot whose filter differs in more is rejected without touching the
//! fingerprint array: most random candidates die in the slot itself.

use copyhound_core::{Error, ErrorKind, Result};

use crate::layout::{SegmentLayout, hamming};

/// Bucket keys never exceed this many bits (bounds the offsets array).
const MAX_BUCKET_BITS: u32 = 24;

/// Kinds needing more position bits than this get `u64` slots.
const NARROW_INDEX_BITS: u32 = 21;

/// Positions per `owner_blocks` entry: log2.
const OWNER_BLOCK_BITS: u32 = 6;

/// Queries interleaved per group in [`KindTables::query_many`].
const GROUP: usize = 16;

/// One entry in build order: (owner id, ordinal, fingerprint).
pub(crate) type RawEntry = (u32, u32, u64);

/// One segment table: slots grouped by bucket (the top bits of the segment).
#[derive(Debug)]
struct Table {
    bucket_bits: u32,
    offsets: Vec<u32>,
    slots: Slots,
}

/// Packed slots of one table: narrow for small kinds, wide for large ones.
#[derive(Debug)]
enum Slots {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Slots {
    #[inline]
    fn get(&self, index: usize) -> u64 {
        match self {
            Self::Narrow(slots) => u64::from(slots[index]),
            Self::Wide(slots) => slots[index],
        }
    }

    /// Calls `pass(position)` for each slot of `range` whose filter is within `max_distance`.
    #[inline]
    fn scan(
        &self,
        range: std::ops::Range<usize>,
        filter_bits: u32,
        query_filter: u64,
        max_distance: u32,
        pass: impl FnMut(u32),
    ) {
        match self {
            Self::Narrow(slots) => {
                scan(&slots[range], filter_bits, query_filter, max_distance, pass)
            }
            Self::Wide(slots) => scan(&slots[range], filter_bits, query_filter, max_distance, pass),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Self::Narrow(slots) => slots.capacity() * 4,
            Self::Wide(slots) => slots.capacity() * 8,
        }
    }
}

#[inline]
fn scan<S: Copy + Into<u64>>(
    slots: &[S],
    filter_bits: u32,
    query_filter: u64,
    max_distance: u32,
    mut pass: impl FnMut(u32),
) {
    let mask = low_mask(filter_bits);
    for &slot in slots {
        let slot: u64 = slot.into();
        if ((slot & mask) ^ query_filter).count_ones() <= max_distance {
            // Positions fit u32: checked by `index_bits`.
            pass((slot >> filter_bits) as u32);
        }
    }
}

/// The multi-index of one kind.
#[derive(Debug)]
pub(crate) struct KindTables {
    /// Fingerprints by position, sorted by (owner, ordinal).
    pub fingerprints: Vec<u64>,
    /// Ordinals by position.
    pub ordinals: Vec<u32>,
    /// `owner_starts[o]..owner_starts[o + 1]` are the positions of owner `o`.
    pub owner_starts: Vec<u32>,
    /// `owner_blocks[b]` owns position `b << OWNER_BLOCK_BITS` (clamped to the
    /// last position): narrows `owner_of` to a few owners.
    owner_blocks: Vec<u32>,
    filter_bits: u32,
    tables: Vec<Table>,
}

impl KindTables {
    /// Builds the tables of `entries`, sorted by (owner, ordinal), for `owner_count` owners.
    pub fn build(layout: &SegmentLayout, entries: &[RawEntry], owner_count: usize) -> Result<Self> {
        Self::build_with(layout, entries, owner_count, NARROW_INDEX_BITS)
    }

    /// [`Self::build`] with `u64` slots past `narrow_index_bits` position bits.
    fn build_with(
        layout: &SegmentLayout,
        entries: &[RawEntry],
        owner_count: usize,
        narrow_index_bits: u32,
    ) -> Result<Self> {
        let count = entries.len();
        let index_bits = index_bits(count)?;
        let slot_bits = if index_bits > narrow_index_bits {
            64
        } else {
            32
        };
        let filter_bits = slot_bits - index_bits;
        let fingerprints: Vec<u64> = entries.iter().map(|entry| entry.2).collect();
        let ordinals: Vec<u32> = entries.iter().map(|entry| entry.1).collect();
        let mut owner_starts = vec![0_u32; owner_count + 1];
        for entry in entries {
            owner_starts[entry.0 as usize + 1] += 1;
        }
        for owner in 0..owner_count {
            owner_starts[owner + 1] += owner_starts[owner];
        }
        let tables = (0..layout.tables())
            .map(|table| build_table(layout, table, &fingerprints, index_bits, filter_bits))
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
            fingerprints,
            ordinals,
            owner_starts,
            owner_blocks,
            filter_bits,
            tables,
        })
    }

    /// Returns the number of entries.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Returns whether the base holds (owner, ordinal).
    pub fn contains(&self, owner: u32, ordinal: u32) -> bool {
        let range = self.owner_starts[owner as usize] as usize
            ..self.owner_starts[owner as usize + 1] as usize;
        self.ordinals[range].binary_search(&ordinal).is_ok()
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
        self.query_many(layout, &[query], max_distance, |_, position, distance| {
            found(position, distance)
        });
    }

    /// Calls `found(query index, position, distance)` once for every entry
    /// within `max_distance` of each query, queries in order.
    ///
    /// Queries run in groups, one stage at a time (bucket bounds, slot
    /// touches, slot scans, fingerprint loads, ordinal loads): the loads of a
    /// stage are independent, so the CPU overlaps their cache misses instead
    /// of waiting on each.
    pub fn query_many(
        &self,
        layout: &SegmentLayout,
        queries: &[u64],
        max_distance: u32,
        mut found: impl FnMut(usize, u32, u32),
    ) {
        if self.fingerprints.is_empty() {
            return;
        }
        let tables = layout.tables_for(max_distance).min(self.tables.len());
        let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(GROUP * tables);
        // (query index, table, position) of slots passing the filter.
        let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
        let mut loaded: Vec<u64> = Vec::new();
        let mut verified: Vec<(u32, u32, u32)> = Vec::new();
        for (group, chunk) in queries.chunks(GROUP).enumerate() {
            let first = group * GROUP;
            ranges.clear();
            for &query in chunk {
                for (table_index, table) in self.tables[..tables].iter().enumerate() {
                    let bucket = layout.bucket(table_index, query, table.bucket_bits) as usize;
                    ranges.push((table.offsets[bucket], table.offsets[bucket + 1]));
                }
            }
            // Touch each bucket's first and last slot so the scans below hit the cache.
            let mut touched = 0_u64;
            for (pair, &(start, end)) in ranges.iter().enumerate() {
                if start < end {
                    let slots = &self.tables[pair % tables].slots;
                    touched ^= slots.get(start as usize) ^ slots.get(end as usize - 1);
                }
            }
            std::hint::black_box(touched);
            candidates.clear();
            for (offset, &query) in chunk.iter().enumerate() {
                for (table_index, table) in self.tables[..tables].iter().enumerate() {
                    let (start, end) = ranges[offset * tables + table_index];
                    let query_filter = filter(layout, table_index, query, self.filter_bits);
                    table.slots.scan(
                        start as usize..end as usize,
                        self.filter_bits,
                        query_filter,
                        max_distance,
                        |position| {
                            candidates.push((offset as u32, table_index as u32, position));
                        },
                    );
                }
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
                verified.push((offset, position, distance));
            }
            // The caller reads each hit's ordinal: load them all first.
            let touched = verified.iter().fold(0_u32, |acc, &(_, position, _)| {
                acc ^ self.ordinals[position as usize]
            });
            std::hint::black_box(touched);
            for &(offset, position, distance) in &verified {
                found(first + offset as usize, position, distance);
            }
        }
    }

    /// Returns the heap bytes of this structure.
    pub fn memory_bytes(&self) -> u64 {
        let tables: usize = self
            .tables
            .iter()
            .map(|table| table.offsets.capacity() * 4 + table.slots.bytes())
            .sum();
        (self.fingerprints.capacity() * 8
            + (self.ordinals.capacity()
                + self.owner_starts.capacity()
                + self.owner_blocks.capacity())
                * 4
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

fn low_mask(bits: u32) -> u64 {
    if bits == 0 {
        0
    } else {
        u64::MAX >> (64 - bits)
    }
}

/// Returns the `bits` fingerprint bits that follow segment `table` (wrapping).
#[inline]
fn filter(layout: &SegmentLayout, table: usize, fingerprint: u64, bits: u32) -> u64 {
    if bits == 0 {
        return 0;
    }
    let rotated = fingerprint.rotate_left(layout.start(table) + layout.length(table));
    rotated >> (64 - bits)
}

fn build_table(
    layout: &SegmentLayout,
    table: usize,
    fingerprints: &[u64],
    index_bits: u32,
    filter_bits: u32,
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
    let mut packed = vec![0_u64; fingerprints.len()];
    for (position, &fingerprint) in fingerprints.iter().enumerate() {
        let bucket = layout.bucket(table, fingerprint, bucket_bits) as usize;
        let position = position as u64;
        let high = if filter_bits == 0 {
            position
        } else {
            position << filter_bits
        };
        packed[cursors[bucket] as usize] = high | filter(layout, table, fingerprint, filter_bits);
        cursors[bucket] += 1;
    }
    let slots = if index_bits + filter_bits > 32 {
        Slots::Wide(packed)
    } else {
        Slots::Narrow(packed.into_iter().map(|slot| slot as u32).collect())
    };
    Table {
        bucket_bits,
        offsets,
        slots,
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
        let tables = KindTables::build(&layout, &entries, entries.len()).unwrap();
        let mut found = Vec::new();
        tables.query(&layout, 0, 3, |position, distance| {
            found.push((position, distance))
        });
        found.sort_unstable();
        assert_eq!(found, [(0, 0), (1, 1), (2, 3), (5, 2)]);
        assert_eq!(tables.owner_of(4), 4);
        assert!(matches!(tables.tables[0].slots, Slots::Narrow(_)));
        assert_eq!(index_bits(0).unwrap(), 1);
        assert_eq!(index_bits(1 << 20).unwrap(), 20);
        assert_eq!(index_bits((1 << 20) + 1).unwrap(), 21);
    }

    #[test]
    fn narrow_and_wide_slots_agree_with_a_scan() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let layout = SegmentLayout::new(3).unwrap();
        let mut fingerprints: Vec<u64> = (0..20_000).map(|_| rng.random()).collect();
        let centres: Vec<u64> = fingerprints[..50].to_vec();
        for (index, centre) in centres.iter().enumerate() {
            fingerprints.push(centre ^ (1 << (index % 64)) ^ (1 << ((index * 7) % 64)));
        }
        let entries: Vec<RawEntry> = fingerprints
            .iter()
            .enumerate()
            .map(|(i, fp)| ((i / 10) as u32, (i % 10) as u32, *fp))
            .collect();
        let owners = entries.len() / 10 + 1;
        let narrow = KindTables::build_with(&layout, &entries, owners, 32).unwrap();
        let wide = KindTables::build_with(&layout, &entries, owners, 1).unwrap();
        assert!(matches!(narrow.tables[0].slots, Slots::Narrow(_)));
        assert!(matches!(wide.tables[0].slots, Slots::Wide(_)));
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
            for tables in [&narrow, &wide] {
                let mut found = Vec::new();
                tables.query_many(&layout, &queries, k, |query, position, distance| {
                    found.push((query, position, distance))
                });
                found.sort_unstable();
                assert_eq!(found, expected, "k = {k}");
            }
        }
        for position in [0, 9, 10, 19_999, 20_049] {
            assert_eq!(narrow.owner_of(position), position / 10);
            assert_eq!(wide.owner_of(position), position / 10);
        }
    }
}
