//! 64-bit SimHash (Charikar), word and shingle flavours.
//!
//! SimHash turns a document into one `u64` such that near-duplicates differ
//! in few bits, which an index can probe with Manku's permuted tables. Two
//! feature sets are offered because they fail differently: tf-idf words
//! resist reordering and small edits but depend on segmentation (homophones
//! and synonyms change words); character shingles need no dictionary and are
//! several times faster, but every substitution breaks `k` shingles.
//!
//! Unweighted shingles use a SWAR bit counter: each of 8 lanes takes every
//! 8th bit of the hash into its byte counters (shift, mask, add), so a
//! feature costs eight adds instead of 64 branchy updates.

use serde::{Deserialize, Serialize};

use crate::hash::feature_hash;

/// SimHash settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimHashConfig {
    /// Shingle length in normalized chars (or syllables).
    pub shingle_k: usize,
    /// Use jieba's HMM for unknown words (slower; see `segment`).
    pub hmm: bool,
    /// IDF of words missing from the shipped table (the table's median is
    /// about 12).
    pub default_idf: f32,
}

impl Default for SimHashConfig {
    fn default() -> Self {
        Self {
            shingle_k: 3,
            hmm: false,
            default_idf: 12.0,
        }
    }
}

/// Hamming distance between two 64-bit fingerprints.
#[inline]
pub fn hamming_distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Low bit of every byte.
const BYTE_LSBS: u64 = 0x0101_0101_0101_0101;

/// Counts, per bit position, how many added hashes have that bit set.
/// Lane `j` holds 8 byte counters, for bits `j, j + 8, ..., j + 56`.
#[derive(Debug, Clone)]
pub struct BitCounter {
    lanes: [u64; 8],
    pending: u32,
    counts: [u32; 64],
    total: u32,
}

impl Default for BitCounter {
    fn default() -> Self {
        Self {
            lanes: [0; 8],
            pending: 0,
            counts: [0; 64],
            total: 0,
        }
    }
}

impl BitCounter {
    /// Adds one feature hash with weight 1.
    #[inline(always)]
    pub fn add(&mut self, h: u64) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += (h >> j) & BYTE_LSBS;
        }
        self.pending += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for b in 0..8 {
                self.counts[8 * b + j] += ((*lane >> (8 * b)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.total += self.pending;
        self.pending = 0;
    }

    /// Per-bit counts and the number of hashes added.
    fn into_counts(mut self) -> ([u32; 64], u32) {
        self.flush();
        (self.counts, self.total)
    }

    /// Majority vote per bit (a bit is set when more than half the features
    /// set it).
    pub fn finish(self) -> u64 {
        let (counts, total) = self.into_counts();
        majority(&counts, total)
    }
}

/// Bits set in more than half of `total` hashes.
fn majority(counts: &[u32; 64], total: u32) -> u64 {
    let mut out = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        if 2 * u64::from(c) > u64::from(total) {
            out |= 1 << i;
        }
    }
    out
}

/// [`simhash_of_hashes`] of `hashes[a..b]` for every `(a, b)` of `ranges`.
/// Overlapping ranges share work: bits are counted once per stretch between
/// range ends, and each range sums its stretches.
pub(crate) fn simhash_of_ranges(hashes: &[u64], ranges: &[(usize, usize)]) -> Vec<u64> {
    let mut points: Vec<usize> = ranges
        .iter()
        .filter(|(a, b)| a < b)
        .flat_map(|&(a, b)| [a, b])
        .collect();
    points.sort_unstable();
    points.dedup();
    let stretches: Vec<([u32; 64], u32)> = points
        .windows(2)
        .map(|w| {
            let mut counter = BitCounter::default();
            for &h in &hashes[w[0]..w[1]] {
                counter.add(h);
            }
            counter.into_counts()
        })
        .collect();
    ranges
        .iter()
        .map(|&(a, b)| {
            if a >= b {
                return 0;
            }
            let first = points.partition_point(|&p| p < a);
            let last = points.partition_point(|&p| p < b);
            let mut counts = [0u32; 64];
            let mut total = 0;
            for (c, n) in &stretches[first..last] {
                for (sum, x) in counts.iter_mut().zip(c) {
                    *sum += x;
                }
                total += n;
            }
            majority(&counts, total)
        })
        .collect()
}

