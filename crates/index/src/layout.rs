//! The pigeonhole layout shared by both implementations: a fingerprint is cut
//! into `max_distance + 1` contiguous segments, so two fingerprints within
//! Hamming distance `k <= max_distance` agree exactly on at least one segment
//! (and on at least one of any `k + 1` segments). Each segment is the key of
//! one table; a query looks up its own segment value in every table and
//! verifies the candidates with a popcount.

use copyhound_core::{Error, ErrorKind, Result};

/// The largest `max_distance` an index accepts: beyond it the tables degenerate
/// (segments of 3 bits) and a linear scan is as fast.
pub const MAX_SUPPORTED_DISTANCE: u32 = 16;

/// Segment boundaries of one index: segment `t` covers bits `start[t]..start[t] + len[t]`
/// counted from the most significant bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentLayout {
    max_distance: u32,
    starts: Vec<u32>,
    lengths: Vec<u32>,
}

impl SegmentLayout {
    /// Returns the layout of an index answering distances up to `max_distance`.
    pub fn new(max_distance: u32) -> Result<Self> {
        Self::split(max_distance, max_distance + 1)
    }

    /// Returns a layout of `segments` contiguous segments (the longer ones
    /// first) for an index answering distances up to `max_distance`.
    pub fn split(max_distance: u32, segments: u32) -> Result<Self> {
        if max_distance > MAX_SUPPORTED_DISTANCE {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "index max_distance {max_distance} exceeds the supported {MAX_SUPPORTED_DISTANCE}"
                ),
            ));
        }
        let tables = segments.clamp(1, 64);
        let base = 64 / tables;
        let longer = 64 % tables;
        let mut starts = Vec::with_capacity(tables as usize);
        let mut lengths = Vec::with_capacity(tables as usize);
        let mut start = 0;
        for table in 0..tables {
            let length = base + u32::from(table < longer);
            starts.push(start);
            lengths.push(length);
            start += length;
        }
        debug_assert_eq!(start, 64);
        Ok(Self {
            max_distance,
            starts,
            lengths,
        })
    }

    /// Returns the largest distance answered exactly.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// Returns the number of tables (segments).
    pub fn tables(&self) -> usize {
        self.lengths.len()
    }

    /// Returns how many tables a query at distance `k` must probe: any `k + 1`
    /// segments contain one that the `k` differing bits leave intact.
    pub fn tables_for(&self, max_distance: u32) -> usize {
        (max_distance as usize + 1).min(self.tables())
    }

    /// Returns the first bit (from the most significant) of segment `table`.
    pub fn start(&self, table: usize) -> u32 {
        self.starts[table]
    }

    /// Returns the bit length of segment `table`.
    pub fn length(&self, table: usize) -> u32 {
        self.lengths[table]
    }

    /// Returns the value of segment `table` of `fingerprint`.
    #[inline]
    pub fn segment(&self, table: usize, fingerprint: u64) -> u64 {
        (fingerprint << self.starts[table]) >> (64 - self.lengths[table])
    }

    /// Returns the top `bits` bits of segment `table` (the bucket of a coarser table).
    #[inline]
    pub fn bucket(&self, table: usize, fingerprint: u64, bits: u32) -> u64 {
        debug_assert!(bits >= 1 && bits <= self.lengths[table]);
        (fingerprint << self.starts[table]) >> (64 - bits)
    }

    /// Returns whether `candidate` agrees with `query` on some segment before
    /// `table`: such a candidate is reported by that earlier table, not this one.
    #[inline]
    pub fn found_earlier(&self, table: usize, query: u64, candidate: u64) -> bool {
        (0..table).any(|earlier| self.segment(earlier, query) == self.segment(earlier, candidate))
    }

    /// Returns how many of the `bits` bits from bit `first` (counted from the
    /// most significant, wrapping) may differ between a query and an entry
    /// that table `table` reports at distance `k`. Such an entry agrees on no
    /// earlier segment (that table reports it), so each earlier segment
    /// outside those bits takes at least one differing bit elsewhere. With a
    /// filter after each table's key, the four tables at k = 3 allow 3, 2, 1
    /// and 1: later tables pass fewer strangers.
    pub fn differing_allowed(&self, table: usize, first: u32, bits: u32, k: u32) -> u32 {
        let span = |first: u32, bits: u32| match bits {
            0 => 0,
            bits => (u64::MAX << (64 - bits.min(64))).rotate_right(first),
        };
        let filter = span(first, bits);
        let elsewhere = (0..table)
            .filter(|&earlier| span(self.starts[earlier], self.lengths[earlier]) & filter == 0)
            .count();
        k.saturating_sub(elsewhere as u32)
    }

    /// Checks a query distance against the index's fixed maximum.
    pub fn check_query_distance(&self, max_distance: u32) -> Result<()> {
        if max_distance > self.max_distance {
            return Err(Error::invalid(format!(
                "query distance {max_distance} exceeds the index max_distance {}",
                self.max_distance
            )));
        }
        Ok(())
    }
}

