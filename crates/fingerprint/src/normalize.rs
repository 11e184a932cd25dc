//! Normalization with an offset map.
//!
//! Every fingerprint and the verifier work on one canonical character stream,
//! so that full-width / half-width, traditional / simplified, case, spacing,
//! punctuation, zero-width junk and look-alike code points (Kangxi radicals,
//! compatibility ideographs, which NFKC folds) cannot tell a copy from its
//! source. Evidence must still point into the page the user sees, hence the
//! per-character map back to ORIGINAL character (Unicode scalar) offsets.

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

use crate::FingerprintError;
use crate::boilerplate::{self, Boilerplate};
use crate::t2s::{T2s, is_han};

/// Normalization settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NormalizeConfig {
    /// Convert traditional script and HK/TW regional forms to simplified.
    pub traditional_to_simplified: bool,
    /// Fold Latin diacritics (`ā` -> `a`), so tone-marked pinyin reads as plain.
    pub fold_diacritics: bool,
    /// Extra characters to drop: by default CJK stroke / radical characters
    /// that prose never uses alone but junk inserters love.
    pub drop_chars: String,
    /// Enable boilerplate and watermark masking.
    pub boilerplate: bool,
    /// Whole-line patterns (regex, lowercase); see [`boilerplate`].
    pub line_patterns: Vec<String>,
    /// Lines longer than this (in chars) are never dropped by line patterns.
    pub max_boilerplate_line_chars: u32,
    /// Inline watermark patterns (regex), removed wherever they occur.
    pub inline_patterns: Vec<String>,
    /// Remove bare domains (`xxx.la`) in Han context; `www.` / `http` URLs are
    /// always removed when boilerplate masking is on.
    pub bare_domains: bool,
    /// Top-level domains for bare-domain detection.
    pub domain_tlds: Vec<String>,
    /// Input beyond this many bytes is ignored (`NormalizedText::truncated`):
    /// the character budget of one chapter or page (8 MiB is about 2.8M Han
    /// chars, a whole novel; stored pages are cut at 6 MiB at most).
    pub max_input_bytes: usize,
}

impl Default for NormalizeConfig {
    fn default() -> Self {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        Self {
            traditional_to_simplified: true,
            fold_diacritics: true,
            drop_chars: "丶丿乀乛亅亻冫氵丨乚刂亠".to_owned(),
            boilerplate: true,
            line_patterns: own(boilerplate::DEFAULT_LINE_PATTERNS),
            max_boilerplate_line_chars: 100,
            inline_patterns: own(boilerplate::DEFAULT_INLINE_PATTERNS),
            bare_domains: true,
            domain_tlds: own(boilerplate::DEFAULT_TLDS),
            max_input_bytes: 8 << 20,
        }
    }
}

/// Normalized text: kept characters plus, for each, its character offset in
/// the original text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NormalizedText {
    /// Normalized characters (Han, letters, digits; lowercase, simplified).
    pub chars: Vec<char>,
    /// `offsets[i]`: char offset in the original text of `chars[i]`.
    pub offsets: Vec<u32>,
    /// Normalized indices `i` where a separator (space, punctuation, removed
    /// boilerplate) stood between `chars[i - 1]` and `chars[i]`; word
    /// boundaries for Latin-script text. Sorted.
    pub breaks: Vec<u32>,
    /// Length of the original text in chars (of the part that was read).
    pub original_chars: u32,
    /// The input exceeded `max_input_bytes` and was cut.
    pub truncated: bool,
}

impl NormalizedText {
    /// Number of normalized chars.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether nothing survived normalization.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The normalized text as a `String`.
    pub fn as_string(&self) -> String {
        self.chars.iter().collect()
    }

    /// Whether a separator preceded normalized char `i`.
    pub fn is_break(&self, i: usize) -> bool {
        u32::try_from(i).is_ok_and(|i| self.breaks.binary_search(&i).is_ok())
    }

    /// Original `[start, end)` char range covering normalized `[start, end)`.
    pub fn original_range(&self, start: usize, end: usize) -> (u32, u32) {
        if start >= end || start >= self.offsets.len() {
            let at = self
                .offsets
                .get(start)
                .copied()
                .unwrap_or(self.original_chars);
            return (at, at);
        }
        let end = end.min(self.offsets.len());
        let s = self.offsets[start];
        let e = self.offsets[start..end].iter().copied().max().unwrap_or(s) + 1;
        (s, e)
    }
}