/// Per byte value, the sign bit to flip for each of its 8 bits that is clear:
/// `a + (-w)` is exactly `a - w`, and a XOR instead of a branch vectorises.
const NEG: [[u32; 8]; 256] = {
    let mut t = [[0u32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if b & (1 << j) == 0 {
                t[b][j] = 1 << 31;
            }
            j += 1;
        }
        b += 1;
    }
    t
};

/// Weighted SimHash of `(feature hash, weight)` pairs.
pub fn simhash_weighted(features: impl IntoIterator<Item = (u64, f32)>) -> u64 {
    let mut acc = [0f32; 64];
    for (h, w) in features {
        let w = w.to_bits();
        for (k, lanes) in acc.chunks_exact_mut(8).enumerate() {
            let neg = &NEG[((h >> (8 * k)) & 0xff) as usize];
            for (a, n) in lanes.iter_mut().zip(neg) {
                *a += f32::from_bits(w ^ n);
            }
        }
    }
    acc.iter().enumerate().fold(
        0u64,
        |out, (i, &a)| if a > 0.0 { out | (1 << i) } else { out },
    )
}

/// Term frequencies of word hashes, in first-seen order (deterministic).
///
/// An open-addressing table of its own: the keys are xxh3 values already, so
/// their low bits index it directly, and one add is a probe or two in a
/// table that stays in cache (a general map re-hashed every word, a tenth
/// of all fingerprinting time on news text).
#[derive(Debug, Default)]
pub(crate) struct TermCounts {
    /// `1 + index into terms`, 0 for an empty slot; length a power of two,
    /// at least twice the number of terms.
    slots: Vec<u32>,
    /// `(hash, tf)` in first-seen order.
    terms: Vec<(u64, f32)>,
}

