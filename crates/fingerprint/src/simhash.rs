//! 64-bit SimHash (Charikar), word and shingle flavours.
//!
//! SimHash turns a document into one `u64` such that near-duplicates differ
//! in few bits, which an index can probe with Manku's permuted tables. Two
//! feature sets are offered because they fail differently: tf-idf words
//! resist reordering and small edits but depend on segmentation (homophones
//! and synonyms change words); character shingles need no dictionary and are
//! several times faster, but every substitution breaks `k` shingles.
//!
//! Unweighted shingles use a SWAR bit counter: each hash byte selects a table
//! entry that spreads its 8 bits into 8 byte-lanes, so a feature costs eight
//! table lookups and adds instead of 64 branchy updates.

use serde::{Deserialize, Serialize};

use crate::hash::{FixedMap, feature_hash};

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

/// Spreads the 8 bits of a byte into the low bit of 8 byte-lanes.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = 0u64;
        let mut j = 0;
        while j < 8 {
            if b & (1 << j) != 0 {
                v |= 1 << (8 * j);
            }
            j += 1;
        }
        t[b] = v;
        b += 1;
    }
    t
};

/// Counts, per bit position, how many added hashes have that bit set.
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
    #[inline]
    pub fn add(&mut self, h: u64) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            *lane += SPREAD[((h >> (8 * k)) & 0xff) as usize];
        }
        self.pending += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            for j in 0..8 {
                self.counts[8 * k + j] += ((*lane >> (8 * j)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.total += self.pending;
        self.pending = 0;
    }

    /// Majority vote per bit (a bit is set when more than half the features
    /// set it).
    pub fn finish(mut self) -> u64 {
        self.flush();
        let mut out = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            if 2 * u64::from(c) > u64::from(self.total) {
                out |= 1 << i;
            }
        }
        out
    }
}

/// Weighted SimHash of `(feature hash, weight)` pairs.
pub fn simhash_weighted(features: impl IntoIterator<Item = (u64, f32)>) -> u64 {
    let mut acc = [0f32; 64];
    for (h, w) in features {
        for (i, a) in acc.iter_mut().enumerate() {
            if (h >> i) & 1 == 1 {
                *a += w;
            } else {
                *a -= w;
            }
        }
    }
    acc.iter().enumerate().fold(
        0u64,
        |out, (i, &a)| if a > 0.0 { out | (1 << i) } else { out },
    )
}

/// Collapses repeated word hashes into `tf * idf` weights, in first-seen
/// order (deterministic).
pub(crate) fn tfidf_weights(words: impl IntoIterator<Item = (u64, f32)>) -> Vec<(u64, f32)> {
    let mut index: FixedMap<u64, usize> = FixedMap::default();
    let mut out: Vec<(u64, f32, f32)> = Vec::new();
    for (h, idf) in words {
        let i = *index.entry(h).or_insert_with(|| {
            out.push((h, 0.0, idf));
            out.len() - 1
        });
        out[i].1 += 1.0;
    }
    out.into_iter().map(|(h, tf, idf)| (h, tf * idf)).collect()
}

/// SimHash over overlapping `k`-char shingles of `chars` (xxh3, fixed seed).
/// Texts shorter than `k` form one shingle; an empty text hashes to 0.
pub fn shingle_simhash(chars: &[char], k: usize) -> u64 {
    let k = k.max(1);
    if chars.is_empty() {
        return 0;
    }
    let mut counter = BitCounter::default();
    let mut buf = [0u8; 64];
    let k_eff = k.min(chars.len()).min(16);
    for w in chars.windows(k_eff) {
        for (j, &c) in w.iter().enumerate() {
            buf[4 * j..4 * j + 4].copy_from_slice(&u32::from(c).to_le_bytes());
        }
        counter.add(feature_hash(&buf[..4 * k_eff]));
    }
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
    let mut buf = [0u8; 64];
    tokens
        .windows(k_eff)
        .map(|w| {
            for (j, &t) in w.iter().enumerate() {
                buf[4 * j..4 * j + 4].copy_from_slice(&t.to_le_bytes());
            }
            feature_hash(&buf[..4 * k_eff])
        })
        .collect()
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
    let mut buf = [0u8; 64];
    let k_eff = k.min(tokens.len());
    for w in tokens.windows(k_eff) {
        for (j, &t) in w.iter().enumerate() {
            buf[4 * j..4 * j + 4].copy_from_slice(&t.to_le_bytes());
        }
        counter.add(feature_hash(&buf[..4 * k_eff]));
    }
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
    fn tfidf_collapses_repeats() {
        let w = tfidf_weights([(1, 2.0), (2, 3.0), (1, 2.0)]);
        assert_eq!(w, vec![(1, 4.0), (2, 3.0)]);
    }
}
