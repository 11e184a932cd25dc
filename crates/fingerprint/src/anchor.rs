//! Anchors: content-sampled hashes of short syllable runs, looked up exactly.
//!
//! SimHash and DNA summarise a whole passage, so a rewrite (洗稿) that swaps a
//! third of the words moves every summary of it. A copy still shares many short
//! runs with its source, though, and syllables make those runs immune to
//! homophones and script changes. Keeping only the run hashes whose low bits are
//! zero (a choice made by the content, not by position) means a copy keeps the
//! same anchors as its source wherever the text survived, with no alignment.
//! The index answers them with distance 0; the verifier decides.

use serde::{Deserialize, Serialize};

use crate::FingerprintError;
use crate::simhash::for_each_window_hash;

/// Anchor parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnchorConfig {
    /// Syllables per run: shorter survives heavier rewriting, longer is rarer
    /// in unrelated text.
    pub run_length: usize,
    /// One run hash in `sample_rate` (on average) becomes an anchor.
    pub sample_rate: u64,
}

impl Default for AnchorConfig {
    fn default() -> Self {
        Self {
            run_length: 6,
            sample_rate: 8,
        }
    }
}

impl AnchorConfig {
    pub(crate) fn validate(&self) -> Result<(), FingerprintError> {
        if !(3..=16).contains(&self.run_length) || !self.sample_rate.is_power_of_two() {
            return Err(FingerprintError::Config(
                "anchor: run_length in 3..=16, sample_rate a power of two".into(),
            ));
        }
        Ok(())
    }
}

/// Returns the distinct anchors of a syllable token stream, ascending.
pub fn anchors(tokens: &[u32], config: &AnchorConfig) -> Vec<u64> {
    if tokens.len() < config.run_length {
        return Vec::new();
    }
    let mask = config.sample_rate.max(1) - 1;
    let mut selected = Vec::with_capacity(tokens.len() / config.sample_rate.max(1) as usize * 2);
    for_each_window_hash(tokens, config.run_length.clamp(1, 16), |hash| {
        if hash.rotate_right(17) & mask == 0 {
            selected.push(hash);
        }
    });
    selected.sort_unstable();
    selected.dedup();
    selected
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(seed: u64, n: usize) -> Vec<u32> {
        let mut state = seed.max(1);
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 400) as u32
            })
            .collect()
    }

    #[test]
    fn a_copy_keeps_its_anchors_and_unrelated_text_shares_none() {
        let config = AnchorConfig::default();
        let source = tokens(1, 3000);
        let base = anchors(&source, &config);
        assert!(
            base.len() > 3000 / 16,
            "about one run in 8 is sampled: {}",
            base.len()
        );
        // Replace every 7th token: most runs of 6 survive.
        let mut rewritten = source.clone();
        for i in (0..rewritten.len()).step_by(7) {
            rewritten[i] = 999;
        }
        let kept = anchors(&rewritten, &config)
            .iter()
            .filter(|a| base.binary_search(a).is_ok())
            .count();
        assert!(kept * 10 >= base.len(), "kept {kept} of {}", base.len());
        let other = anchors(&tokens(77, 3000), &config);
        let shared = other
            .iter()
            .filter(|a| base.binary_search(a).is_ok())
            .count();
        assert!(shared * 50 < base.len(), "unrelated text shares {shared}");
    }

    #[test]
    fn short_input_has_no_anchors_and_bad_config_is_refused() {
        assert!(anchors(&[1, 2, 3], &AnchorConfig::default()).is_empty());
        assert!(
            AnchorConfig {
                run_length: 2,
                sample_rate: 8
            }
            .validate()
            .is_err()
        );
        assert!(
            AnchorConfig {
                run_length: 6,
                sample_rate: 6
            }
            .validate()
            .is_err()
        );
    }
}
