//! Per-document budgets on what a fingerprint may hold.
//!
//! Every part of a [`crate::DocumentFingerprint`] is stored, indexed and queried,
//! so its size is what the rest of the system pays for one document. On prose
//! each part grows with the text at a known rate: a passage every ~128
//! normalized chars, a DNA window every ~64 Han chars, a distinct anchor every
//! ~8 syllables. Hostile text (one sentence repeated for megabytes, one
//! character a million times) drives the rates towards one per char, and every
//! later stage multiplies them. The caps sit above what prose of the largest
//! stored page (6 MiB, about 2M Han chars) produces, so ordinary documents keep
//! every passage and DNA window; only the anchors of texts past about 2M chars
//! are thinned. Past a cap a document keeps its first passages and DNA windows
//! (in text order) and its smallest anchors (a sample chosen by the content,
//! the same for the same text).
//!
//! The input itself is bounded by [`crate::NormalizeConfig::max_input_bytes`]
//! (8 MiB): with both, the memory and time of fingerprinting one document are
//! bounded whatever its content.

use serde::{Deserialize, Serialize};

use crate::FingerprintError;

/// Largest value any cap may be set to (entries of one owner in the index).
const HARD_MAX: u32 = 1 << 20;

/// Caps on the parts of one document's fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// Passages per document (prose: one per ~128 normalized chars).
    pub max_passages: u32,
    /// DNA codes kept per passage (prose: about 4).
    pub max_passage_dna: u32,
    /// DNA windows per document (prose: one per ~64 Han chars).
    pub max_dna_windows: u32,
    /// Distinct anchors per document (prose: one per ~8 syllables).
    pub max_anchors: u32,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            max_passages: 32_768,
            max_passage_dna: 32,
            max_dna_windows: 65_536,
            max_anchors: 262_144,
        }
    }
}

impl BudgetConfig {
    pub(crate) fn validate(&self) -> Result<(), FingerprintError> {
        let caps = [
            self.max_passages,
            self.max_passage_dna,
            self.max_dna_windows,
            self.max_anchors,
        ];
        if caps.iter().any(|&cap| cap == 0 || cap > HARD_MAX) {
            return Err(FingerprintError::Config(format!(
                "budget: every cap in 1..={HARD_MAX}"
            )));
        }
        Ok(())
    }

    /// `max_passages` as a length.
    pub(crate) fn passages(&self) -> usize {
        self.max_passages as usize
    }

    /// `max_passage_dna` as a length.
    pub(crate) fn passage_dna(&self) -> usize {
        self.max_passage_dna as usize
    }

    /// `max_dna_windows` as a length.
    pub(crate) fn dna_windows(&self) -> usize {
        self.max_dna_windows as usize
    }

    /// `max_anchors` as a length.
    pub(crate) fn anchors(&self) -> usize {
        self.max_anchors as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_huge_caps_are_refused() {
        assert!(BudgetConfig::default().validate().is_ok());
        let zero = BudgetConfig {
            max_passages: 0,
            ..BudgetConfig::default()
        };
        assert!(zero.validate().is_err());
        let huge = BudgetConfig {
            max_anchors: HARD_MAX + 1,
            ..BudgetConfig::default()
        };
        assert!(huge.validate().is_err());
    }
}
