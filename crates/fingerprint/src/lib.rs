//! Text fingerprints for copyright tracking.
//!
//! CopyHound has to find, among millions of crawled pages, the ones that copy
//! a registered chapter, although pirates mutate what they copy: traditional
//! script, homophones, typos, watermarks spliced into sentences, ads between
//! paragraphs, shuffled or deleted paragraphs, excerpts inside unrelated text.
//! This crate turns text into the signals the rest of the system indexes and
//! compares, each chosen for a different failure mode:
//!
//! * [`normalize`]: one canonical character stream (width, script, case,
//!   junk and boilerplate folded away) with a map back to original offsets,
//!   so evidence points into what the user sees;
//! * word and shingle SimHash ([`simhash`]): one `u64` per document for
//!   near-duplicate lookup (Charikar, Manku);
//! * pinyin-initial DNA ([`dna`]): codes that survive homophones and script
//!   changes, cut at content-defined anchors so insertions do not shift them;
//! * passage fingerprints ([`passage`]): SimHash + DNA of passages, so a
//!   chapter contained in a longer page is still found;
//! * the verifier ([`verify`]): exact aligned spans and coverage, the evidence
//!   that turns a candidate into a match.
//!
//! Input bytes and every per-document output are capped ([`budget`]), so the
//! cost of one document is bounded whatever its content.
//!
//! It is deliberately pure: no IO, no async, no other workspace crate. All
//! tables it needs are compiled in, every hash is seeded deterministically,
//! and [`FINGERPRINT_VERSION`] changes whenever an output would.
//! Out of scope: HTML extraction, charset detection, storage, indexing.
#![warn(missing_docs)]

pub mod anchor;
mod boilerplate;
pub mod budget;
pub mod dna;
pub mod hash;
pub mod normalize;
pub mod passage;
mod phonetic;
mod segment;
mod segmenter;
pub mod simhash;
mod t2s;
pub mod verify;

use serde::{Deserialize, Serialize};

pub use anchor::AnchorConfig;
pub use budget::BudgetConfig;
pub use dna::{DnaConfig, DnaWindow};
pub use normalize::{NormalizeConfig, NormalizedText};
pub use passage::{PassageConfig, PassageFeatures};
pub use simhash::{SimHashConfig, hamming_distance};
pub use verify::{
    CopiedSpan, PreparedChapter, PreparedPage, Verification, VerifiedSpan, VerifyConfig,
    covered_len,
};

/// Version of every fingerprint this crate computes. Bump it whenever any
/// output (normalization, tables, hashing, parameters' defaults, and what a
/// stored fingerprint is made of) changes.
///
/// * 1: text fingerprints (SimHash, DNA, passages, text anchors).
/// * 2: the title's anchors join the text's ([`Fingerprinter::fingerprint_titled`]);
///   every text output is the same as in version 1.
pub const FINGERPRINT_VERSION: u32 = 2;

/// U+FFFC OBJECT REPLACEMENT CHARACTER: a character the page drew as an image
/// (the crawler writes it in its place). Normalization keeps it and the
/// verifier aligns it with any chapter character, so pictures of every n-th
/// character do not break the copied runs.
pub const GLYPH_PLACEHOLDER: char = '\u{FFFC}';

/// First of the characters that stand for one *named* glyph: the crawler
/// writes `U+F0000 + n` for the n-th distinct image of a page, so every copy of
/// one picture carries the same character (sites that draw characters as
/// images use one picture per character, as font-obfuscating sites use one
/// private-use code point per character).
pub const FIRST_NAMED_GLYPH: char = '\u{F0000}';

/// A character the page does not spell out: [`GLYPH_PLACEHOLDER`], or a
/// private-use code point (a named image glyph, or a code point that only a
/// site's own font draws). The verifier aligns it as a wildcard and learns what
/// each named one stands for from the runs around it.
pub fn is_glyph(c: char) -> bool {
    matches!(c, '\u{FFFC}' | '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{FFFFD}' | '\u{100000}'..='\u{10FFFD}')
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    /// A configuration value is out of range or a pattern does not compile.
    #[error("invalid fingerprint config: {0}")]
    Config(String),
    /// A built-in dictionary failed to load.
    #[error("failed to load dictionary: {0}")]
    Dictionary(String),
}

/// Result alias of this crate.
pub type Result<T, E = FingerprintError> = std::result::Result<T, E>;

/// All fingerprint settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FingerprintConfig {
    /// Normalization.
    pub normalize: NormalizeConfig,
    /// Document SimHash.
    pub simhash: SimHashConfig,
    /// Pinyin-initial DNA.
    pub dna: DnaConfig,
    /// Passage fingerprints.
    pub passage: PassageConfig,
    /// Span verifier.
    pub verify: VerifyConfig,
    /// Anchors (exact-lookup candidates that survive rewriting).
    pub anchor: AnchorConfig,
    /// Caps on the parts of one document's fingerprint.
    pub budget: BudgetConfig,
}

