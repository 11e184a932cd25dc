//! Pinyin-initial "DNA" (after Daguan's content-page fingerprint).
//!
//! Each Han character becomes the first letter of its pinyin, which erases
//! homophone swaps and the traditional / simplified split. A window
//! ("granule") of `m` initials is summarised by how far each of the 20
//! consonant initials deviates from its expected count, quantised into a few
//! levels and packed alphabetically into a `u64`. Equal codes on both sides
//! are strong evidence (about 40 bits with the default 2 bits per letter).
//!
//! Daguan cut windows at fixed offsets; one injected ad paragraph then shifts
//! every later window. Here a window starts wherever a hash of the previous
//! few initials hits a mask (content-defined chunking), so windows
//! resynchronise a few characters after any insertion or deletion.
//!
//! Trade-offs: a large granule tolerates more typos per window relative to
//! its counts' spread (more stable codes) but yields fewer codes and misses
//! short copies; a small granule finds short excerpts but its codes flip on a
//! single edit and collide more often between unrelated texts.
//!
//! The expected distribution [`REFERENCE_INITIALS`] is the frequency of each
//! initial over jieba's `dict.txt`, every character of every word weighted by
//! the word's corpus count (regenerate with `examples/derive_tables.rs`); it
//! never looks at registered text.

use serde::{Deserialize, Serialize};

use crate::FingerprintError;
use crate::hash::mix64;
use crate::phonetic::Phonetic;
use crate::t2s::is_han;

/// The 20 consonant initials, in code order.
pub const INITIALS: &[u8; 20] = b"bcdfghjklmnpqrstwxyz";

/// Probability of each of [`INITIALS`] per Han character (jieba `dict.txt`,
/// frequency-weighted). Vowel-initial syllables (a, e, o) make up the rest.
pub const REFERENCE_INITIALS: [f64; 20] = [
    0.04713, 0.04386, 0.07394, 0.02714, 0.05088, 0.04967, 0.07418, 0.01813, 0.05474, 0.03379,
    0.02318, 0.01164, 0.03445, 0.02422, 0.09371, 0.03633, 0.03663, 0.05514, 0.09336, 0.10623,
];

/// DNA settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DnaConfig {
    /// Window length in initials (Han chars with a reading).
    pub granule: u32,
    /// Overlap between consecutive windows (0 to 0.9); sets the average
    /// anchor spacing `granule * (1 - overlap)`.
    pub overlap: f32,
    /// Bits per letter: 1, 2 or 3 (2, 4 or 8 levels, equiprobable under a
    /// normal approximation of the counts).
    pub bits: u8,
    /// Initials hashed to decide whether a window starts here.
    pub anchor_context: u32,
}

impl Default for DnaConfig {
    fn default() -> Self {
        Self {
            granule: 128,
            overlap: 0.5,
            bits: 2,
            anchor_context: 5,
        }
    }
}

impl DnaConfig {
    pub(crate) fn validate(&self) -> Result<(), FingerprintError> {
        if self.granule < 8 || !(0.0..=0.9).contains(&self.overlap) || !(1..=3).contains(&self.bits)
        {
            return Err(FingerprintError::Config(
                "dna: granule >= 8, overlap in [0, 0.9], bits in 1..=3".into(),
            ));
        }
        if !(1..=12).contains(&self.anchor_context) {
            return Err(FingerprintError::Config(
                "dna: anchor_context in 1..=12".into(),
            ));
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        ((f64::from(self.granule) * (1.0 - f64::from(self.overlap))).round() as u64).max(1)
    }
}

/// One DNA window with its position in normalized chars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnaWindow {
    /// Normalized index of the first char of the window.
    pub start: u32,
    /// Normalized index one past the last char of the window.
    pub end: u32,
    /// Packed code.
    pub code: u64,
}

/// z-score thresholds between equiprobable levels.
fn thresholds(bits: u8) -> &'static [f64] {
    match bits {
        1 => &[0.0],
        2 => &[-0.6745, 0.0, 0.6745],
        _ => &[-1.1503, -0.6745, -0.3186, 0.0, 0.3186, 0.6745, 1.1503],
    }
}

