//! The Redis index's table layout: `max_distance + 1` segments (4 of 16 bits
//! at k = 3). A neighbour within `k` leaves some segment intact, so a query
//! reads one bucket per table, keyed by the top bits of its segment.
//!
//! A member does not carry the rest of the fingerprint (the owner's record
//! holds it once): it carries a 16-bit *filter*, the segment bits below the
//! key (which must match exactly) and then the bits that follow the segment.
//! A query keeps a member only if its filter is within `k` of its own (fewer
//! bits in later tables: an earlier segment that agreed would have reported
//! it), which lets 0.58 % of random members through table 0 at k = 3 and
//! 13-bit keys; the owner records verify the rest. Redis charges ~72 bytes
//! per key and ~0.8 µs per random key read (measured on the 2-core dev
//! machine), so small members and one read per table are what keep both
//! bytes and time low; see `docs/performance.md`.

use copyhound_core::Result;

use crate::layout::{SegmentLayout, hamming};

/// Bits of a member's filter.
pub const FILTER_BITS: u32 = 16;

/// Segments and bucket widths of a Redis index.
#[derive(Clone, Debug)]
pub struct ProbeLayout {
    segments: SegmentLayout,
    bucket_bits: Vec<u32>,
}

impl ProbeLayout {
    /// Returns the layout for `max_distance`, with buckets keyed by (at most)
    /// `bucket_bits` bits of each segment.
    pub fn new(max_distance: u32, bucket_bits: u32) -> Result<Self> {
        let segments = SegmentLayout::new(max_distance)?;
        let bucket_bits = (0..segments.tables())
            .map(|table| bucket_bits.clamp(1, segments.length(table)))
            .collect();
        Ok(Self {
            segments,
            bucket_bits,
        })
    }

    pub fn max_distance(&self) -> u32 {
        self.segments.max_distance()
    }

    /// Checks a query distance against the index's fixed maximum.
    pub fn check_query_distance(&self, k: u32) -> Result<()> {
        self.segments.check_query_distance(k)
    }

    pub fn tables(&self) -> usize {
        self.segments.tables()
    }

    /// Returns how many tables a query at distance `k` reads.
    pub fn tables_for(&self, k: u32) -> usize {
        self.segments.tables_for(k)
    }

    /// Returns the bucket of `fingerprint` in `table` (the top bits of its segment).
    #[inline]
    pub fn bucket(&self, table: usize, fingerprint: u64) -> u64 {
        self.segments
            .bucket(table, fingerprint, self.bucket_bits[table])
    }

    /// Returns the filter of `fingerprint` in `table`: the [`FILTER_BITS`]
    /// bits that follow its bucket key, wrapping past the last bit.
    #[inline]
    pub fn filter(&self, table: usize, fingerprint: u64) -> u64 {
        let after_key = self.segments.start(table) + self.bucket_bits[table];
        fingerprint.rotate_left(after_key) >> (64 - FILTER_BITS)
    }

    /// Returns how many bits of its filter a member that `table` reports at
    /// distance `k` may differ in (see [`SegmentLayout::differing_allowed`]).
    pub fn filter_limit(&self, table: usize, k: u32) -> u32 {
        let after_key = self.segments.start(table) + self.bucket_bits[table];
        self.segments
            .differing_allowed(table, after_key, FILTER_BITS, k)
    }

    /// Returns whether a member with `filter` in `table` may be a neighbour
    /// the table reports, for a query whose own filter there is `own`: the
    /// segment's bits below the key agree, and the filter differs in at most
    /// `limit` bits ([`Self::filter_limit`]).
    #[inline]
    pub fn may_match(&self, table: usize, own: u64, filter: u64, limit: u32) -> bool {
        let below_key = (self.segments.length(table) - self.bucket_bits[table]).min(FILTER_BITS);
        let differing = own ^ filter;
        differing >> (FILTER_BITS - below_key) == 0 && differing.count_ones() <= limit
    }

    /// Returns whether table `table` reports `candidate` for `query` at
    /// distance `k`: within `k`, intact on this segment, and not intact on an
    /// earlier one (that table reports it).
    #[inline]
    pub fn reports(&self, table: usize, query: u64, candidate: u64, k: u32) -> bool {
        hamming(query, candidate) <= k
            && self.segment_intact(table, query, candidate)
            && (0..table).all(|earlier| !self.segment_intact(earlier, query, candidate))
    }

    fn segment_intact(&self, table: usize, left: u64, right: u64) -> bool {
        self.segments.segment(table, left) == self.segments.segment(table, right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn neighbour(rng: &mut ChaCha8Rng, query: u64, k: u32) -> u64 {
        let mut candidate = query;
        for _ in 0..rng.random_range(0..=k) {
            candidate ^= 1 << rng.random_range(0..64);
        }
        candidate
    }

    #[test]
    fn every_neighbour_is_reported_by_exactly_one_table_and_passes_its_filter() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for max_distance in [0, 1, 2, 3, 5, 7, 16] {
            for bucket_bits in [1, 8, 12, 14, 16, 24] {
                let layout = ProbeLayout::new(max_distance, bucket_bits).unwrap();
                for k in 0..=max_distance {
                    for _ in 0..200 {
                        let query: u64 = rng.random();
                        let candidate = neighbour(&mut rng, query, k);
                        let reporting: Vec<usize> = (0..layout.tables_for(k))
                            .filter(|table| {
                                layout.bucket(*table, query) == layout.bucket(*table, candidate)
                                    && layout.reports(*table, query, candidate, k)
                            })
                            .collect();
                        assert_eq!(reporting.len(), 1, "k={k} max={max_distance}");
                        let table = reporting[0];
                        assert!(layout.may_match(
                            table,
                            layout.filter(table, query),
                            layout.filter(table, candidate),
                            layout.filter_limit(table, k)
                        ));
                    }
                }
            }
        }
        assert_eq!(ProbeLayout::new(3, 16).unwrap().tables(), 4);
        assert_eq!(ProbeLayout::new(3, 16).unwrap().tables_for(1), 2);
    }

    #[test]
    fn filters_are_the_bits_after_the_key_and_pass_few_strangers() {
        let layout = ProbeLayout::new(3, 14).unwrap();
        // Table 0 keys bits 0..14 (from the top); its filter is bits 14..30.
        let fingerprint = 0xABCD_EF01_2345_6789_u64;
        assert_eq!(layout.filter(0, fingerprint), (fingerprint >> 34) & 0xFFFF);
        // Table 3 keys bits 48..62; its filter wraps: bits 62, 63, then 0..14.
        let wrapped = (fingerprint & 3) << 14 | fingerprint >> 50;
        assert_eq!(layout.filter(3, fingerprint), wrapped);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let trials = 200_000;
        let passed = (0..trials)
            .filter(|_| {
                layout.may_match(0, rng.random::<u64>() >> 48, rng.random::<u64>() >> 48, 3)
            })
            .count();
        // Two exact bits, then at most 3 of 14 differing: 470 / 16384 / 4 = 0.72 %;
        // later tables allow fewer.
        assert_eq!(
            (0..4)
                .map(|table| layout.filter_limit(table, 3))
                .collect::<Vec<_>>(),
            [3, 2, 1, 1]
        );
        let rate = passed as f64 / trials as f64;
        assert!((0.006..0.0085).contains(&rate), "{rate}");
    }
}