/// Returns the Hamming distance of two fingerprints.
#[inline]
pub fn hamming(left: u64, right: u64) -> u32 {
    (left ^ right).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_all_bits() {
        for max_distance in 0..=MAX_SUPPORTED_DISTANCE {
            let layout = SegmentLayout::new(max_distance).unwrap();
            assert_eq!(layout.tables(), max_distance as usize + 1);
            let total: u32 = (0..layout.tables()).map(|table| layout.length(table)).sum();
            assert_eq!(total, 64);
            let all_ones: u64 = (0..layout.tables())
                .map(|table| {
                    layout.segment(table, u64::MAX)
                        << (64 - layout.start(table) - layout.length(table))
                })
                .fold(0, |acc, part| acc | part);
            assert_eq!(all_ones, u64::MAX);
        }
        assert_eq!(
            SegmentLayout::new(17).unwrap_err().kind(),
            ErrorKind::Config
        );
    }

    /// Every entry a table reports passes a filter of any span at its limit.
    #[test]
    fn differing_allowed_keeps_every_entry_a_table_reports() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let layout = SegmentLayout::new(3).unwrap();
        let after_keys = |key_bits: u32| -> Vec<u32> {
            (0..4)
                .map(|table| layout.differing_allowed(table, layout.start(table) + key_bits, 16, 3))
                .collect()
        };
        // Table 3's filter wraps into segment 0, which cannot count.
        assert_eq!(after_keys(16), [3, 2, 1, 1]);
        assert_eq!(after_keys(13), [3, 2, 1, 1]);
        assert_eq!(layout.differing_allowed(2, 0, 64, 3), 3);
        assert_eq!(layout.differing_allowed(2, 48, 16, 1), 0);
        for max_distance in 0..=6 {
            let layout = SegmentLayout::new(max_distance).unwrap();
            for _ in 0..20_000 {
                let query: u64 = rng.random();
                let mut entry = query;
                for _ in 0..rng.random_range(0..=max_distance) {
                    entry ^= 1 << rng.random_range(0..64);
                }
                let Some(table) = (0..layout.tables())
                    .find(|&table| layout.segment(table, query) == layout.segment(table, entry))
                else {
                    continue;
                };
                let (first, bits) = (rng.random_range(0..64), rng.random_range(1..=32));
                let differing = ((query ^ entry).rotate_left(first) >> (64 - bits)).count_ones();
                let allowed = layout.differing_allowed(table, first, bits, max_distance);
                assert!(
                    differing <= allowed,
                    "k {max_distance}, table {table}, bits {first}+{bits}: {differing} > {allowed}"
                );
            }
        }
    }

    #[test]
    fn three_flips_leave_one_of_four_segments_intact() {
        let layout = SegmentLayout::new(3).unwrap();
        let base = 0x0123_4567_89ab_cdef_u64;
        let flipped = base ^ (1 << 63) ^ (1 << 40) ^ (1 << 20);
        assert!((0..4).any(|table| layout.segment(table, base) == layout.segment(table, flipped)));
        assert_eq!(layout.segment(0, base), 0x0123);
        assert_eq!(layout.segment(3, base), 0xcdef);
        assert_eq!(layout.bucket(3, base, 8), 0xcd);
    }
}