/// Fingerprint of one passage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageFingerprint {
    /// Position of the passage in the document (0-based).
    pub ordinal: u32,
    /// Start, original char offset.
    pub start: u32,
    /// End (exclusive), original char offset.
    pub end: u32,
    /// SimHash of the passage's shingles.
    pub simhash: u64,
    /// DNA codes of the windows lying inside the passage.
    pub dna: Vec<u64>,
}

/// Fingerprint of one document (chapter or page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentFingerprint {
    /// [`FINGERPRINT_VERSION`] at computation time.
    pub version: u32,
    /// tf-idf word SimHash.
    pub simhash: u64,
    /// Character-shingle SimHash.
    pub shingle_simhash: u64,
    /// DNA codes in text order.
    pub dna: Vec<u64>,
    /// Passage fingerprints in text order.
    pub passages: Vec<PassageFingerprint>,
    /// Anchors: sampled syllable-run hashes, distinct, ascending.
    pub anchors: Vec<u64>,
    /// Number of normalized chars.
    pub normalized_chars: u32,
}

/// Computes fingerprints. Built once (dictionaries load in about 100 ms),
/// then shared: it is `Send + Sync` and all methods take `&self`.
#[derive(Debug)]
pub struct Fingerprinter {
    config: FingerprintConfig,
    normalizer: normalize::Normalizer,
    words: segment::WordFeatures,
    phonetic: phonetic::Phonetic,
}

