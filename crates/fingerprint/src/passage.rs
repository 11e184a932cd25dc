//! Passage fingerprints for containment.
//!
//! A whole-page SimHash cannot see a chapter that fills a third of a page, or
//! a 600-character excerpt inside a forum thread. Passages of a few hundred
//! normalized chars make containment a near-duplicate question again: some
//! passage of the page should be close to some passage of the chapter.
//!
//! Passage starts are content-defined (a hash of the preceding syllables hits
//! a mask), like the DNA windows: fixed offsets would put page and chapter
//! passages out of phase by a random amount, content anchors put them at the
//! same text. Shingles are taken over syllable tokens by default, so
//! homophones and traditional forms do not move the hash.

use serde::{Deserialize, Serialize};

use crate::FingerprintError;
use crate::hash::mix64;

/// What a passage SimHash is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassageFeatures {
    /// k-char shingles of the normalized text.
    CharShingles,
    /// k-syllable shingles (Han chars as toneless pinyin, others as chars).
    SyllableShingles,
}

/// Passage settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PassageConfig {
    /// Passage length in normalized chars.
    pub length: u32,
    /// Average distance between passage starts.
    pub step: u32,
    /// Tokens hashed to decide whether a passage starts here.
    pub anchor_context: u32,
    /// Shingle source of the passage SimHash.
    pub features: PassageFeatures,
    /// Shingle length.
    pub shingle_k: usize,
}

impl Default for PassageConfig {
    fn default() -> Self {
        Self {
            length: 256,
            step: 128,
            anchor_context: 6,
            features: PassageFeatures::SyllableShingles,
            shingle_k: 3,
        }
    }
}

impl PassageConfig {
    pub(crate) fn validate(&self) -> Result<(), FingerprintError> {
        if self.length < 16 || self.step < 4 || self.step > self.length || self.anchor_context == 0
        {
            return Err(FingerprintError::Config(
                "passage: length >= 16, 4 <= step <= length, anchor_context >= 1".into(),
            ));
        }
        Ok(())
    }
}

/// Content-defined passage starts over `tokens` (normalized-char aligned).
/// Returns at most `max_passages` `[start, end)` ranges in token indices, in
/// text order.
pub(crate) fn passage_ranges(
    tokens: &[u32],
    cfg: &PassageConfig,
    max_passages: usize,
) -> Vec<(usize, usize)> {
    let n = tokens.len();
    let len = cfg.length as usize;
    if n == 0 {
        return Vec::new();
    }
    if n <= len {
        return vec![(0, n)];
    }
    let step = u64::from(cfg.step);
    let min_gap = (cfg.step / 4).max(1) as usize;
    let ctx = cfg.anchor_context as usize;
    const B: u64 = 0x100_0000_01b3;
    let b_pow = (0..ctx).fold(1u64, |p, _| p.wrapping_mul(B));
    let mut h = 0u64;
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    for p in 0..n {
        h = h.wrapping_mul(B).wrapping_add(u64::from(tokens[p]));
        if p >= ctx {
            h = h.wrapping_sub(u64::from(tokens[p - ctx]).wrapping_mul(b_pow));
        }
        let start = p + 1;
        if start + len > n {
            break;
        }
        let hit = start >= ctx && mix64(h ^ 0x9a55).is_multiple_of(step);
        let gap = last.map_or(start + 1, |l| start - l);
        let forced = gap >= 2 * cfg.step as usize;
        if (hit && gap >= min_gap) || forced {
            out.push((start, start + len));
            last = Some(start);
            if out.len() >= max_passages {
                break;
            }
        }
    }
    if out.is_empty() {
        out.push((0, len));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(seed: u64, n: usize) -> Vec<u32> {
        (0..n as u64)
            .map(|i| (mix64(seed ^ i) % 400) as u32)
            .collect()
    }

    #[test]
    fn short_text_is_one_passage() {
        assert_eq!(
            passage_ranges(&toks(1, 10), &PassageConfig::default(), 100),
            vec![(0, 10)]
        );
        assert!(passage_ranges(&[], &PassageConfig::default(), 100).is_empty());
    }

    #[test]
    fn passages_resynchronise_after_insertion() {
        let cfg = PassageConfig::default();
        let base = toks(7, 4000);
        let mut ins = toks(9, 300);
        ins.extend_from_slice(&base);
        let a: Vec<usize> = passage_ranges(&base, &cfg, usize::MAX)
            .iter()
            .map(|r| r.0)
            .collect();
        let b: Vec<usize> = passage_ranges(&ins, &cfg, usize::MAX)
            .iter()
            .filter_map(|r| r.0.checked_sub(300))
            .collect();
        let shared = a.iter().filter(|x| b.contains(x)).count();
        assert!(a.len() > 10);
        assert!(shared * 10 >= a.len() * 8, "{shared} of {}", a.len());
    }
}