/// Compiled normalizer (owns the OpenCC dictionaries and regexes).
#[derive(Debug)]
pub(crate) struct Normalizer {
    cfg: NormalizeConfig,
    t2s: Option<T2s>,
    boilerplate: Option<Boilerplate>,
    drop: Vec<char>,
    /// `drop` as a bitmap over the BMP.
    drop_bmp: Vec<u64>,
    folds: FoldTable,
}

/// Blocks whose stage-1 folds are tabulated: general punctuation, CJK
/// punctuation and full-width forms, most of the non-ASCII, non-Han chars
/// of Chinese text (NFKC per char is slow).
const FOLD_BLOCKS: [(u32, u32); 3] = [(0x2000, 0x2070), (0x3000, 0x3040), (0xFF00, 0xFFF0)];

/// [`fold_char`] of every char of [`FOLD_BLOCKS`].
#[derive(Debug)]
struct FoldTable {
    /// Output range in `out` of table entry `i`: `ends[i - 1]..ends[i]`.
    ends: Vec<u32>,
    out: Vec<char>,
}

impl FoldTable {
    fn new(fold_diacritics: bool) -> Self {
        let mut t = Self {
            ends: Vec::new(),
            out: Vec::new(),
        };
        for (start, end) in FOLD_BLOCKS {
            for u in start..end {
                if let Some(c) = char::from_u32(u) {
                    fold_char(c, fold_diacritics, |o| t.out.push(o));
                }
                t.ends.push(t.out.len() as u32);
            }
        }
        t
    }

    #[inline]
    fn get(&self, c: char) -> Option<&[char]> {
        let u = u32::from(c);
        let mut base = 0;
        for (start, end) in FOLD_BLOCKS {
            if (start..end).contains(&u) {
                let i = base + (u - start) as usize;
                let from = if i == 0 { 0 } else { self.ends[i - 1] as usize };
                return Some(&self.out[from..self.ends[i] as usize]);
            }
            base += (end - start) as usize;
        }
        None
    }
}

/// Stage-1 fold of one non-ASCII char: NFKC, lowercase, diacritics.
fn fold_char(c: char, fold_diacritics: bool, mut out: impl FnMut(char)) {
    for o in std::iter::once(c).nfkc() {
        if o.is_ascii() {
            out(o.to_ascii_lowercase());
            continue;
        }
        for l in o.to_lowercase() {
            let folded = if fold_diacritics && !is_han(l) && l.is_alphabetic() {
                std::iter::once(l)
                    .nfd()
                    .next()
                    .filter(char::is_ascii_alphabetic)
                    .unwrap_or(l)
            } else {
                l
            };
            out(folded);
        }
    }
}

/// Whether `c` is in the main CJK blocks, all of whose chars are
/// alphanumeric (tested), so common text skips the Unicode tables.
#[inline]
fn is_common_han(c: char) -> bool {
    matches!(u32::from(c), 0x4E00..=0x9FFF | 0x3400..=0x4DBF)
}

/// `char::is_alphanumeric` with fast paths for ASCII and common Han.
#[inline]
fn is_alphanumeric(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        is_common_han(c) || c.is_alphanumeric()
    }
}

/// First-stage buffers: chars, original offsets, "whitespace before" flags.
struct Stage1 {
    chars: Vec<char>,
    offs: Vec<u32>,
    space: Vec<bool>,
}

impl Stage1 {
    fn with_capacity(n: usize) -> Self {
        Self {
            chars: Vec::with_capacity(n),
            offs: Vec::with_capacity(n),
            space: Vec::with_capacity(n),
        }
    }

    #[inline]
    fn push(&mut self, c: char, off: u32, space: bool) {
        self.chars.push(c);
        self.offs.push(off);
        self.space.push(space);
    }
}

/// Zero-width and other invisible format characters.
fn is_invisible(c: char) -> bool {
    matches!(u32::from(c),
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0xE0000..=0xE0FFF)
}

