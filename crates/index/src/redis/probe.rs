//! The Redis index's table layouts: a trade of copies against bucket reads.
//!
//! - *exact* (radius 0): `max_distance + 1` segments (4 of 16 bits at k = 3);
//!   some segment of a neighbour within `k` is intact, so a query reads its own
//!   bucket in each table: 4 reads, 4 copies of every entry.
//! - *compact* (radius 1): `max_distance / 2 + 1` segments (2 of 32 bits at
//!   k = 3); some segment differs in at most one bit, so each table is probed
//!   at radius 1: the own bucket and the `b` buckets one key bit away (16 per
//!   table at b = 15). Half the copies, 8x the reads.
//!
//! Redis charges ~72 bytes per key and ~0.8 µs per random key read (measured on
//! the 2-core dev machine), so *exact* is the fast layout and *compact* the
//! small one; see `docs/performance.md`. Bits of a segment beyond the bucket
//! key stay in the member and are checked locally.

use copyhound_core::Result;

use crate::layout::{SegmentLayout, hamming};

/// Segments, bucket widths and the radius rule of a Redis index.
#[derive(Clone, Debug)]
pub struct ProbeLayout {
    segments: SegmentLayout,
    bucket_bits: Vec<u32>,
    radius: u32,
}

impl ProbeLayout {
    /// Returns the layout for `max_distance` probed at `radius` (0 or 1), with
    /// buckets keyed by (at most) `bucket_bits` bits.
    pub fn new(max_distance: u32, bucket_bits: u32, radius: u32) -> Result<Self> {
        let radius = radius.min(1);
        let segments = SegmentLayout::split(max_distance, max_distance / (radius + 1) + 1)?;
        let bucket_bits = (0..segments.tables())
            .map(|table| bucket_bits.clamp(1, segments.length(table)))
            .collect();
        Ok(Self {
            segments,
            bucket_bits,
            radius,
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

    /// Returns how many tables a query at distance `k` probes: among any
    /// `k / (r + 1) + 1` segments, one holds at most `r` of the `k` differing bits.
    pub fn tables_for(&self, k: u32) -> usize {
        (k / (self.radius + 1) + 1).min(self.tables() as u32) as usize
    }

    /// Returns the probe radius of a query at distance `k`.
    pub fn radius(&self, k: u32) -> u32 {
        k.min(self.radius)
    }

    #[cfg(test)]
    pub fn bucket_bits(&self, table: usize) -> u32 {
        self.bucket_bits[table]
    }

    /// Returns the widest residue (fingerprint bits not in a bucket key).
    pub fn residue_bits(&self) -> u32 {
        64 - self.bucket_bits.iter().copied().min().unwrap_or(1)
    }

    /// Returns the bucket of `fingerprint` in `table` (the top bits of its segment).
    #[inline]
    pub fn bucket(&self, table: usize, fingerprint: u64) -> u64 {
        self.segments
            .bucket(table, fingerprint, self.bucket_bits[table])
    }

    /// Returns the bits of `fingerprint` outside its bucket key in `table`, in order.
    #[inline]
    pub fn residue(&self, table: usize, fingerprint: u64) -> u64 {
        let (start, bits) = (self.segments.start(table), self.bucket_bits[table]);
        let low_bits = 64 - start - bits;
        let high = ((u128::from(fingerprint) >> (64 - start)) as u64) << low_bits;
        high | (fingerprint & low_mask(low_bits))
    }

    /// Inverts [`ProbeLayout::residue`] given the bucket.
    #[inline]
    pub fn restore(&self, table: usize, bucket: u64, residue: u64) -> u64 {
        let (start, bits) = (self.segments.start(table), self.bucket_bits[table]);
        let low_bits = 64 - start - bits;
        let high =
            ((u128::from(residue >> low_bits) << (64 - start)) & u128::from(u64::MAX)) as u64;
        high | (bucket << low_bits) | (residue & low_mask(low_bits))
    }

    /// Calls `visit` with every bucket of `table` a query at `radius` reads:
    /// its own, then (radius 1) each one key bit away.
    pub fn probes(&self, table: usize, query: u64, radius: u32, mut visit: impl FnMut(u64)) {
        let own = self.bucket(table, query);
        visit(own);
        if radius > 0 {
            for bit in 0..self.bucket_bits[table] {
                visit(own ^ (1 << bit));
            }
        }
    }

    /// Returns whether table `table` reports `candidate` for `query` at
    /// distance `k`: within `k`, within the radius on this segment, and not
    /// within the radius on an earlier segment (that table reports it).
    #[inline]
    pub fn reports(&self, table: usize, query: u64, candidate: u64, k: u32) -> bool {
        let radius = self.radius(k);
        hamming(query, candidate) <= k
            && self.segment_distance(table, query, candidate) <= radius
            && (0..table).all(|earlier| self.segment_distance(earlier, query, candidate) > radius)
    }

    fn segment_distance(&self, table: usize, left: u64, right: u64) -> u32 {
        hamming(
            self.segments.segment(table, left),
            self.segments.segment(table, right),
        )
    }
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn residue_and_bucket_restore_the_fingerprint() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for max_distance in [0, 1, 2, 3, 4, 7, 16] {
            for (bits, radius) in [(1, 1), (8, 0), (15, 1), (16, 0), (24, 1)] {
                let layout = ProbeLayout::new(max_distance, bits, radius).unwrap();
                for _ in 0..200 {
                    let fingerprint: u64 = rng.random();
                    for table in 0..layout.tables() {
                        let bucket = layout.bucket(table, fingerprint);
                        let residue = layout.residue(table, fingerprint);
                        assert!(residue >> (64 - layout.bucket_bits(table)) == 0);
                        assert_eq!(layout.restore(table, bucket, residue), fingerprint);
                    }
                }
                for extreme in [0, u64::MAX] {
                    let bucket = layout.bucket(0, extreme);
                    let residue = layout.residue(0, extreme);
                    assert_eq!(layout.restore(0, bucket, residue), extreme);
                }
            }
        }
    }

    #[test]
    fn every_neighbour_is_reported_by_exactly_one_probed_table() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for (max_distance, radius) in [0, 1, 2, 3, 5].into_iter().flat_map(|k| [(k, 0), (k, 1)]) {
            let layout = ProbeLayout::new(max_distance, 12, radius).unwrap();
            for k in 0..=max_distance {
                for _ in 0..300 {
                    let query: u64 = rng.random();
                    let mut candidate = query;
                    for _ in 0..rng.random_range(0..=k) {
                        candidate ^= 1 << rng.random_range(0..64);
                    }
                    let reporting: Vec<usize> = (0..layout.tables_for(k))
                        .filter(|table| {
                            let mut probed = false;
                            let bucket = layout.bucket(*table, candidate);
                            layout.probes(*table, query, layout.radius(k), |probe| {
                                probed |= probe == bucket;
                            });
                            probed && layout.reports(*table, query, candidate, k)
                        })
                        .collect();
                    assert_eq!(reporting.len(), 1, "k={k} max={max_distance}");
                }
            }
        }
        assert_eq!(ProbeLayout::new(3, 16, 1).unwrap().tables(), 2);
        assert_eq!(ProbeLayout::new(3, 16, 1).unwrap().tables_for(1), 1);
        assert_eq!(ProbeLayout::new(3, 16, 0).unwrap().tables(), 4);
        assert_eq!(ProbeLayout::new(3, 16, 0).unwrap().tables_for(1), 2);
    }
}