impl Fingerprinter {
    /// Validates `config` and loads dictionaries and tables.
    pub fn new(config: FingerprintConfig) -> Result<Self> {
        config.dna.validate()?;
        config.passage.validate()?;
        config.verify.validate()?;
        config.anchor.validate()?;
        config.budget.validate()?;
        if config.simhash.shingle_k == 0 || config.simhash.shingle_k > 16 {
            return Err(FingerprintError::Config(
                "simhash: shingle_k in 1..=16".into(),
            ));
        }
        Ok(Self {
            normalizer: normalize::Normalizer::new(config.normalize.clone())?,
            words: segment::WordFeatures::new(),
            phonetic: phonetic::Phonetic::new(),
            config,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &FingerprintConfig {
        &self.config
    }

    /// Normalizes `text` (see [`normalize`]).
    pub fn normalize(&self, text: &str) -> NormalizedText {
        self.normalizer.normalize(text)
    }

    /// Normalizes and fingerprints `text`.
    pub fn fingerprint(&self, text: &str) -> DocumentFingerprint {
        self.fingerprint_normalized(&self.normalize(text))
    }

    /// tf-idf word SimHash of a normalized text.
    pub fn word_simhash(&self, text: &NormalizedText) -> u64 {
        let mut tf = simhash::TermCounts::with_capacity(text.len() / 4);
        self.words
            .for_each_word_hash(text, self.config.simhash.hmm, |h| tf.add(h));
        let default_idf = self.config.simhash.default_idf;
        // Lookups in a loop of their own, so their cache misses overlap.
        let weighted: Vec<(u64, f32)> = tf
            .iter()
            .filter_map(|(h, tf)| self.words.idf(h, default_idf).map(|idf| (h, tf * idf)))
            .collect();
        simhash::simhash_weighted(weighted)
    }

    /// Character-shingle SimHash of a normalized text.
    pub fn shingle_simhash(&self, text: &NormalizedText) -> u64 {
        simhash::shingle_simhash(&text.chars, self.config.simhash.shingle_k)
    }

    /// DNA windows (codes with normalized positions) of a normalized text, at
    /// most `budget.max_dna_windows`, in text order.
    pub fn dna_windows(&self, text: &NormalizedText) -> Vec<DnaWindow> {
        dna::dna_windows(
            &self.phonetic,
            &text.chars,
            &self.config.dna,
            self.config.budget.dna_windows(),
        )
    }

    /// Fingerprints an already normalized text.
    pub fn fingerprint_normalized(&self, text: &NormalizedText) -> DocumentFingerprint {
        let windows = self.dna_windows(text);
        let syllables = self.syllables(text);
        DocumentFingerprint {
            version: FINGERPRINT_VERSION,
            simhash: self.word_simhash(text),
            shingle_simhash: self.shingle_simhash(text),
            dna: windows.iter().map(|w| w.code).collect(),
            passages: self.passages_with(text, &syllables, &windows),
            anchors: self.anchors_of(&syllables),
            normalized_chars: u32::try_from(text.len()).unwrap_or(u32::MAX),
        }
    }

    /// Anchors of a normalized text (see [`anchor`]): the `budget.max_anchors`
    /// smallest, ascending.
    pub fn anchors(&self, text: &NormalizedText) -> Vec<u64> {
        self.anchors_of(&self.syllables(text))
    }

    /// Fingerprints a normalized text that has a title (a chapter, a page):
    /// [`Self::fingerprint_normalized`] with the title's anchors
    /// ([`Self::title_anchors`]) joined to the text's, ascending and distinct,
    /// outside the `budget.max_anchors` cap of the text's.
    pub fn fingerprint_titled(&self, text: &NormalizedText, title: &str) -> DocumentFingerprint {
        let mut fingerprint = self.fingerprint_normalized(text);
        fingerprint.anchors = self.join_title_anchors(fingerprint.anchors, title);
        fingerprint
    }

    /// The anchors of [`Self::fingerprint_titled`] alone, without the rest of
    /// the fingerprint (the cheap part: no words, DNA or passages), so a
    /// stored fingerprint of unchanged text can be checked against its title.
    pub fn titled_anchors(&self, text: &NormalizedText, title: &str) -> Vec<u64> {
        self.join_title_anchors(self.anchors(text), title)
    }

    fn join_title_anchors(&self, mut anchors: Vec<u64>, title: &str) -> Vec<u64> {
        anchors.extend(self.title_anchors(title));
        anchors.sort_unstable();
        anchors.dedup();
        anchors
    }

    /// Anchors of a title: one per part of it (a page's `<title>` is often
    /// "chapter title_site name"), hashed over its syllables, so that a chapter
    /// and a page that carries its title meet in the index even when the
    /// page's text keeps no run intact (pictures for every few characters,
    /// masks, shuffled sentences). A title nominates, it never decides: the
    /// verifier still judges the text.
    pub fn title_anchors(&self, title: &str) -> Vec<u64> {
        /// Keeps title anchors apart from text anchors of the same syllables.
        const TITLE_SALT: u64 = 0x7469_746c_655f_6368;
        /// Parts of a title read; real titles have two or three.
        const MAX_PARTS: usize = 4;
        let mut anchors: Vec<u64> = title
            .split(['_', '|', '｜', '—', '–', '－'])
            .flat_map(|part| part.split(" - "))
            .take(MAX_PARTS)
            .filter_map(|part| {
                let syllables = self.syllables(&self.normalize(part));
                (syllables.len() >= 2)
                    .then(|| hash::tokens_hash(TITLE_SALT, syllables.iter().copied()))
            })
            .collect();
        anchors.sort_unstable();
        anchors.dedup();
        anchors
    }

    fn anchors_of(&self, syllables: &[u32]) -> Vec<u64> {
        let mut anchors = anchor::anchors(syllables, &self.config.anchor);
        // Ascending: the smallest hashes are a sample chosen by the content.
        anchors.truncate(self.config.budget.anchors());
        anchors
    }

    /// Syllable tokens, one per normalized char (passage boundaries and anchors).
    fn syllables(&self, text: &NormalizedText) -> Vec<u32> {
        text.chars
            .iter()
            .map(|&c| self.phonetic.token(c, false))
            .collect()
    }

    /// Passage fingerprints of a normalized text.
    pub fn passages(&self, text: &NormalizedText) -> Vec<PassageFingerprint> {
        self.passages_with(text, &self.syllables(text), &self.dna_windows(text))
    }

    fn passages_with(
        &self,
        text: &NormalizedText,
        syllables: &[u32],
        windows: &[DnaWindow],
    ) -> Vec<PassageFingerprint> {
        let cfg = &self.config.passage;
        let chars: Vec<u32>;
        let shingle_tokens: &[u32] = match cfg.features {
            PassageFeatures::CharShingles => {
                chars = text.chars.iter().map(|&c| u32::from(c)).collect();
                &chars
            }
            PassageFeatures::SyllableShingles => syllables,
        };
        // Shingle hashes once; passages overlap.
        let k = cfg.shingle_k.clamp(1, 16);
        let hashes = simhash::token_shingle_hashes(shingle_tokens, k);
        let budget = &self.config.budget;
        let ranges = passage::passage_ranges(syllables, cfg, budget.passages());
        // Each passage's shingles, as a range of `hashes`.
        let shingle_ranges: Vec<(usize, usize)> = ranges
            .iter()
            .map(|&(s, e)| {
                if e - s >= k {
                    (s, e - k + 1)
                } else {
                    (s.min(hashes.len()), (s + 1).min(hashes.len()))
                }
            })
            .collect();
        let simhashes = simhash::simhash_of_ranges(&hashes, &shingle_ranges);
        ranges
            .into_iter()
            .zip(simhashes)
            .enumerate()
            .map(|(ordinal, ((s, e), simhash))| {
                let (start, end) = text.original_range(s, e);
                // Windows are in text order: the ones starting inside the
                // passage are one slice, found by binary search.
                let first = windows.partition_point(|w| (w.start as usize) < s);
                let dna = windows[first..]
                    .iter()
                    .take_while(|w| (w.start as usize) < e)
                    .filter(|w| w.end as usize <= e)
                    .map(|w| w.code)
                    .take(budget.passage_dna())
                    .collect();
                PassageFingerprint {
                    ordinal: ordinal as u32,
                    start,
                    end,
                    simhash,
                    dna,
                }
            })
            .collect()
    }

    /// Prepares a chapter for repeated verification against many pages.
    pub fn prepare_chapter(&self, chapter: &NormalizedText) -> PreparedChapter {
        PreparedChapter::new(&self.phonetic, chapter, &self.config.verify)
    }

    /// Finds the spans of `chapter` copied on `page`.
    pub fn verify(&self, chapter: &NormalizedText, page: &NormalizedText) -> Verification {
        self.verify_prepared(&self.prepare_chapter(chapter), page)
    }

    /// [`Fingerprinter::verify`] with a prepared chapter.
    pub fn verify_prepared(
        &self,
        chapter: &PreparedChapter,
        page: &NormalizedText,
    ) -> Verification {
        self.verify_page(chapter, page, &self.prepare_page(page))
    }

    /// Prepares a normalized page for [`Fingerprinter::verify_page`] against
    /// each of its candidate chapters.
    pub fn prepare_page(&self, page: &NormalizedText) -> PreparedPage {
        PreparedPage::new(&self.phonetic, page, &self.config.verify)
    }

    /// [`Fingerprinter::verify_prepared`] with the page prepared too
    /// (`prepared` must be `page`'s).
    pub fn verify_page(
        &self,
        chapter: &PreparedChapter,
        page: &NormalizedText,
        prepared: &PreparedPage,
    ) -> Verification {
        verify::verify_prepared(chapter, page, prepared, &self.config.verify)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn fingerprinter_is_send_sync() {
        assert_send_sync::<Fingerprinter>();
    }

    /// Pseudo-random common Han text with sentence breaks.
    fn han_text(chars: usize) -> String {
        let mut state = 0x9e37_79b9_u64;
        (0..chars)
            .map(|index| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if index % 17 == 16 {
                    '，'
                } else {
                    char::from_u32(0x4e00 + (state % 3000) as u32).expect("a han char")
                }
            })
            .collect()
    }

    #[test]
    fn passage_dna_is_the_windows_inside_each_passage() {
        let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
        let text = fp.normalize(&han_text(20_000));
        let windows = fp.dna_windows(&text);
        let passages = fp.passages(&text);
        assert!(passages.len() > 50 && windows.len() > 100);
        let ranges = passage::passage_ranges(&fp.syllables(&text), &fp.config.passage, usize::MAX);
        for (passage, (start, end)) in passages.iter().zip(ranges) {
            let inside: Vec<u64> = windows
                .iter()
                .filter(|w| w.start as usize >= start && w.end as usize <= end)
                .map(|w| w.code)
                .collect();
            assert_eq!(passage.dna, inside);
        }
    }

    #[test]
    fn budgets_cap_every_part_of_a_fingerprint() {
        let config = FingerprintConfig {
            budget: BudgetConfig {
                max_passages: 7,
                max_passage_dna: 1,
                max_dna_windows: 5,
                max_anchors: 3,
            },
            ..FingerprintConfig::default()
        };
        let capped = Fingerprinter::new(config).expect("config");
        let full = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
        let text = han_text(20_000);
        let small = capped.fingerprint(&text);
        let large = full.fingerprint(&text);
        assert_eq!(small.passages.len(), 7);
        assert!(small.passages.iter().all(|passage| passage.dna.len() <= 1));
        assert_eq!(small.dna, large.dna[..5]);
        assert_eq!(small.anchors, large.anchors[..3]);
        assert_eq!(small.passages[6].simhash, large.passages[6].simhash);
        assert_eq!(small.simhash, large.simhash);
    }

    #[test]
    fn config_round_trips_and_rejects_unknown_fields() {
        let cfg = FingerprintConfig::default();
        let json = serde_json::to_string(&cfg).expect("serialize");
        let back: FingerprintConfig = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(cfg, back);
        assert!(serde_json::from_str::<FingerprintConfig>(r#"{"bogus": 1}"#).is_err());
        let bad = FingerprintConfig {
            dna: DnaConfig {
                bits: 7,
                ..DnaConfig::default()
            },
            ..Default::default()
        };
        assert!(Fingerprinter::new(bad).is_err());
    }
}