impl Normalizer {
    pub(crate) fn new(cfg: NormalizeConfig) -> Result<Self, FingerprintError> {
        let t2s = if cfg.traditional_to_simplified {
            Some(T2s::new()?)
        } else {
            None
        };
        let boilerplate = if cfg.boilerplate {
            Some(Boilerplate::new(&cfg)?)
        } else {
            None
        };
        let mut drop: Vec<char> = cfg.drop_chars.chars().collect();
        drop.sort_unstable();
        let mut drop_bmp = vec![0u64; 1024];
        for &c in drop.iter().filter(|&&c| u32::from(c) < 0x10000) {
            let u = u32::from(c) as usize;
            drop_bmp[u / 64] |= 1 << (u % 64);
        }
        Ok(Self {
            folds: FoldTable::new(cfg.fold_diacritics),
            cfg,
            t2s,
            boilerplate,
            drop,
            drop_bmp,
        })
    }

    #[inline]
    fn is_dropped(&self, c: char) -> bool {
        let u = u32::from(c) as usize;
        if u < 0x10000 {
            self.drop_bmp[u / 64] & (1 << (u % 64)) != 0
        } else {
            self.drop.binary_search(&c).is_ok()
        }
    }

    /// Stage 1: per-char NFKC, lowercase, diacritic folding; whitespace and
    /// invisible chars dropped, line breaks kept (one per run), punctuation
    /// kept for the boilerplate patterns.
    fn stage1(&self, text: &str, s1: &mut Stage1) -> u32 {
        let mut n = 0u32;
        let mut space = false;
        let push = |o: char, i: u32, s1: &mut Stage1, space: &mut bool| {
            if o == '\n' || o == '\r' || o == '\u{2028}' || o == '\u{2029}' || o == '\u{85}' {
                if s1.chars.last().is_some_and(|&l| l != '\n') {
                    s1.push('\n', i, true);
                }
                *space = true;
            } else if o.is_whitespace() {
                *space = true;
            } else if !(o.is_control() || is_invisible(o) || self.is_dropped(o)) {
                s1.push(o, i, *space);
                *space = false;
            }
        };
        for c in text.chars() {
            let i = n;
            n += 1;
            if c.is_ascii() {
                push(c.to_ascii_lowercase(), i, s1, &mut space);
            } else if is_common_han(c) {
                // Neither a line break, whitespace, control nor invisible.
                if !self.is_dropped(c) {
                    s1.push(c, i, space);
                    space = false;
                }
            } else if let Some(out) = self.folds.get(c) {
                for &o in out {
                    push(o, i, s1, &mut space);
                }
            } else {
                fold_char(c, self.cfg.fold_diacritics, |o| push(o, i, s1, &mut space));
            }
        }
        n
    }