impl TermCounts {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            slots: vec![0; (2 * n.max(8)).next_power_of_two()],
            terms: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub(crate) fn add(&mut self, h: u64) {
        if self.slots.len() < 2 * (self.terms.len() + 1) {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.terms.push((h, 1.0));
                    self.slots[i] = self.terms.len() as u32;
                    return;
                }
                s => {
                    let term = &mut self.terms[s as usize - 1];
                    if term.0 == h {
                        term.1 += 1.0;
                        return;
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(16);
        self.slots = vec![0; len];
        let mask = len - 1;
        for (k, &(h, _)) in self.terms.iter().enumerate() {
            let mut i = h as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = k as u32 + 1;
        }
    }

    /// `(hash, tf)` pairs in first-seen order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, f32)> + '_ {
        self.terms.iter().copied()
    }
}

/// Calls `f` with the xxh3 of every `k`-token window (tokens as 4 LE bytes
/// each; `1 <= k <= 16`), in order.
#[inline]
pub(crate) fn for_each_window_hash<T: Copy + Into<u32>>(
    tokens: &[T],
    k: usize,
    f: impl FnMut(u64),
) {
    // Windows are slices of one byte string: copying each window into a
    // buffer made every hash wait on store forwarding.
    let bytes: Vec<u8> = tokens
        .iter()
        .flat_map(|&t| t.into().to_le_bytes())
        .collect();
    // The default shingle and anchor lengths get a constant-length xxh3.
    match k {
        3 => window_hashes(&bytes, 3, f),
        6 => window_hashes(&bytes, 6, f),
        _ => window_hashes(&bytes, k, f),
    }
}

#[inline(always)]
fn window_hashes(bytes: &[u8], k: usize, mut f: impl FnMut(u64)) {
    let len = 4 * k;
    let mut at = 0;
    while at + len <= bytes.len() {
        f(feature_hash(&bytes[at..at + len]));
        at += 4;
    }
}

/// SimHash over overlapping `k`-char shingles of `chars` (xxh3, fixed seed).
/// Texts shorter than `k` form one shingle; an empty text hashes to 0.
pub fn shingle_simhash(chars: &[char], k: usize) -> u64 {
    let k = k.max(1);
    if chars.is_empty() {
        return 0;
    }
    let mut counter = BitCounter::default();
    let k_eff = k.min(chars.len()).min(16);
    for_each_window_hash(chars, k_eff, |h| counter.add(h));
    counter.finish()
}

/// Hash of every `k`-token shingle of `tokens` (`tokens.len() - k + 1`
/// values; one value for shorter non-empty input).
pub fn token_shingle_hashes(tokens: &[u32], k: usize) -> Vec<u64> {
    let k = k.clamp(1, 16);
    if tokens.is_empty() {
        return Vec::new();
    }
    let k_eff = k.min(tokens.len());
    let mut out = Vec::with_capacity(tokens.len() + 1 - k_eff);
    for_each_window_hash(tokens, k_eff, |h| out.push(h));
    out
}

/// Unweighted SimHash of precomputed feature hashes (0 when empty).
pub fn simhash_of_hashes(hashes: &[u64]) -> u64 {
    if hashes.is_empty() {
        return 0;
    }
    let mut counter = BitCounter::default();
    for &h in hashes {
        counter.add(h);
    }
    counter.finish()
}

/// SimHash over overlapping `k`-token shingles of integer tokens.
pub fn token_shingle_simhash(tokens: &[u32], k: usize) -> u64 {
    let k = k.clamp(1, 16);
    if tokens.is_empty() {
        return 0;
    }
    let mut counter = BitCounter::default();
    let k_eff = k.min(tokens.len());
    for_each_window_hash(tokens, k_eff, |h| counter.add(h));
    counter.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_counter_matches_naive_majority() {
        let hashes: Vec<u64> = (0..1000u64).map(crate::hash::mix64).collect();
        let mut c = BitCounter::default();
        for &h in &hashes {
            c.add(h);
        }
        let naive = simhash_weighted(hashes.iter().map(|&h| (h, 1.0)));
        assert_eq!(c.finish(), naive);
    }

    #[test]
    fn weighted_matches_branchy_reference() {
        let feats: Vec<(u64, f32)> = (0..500u64)
            .map(|i| (crate::hash::mix64(i), (i % 17) as f32 * 0.7 - 3.1))
            .collect();
        let mut acc = [0f32; 64];
        for &(h, w) in &feats {
            for (i, a) in acc.iter_mut().enumerate() {
                if (h >> i) & 1 == 1 {
                    *a += w;
                } else {
                    *a -= w;
                }
            }
        }
        let reference = acc
            .iter()
            .enumerate()
            .fold(0u64, |o, (i, &a)| if a > 0.0 { o | (1 << i) } else { o });
        assert_eq!(simhash_weighted(feats), reference);
    }

    #[test]
    fn ranges_match_one_simhash_per_range() {
        let hashes: Vec<u64> = (0..3000u64).map(crate::hash::mix64).collect();
        let ranges = [
            (0, 300),
            (150, 450),
            (450, 900),
            (10, 10),
            (5, 4),
            (2990, 3000),
        ];
        let expected: Vec<u64> = ranges
            .iter()
            .map(|&(a, b)| simhash_of_hashes(hashes.get(a..b).unwrap_or(&[])))
            .collect();
        assert_eq!(simhash_of_ranges(&hashes, &ranges), expected);
    }

    #[test]
    fn shingles_identity_and_small_edit() {
        let a: Vec<char> = "天下大势分久必合合久必分周末七国分争并入于秦"
            .chars()
            .collect();
        let mut b = a.clone();
        b[5] = '九';
        assert_eq!(shingle_simhash(&a, 3), shingle_simhash(&a.clone(), 3));
        assert!(hamming_distance(shingle_simhash(&a, 3), shingle_simhash(&b, 3)) < 20);
        assert_eq!(shingle_simhash(&[], 3), 0);
        assert_ne!(shingle_simhash(&['a'], 3), 0);
    }

    #[test]
    fn term_counts_collapse_repeats_in_first_seen_order() {
        let mut t = TermCounts::default();
        for h in [7, 2, 7, 7] {
            t.add(h);
        }
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(7, 3.0), (2, 1.0)]);
    }

    #[test]
    fn term_counts_agree_with_a_map_through_growth_and_collisions() {
        // Keys sharing their low bits all land in one probe chain.
        let keys: Vec<u64> = (0..3000u64)
            .map(|i| {
                if i % 3 == 0 {
                    (i % 200) << 40
                } else {
                    crate::hash::mix64(i % 700)
                }
            })
            .collect();
        for cap in [0, 4, 5000] {
            let mut t = TermCounts::with_capacity(cap);
            let mut order: Vec<u64> = Vec::new();
            let mut model = std::collections::HashMap::new();
            for &k in &keys {
                t.add(k);
                *model.entry(k).or_insert_with(|| {
                    order.push(k);
                    0.0f32
                }) += 1.0;
            }
            let want: Vec<(u64, f32)> = order.iter().map(|k| (*k, model[k])).collect();
            assert_eq!(t.iter().collect::<Vec<_>>(), want, "capacity {cap}");
        }
    }
}