/// Packs the counts of one window.
pub(crate) fn encode(counts: &[u32; 20], len: u32, bits: u8) -> u64 {
    let th = thresholds(bits);
    let m = f64::from(len.max(1));
    let mut code = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        let p = REFERENCE_INITIALS[i];
        let sd = (m * p * (1.0 - p)).sqrt().max(0.5);
        let z = (f64::from(c) - m * p) / sd;
        let level = th.iter().filter(|&&t| z >= t).count() as u64;
        code = (code << bits) | level;
    }
    code
}

/// Per letter byte: its index (0..20) in [`INITIALS`], or `NO_SLOT`.
const SLOTS: [u8; 256] = {
    let mut t = [NO_SLOT; 256];
    let mut i = 0;
    while i < INITIALS.len() {
        t[INITIALS[i] as usize] = i as u8;
        i += 1;
    }
    t
};
/// Slot of vowels: a spare counter, dropped before encoding.
const NO_SLOT: u8 = 20;

/// DNA windows of a normalized text: at most `max_windows`, in text order.
pub(crate) fn dna_windows(
    phon: &Phonetic,
    chars: &[char],
    cfg: &DnaConfig,
    max_windows: usize,
) -> Vec<DnaWindow> {
    // (normalized index, initial letter) of every Han char with a reading.
    let letters: Vec<(u32, u8)> = chars
        .iter()
        .enumerate()
        .filter(|(_, c)| is_han(**c))
        .filter_map(|(i, &c)| phon.initial(c).map(|l| (i as u32, l)))
        .collect();
    let m = cfg.granule as usize;
    if letters.is_empty() {
        return Vec::new();
    }
    let step = cfg.step();
    let ctx = cfg.anchor_context as usize;
    let ctx_mask = (1u64 << (5 * ctx)) - 1;
    let mut anchors = Vec::new();
    let mut h = 0u64;
    let mut last: Option<usize> = None;
    for (p, &(_, l)) in letters.iter().enumerate() {
        h = ((h << 5) | u64::from(l - b'a')) & ctx_mask;
        // The window starts after the context that selected it.
        let start = p + 1;
        let hit = p + 1 >= ctx && mix64(h ^ 0x5eed).is_multiple_of(step);
        // Forced anchor after a long gap keeps coverage; the next natural
        // anchor resynchronises.
        let forced = last.is_some_and(|a| (start - a) as u64 >= 3 * step);
        let first_forced = last.is_none() && start >= 3 * step as usize;
        if (hit || forced || first_forced) && start + m <= letters.len() {
            anchors.push(start);
            last = Some(start);
            if anchors.len() >= max_windows {
                break;
            }
        }
    }
    let window = |a: usize, len: usize| {
        // One spare counter takes the vowels.
        let mut counts = [0u32; 21];
        for &(_, l) in &letters[a..a + len] {
            counts[usize::from(SLOTS[usize::from(l)])] += 1;
        }
        let counts: &[u32; 20] = counts.first_chunk().unwrap_or(&[0; 20]);
        DnaWindow {
            start: letters[a].0,
            end: letters[a + len - 1].0 + 1,
            code: encode(counts, len as u32, cfg.bits),
        }
    };
    if anchors.is_empty() {
        // Short text: one window over everything.
        return vec![window(0, letters.len().min(m))];
    }
    anchors.into_iter().map(|a| window(a, m)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_distribution_is_a_distribution() {
        let s: f64 = REFERENCE_INITIALS.iter().sum();
        assert!(s > 0.85 && s < 1.0, "{s}");
    }

    #[test]
    fn slots_index_initials() {
        for l in 0..=u8::MAX {
            let slot = INITIALS.iter().position(|&i| i == l);
            assert_eq!(slot.map_or(NO_SLOT, |s| s as u8), SLOTS[usize::from(l)]);
        }
    }

    #[test]
    fn encode_levels() {
        let mut counts = [0u32; 20];
        assert_eq!(encode(&counts, 128, 2), 0);
        counts[0] = 100;
        assert_eq!(encode(&counts, 128, 2) >> 38, 3);
        assert!(encode(&[u32::MAX; 20], 128, 3) < (1 << 60));
    }
}