    pub(crate) fn normalize(&self, text: &str) -> NormalizedText {
        let mut text = text;
        let mut truncated = false;
        if text.len() > self.cfg.max_input_bytes {
            let mut cut = self.cfg.max_input_bytes;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = &text[..cut];
            truncated = true;
        }
        let mut s1 = Stage1::with_capacity(text.len() / 2);
        let original_chars = self.stage1(text, &mut s1);

        if let Some(t2s) = &self.t2s
            && s1.chars.iter().any(|&c| t2s.is_candidate(c))
        {
            let mut s2 = Stage1::with_capacity(s1.chars.len());
            let mut i = 0;
            while i < s1.chars.len() {
                let start = i;
                let han = is_han(s1.chars[i]);
                while i < s1.chars.len() && is_han(s1.chars[i]) == han {
                    i += 1;
                }
                let before = s2.chars.len();
                if han {
                    t2s.convert_run(
                        &s1.chars[start..i],
                        &s1.offs[start..i],
                        &mut s2.chars,
                        &mut s2.offs,
                    );
                } else {
                    s2.chars.extend_from_slice(&s1.chars[start..i]);
                    s2.offs.extend_from_slice(&s1.offs[start..i]);
                }
                s2.space.extend(
                    s1.space[start..i]
                        .iter()
                        .copied()
                        .chain(std::iter::repeat(false))
                        .take(s2.chars.len() - before),
                );
            }
            s1 = s2;
        }

        let mut mask = Vec::new();
        if let Some(bp) = &self.boilerplate {
            let mut s = String::with_capacity(s1.chars.len() * 3);
            s.extend(&s1.chars);
            mask = vec![false; s1.chars.len()];
            bp.mask(&s, &mut mask);
        }
        let mut out_c = Vec::with_capacity(s1.chars.len());
        let mut out_o = Vec::with_capacity(s1.chars.len());
        let mut breaks = Vec::new();
        let mut gap = false;
        for k in 0..s1.chars.len() {
            let c = s1.chars[k];
            gap |= s1.space[k];
            let kept = is_alphanumeric(c) || crate::is_glyph(c);
            if kept && !mask.get(k).copied().unwrap_or(false) {
                if gap && !out_c.is_empty() {
                    breaks.push(out_c.len() as u32);
                }
                gap = false;
                out_c.push(c);
                out_o.push(s1.offs[k]);
            } else {
                gap = true;
            }
        }
        NormalizedText {
            chars: out_c,
            offsets: out_o,
            breaks,
            original_chars,
            truncated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> NormalizedText {
        Normalizer::new(NormalizeConfig::default())
            .expect("default config")
            .normalize(s)
    }

    #[test]
    fn folds_width_case_script_and_junk() {
        let n = norm("Ｈｅｌｌｏ，　世界！\u{200B}滿園春色");
        assert_eq!(n.as_string(), "hello世界满园春色");
        assert_eq!(n.offsets, vec![0, 1, 2, 3, 4, 7, 8, 11, 12, 13, 14]);
    }

    #[test]
    fn kangxi_and_compatibility_lookalikes_fold() {
        // U+2F08 KANGXI RADICAL MAN -> 人, U+F900 -> 豈
        assert_eq!(norm("\u{2F08}\u{F900}").as_string(), "人岂");
    }

    #[test]
    fn removes_watermarks_and_urls() {
        let n =
            norm("他走进门请记住本书首发域名：www.wuyi.me。转身离开\n上一章 ← 章节目录 → 下一章\n");
        assert_eq!(n.as_string(), "他走进门转身离开");
        let n = norm("他说ｗｗｗ．ｘｙｚ．ｃｏｍ好的 w w w . a b c . la 走");
        assert_eq!(n.as_string(), "他说好的走");
        let n = norm("天下大势xxshu.la分久必合");
        assert_eq!(n.as_string(), "天下大势分久必合");
    }

    #[test]
    fn english_sentences_are_not_domains() {
        let n = norm("I saw it. Me too. Go to the store.Come back");
        assert_eq!(n.as_string(), "isawitmetoogotothestorecomeback");
        assert!(n.is_break(1) && n.is_break(4) && !n.is_break(2));
    }

    #[test]
    fn pinyin_tone_marks_fold() {
        assert_eq!(norm("tāmen ta1men").as_string(), "tamenta1men");
    }

    #[test]
    fn original_range_maps_back() {
        let n = norm("ab，cd");
        assert_eq!(n.original_range(1, 3), (1, 4));
        assert_eq!(n.original_range(5, 9), (5, 5));
    }

    #[test]
    fn fast_paths_agree_with_the_slow_ones() {
        assert!(
            (0x4E00..=0x9FFF)
                .chain(0x3400..=0x4DBF)
                .filter_map(char::from_u32)
                .all(|c| is_common_han(c) && c.is_alphanumeric() && !c.is_whitespace())
        );
        assert!(
            (0..0x80u8).all(|b| is_alphanumeric(char::from(b)) == char::from(b).is_alphanumeric())
        );
        let n = Normalizer::new(NormalizeConfig::default()).expect("config");
        for (start, end) in FOLD_BLOCKS {
            for c in (start..end).filter_map(char::from_u32) {
                let mut slow = Vec::new();
                fold_char(c, true, |o| slow.push(o));
                assert_eq!(n.folds.get(c), Some(&slow[..]), "{c:?}");
            }
        }
        assert_eq!(n.folds.get('a'), None);
        for c in "丶丿乀乛亅亻冫氵丨乚刂亠".chars() {
            assert!(n.is_dropped(c));
        }
        assert!(!n.is_dropped('人') && !n.is_dropped('a'));
    }

    #[test]
    fn truncates_long_input() {
        let cfg = NormalizeConfig {
            max_input_bytes: 7,
            ..NormalizeConfig::default()
        };
        let n = Normalizer::new(cfg)
            .expect("config")
            .normalize("一二三四五");
        assert!(n.truncated);
        assert_eq!(n.as_string(), "一二");
    }
}
