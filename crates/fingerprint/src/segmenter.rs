//! Dictionary segmentation of Han runs, the same words as jieba-rs's
//! `cut(_, false)` over the same dictionary, without its costs: the trie is
//! compiled at build time (`build.rs`), so start-up only copies it, and a
//! run is cut straight from the normalized chars with one backward pass that
//! walks the trie and scores the route together (no DAG, no token vector, no
//! string per run).
//!
//! Equivalence with jieba is what keeps fingerprints stable; the tests check
//! it against jieba-rs itself. The rules it depends on: a run is cut into
//! blocks at characters outside jieba's CJK ranges (each one its own word);
//! within a block the route maximizes the sum of `ln(freq) - ln(total)`,
//! summed from the block's end, a position with no dictionary word being a
//! single character of frequency 1; ties go to the longer word.

static BLOB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/segdict.bin"));

const BMP_FIRST: u32 = 0x3400;
const BMP_LEN: usize = 0x9FFF - 0x3400 + 1;

const INDEX_BITS: u32 = 21;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

const CLASS_BITS: u32 = 64 - 2 * INDEX_BITS;

/// A trie node in eight bytes: `base`, `check` and the frequency class of
/// the word ending here (0: none). The walk is bound by loading these, so
/// the smaller they are, the more of the hot ones stay in cache.
#[derive(Clone, Copy)]
struct Slot(u64);

impl Slot {
    #[inline(always)]
    fn base(self) -> usize {
        (self.0 & INDEX_MASK) as usize
    }
    #[inline(always)]
    fn check(self) -> usize {
        ((self.0 >> INDEX_BITS) & INDEX_MASK) as usize
    }
    #[inline(always)]
    fn class(self) -> usize {
        (self.0 >> (2 * INDEX_BITS)) as usize
    }
}

/// The compiled dictionary.
pub(crate) struct Segmenter {
    slots: Vec<Slot>,
    /// Trie code of U+3400..=U+9FFF; 0 when no word has the char.
    bmp: Vec<u16>,
    /// `(char, code)` of the other chars of the dictionary, sorted.
    other: Vec<(u32, u32)>,
    /// `ln(freq) - ln(total)` per frequency class (class 0 unused).
    score: Vec<f64>,
    /// Score of an unknown single char: `ln(1) - ln(total)`.
    unknown: f64,
}

/// Reusable per-call buffers.
#[derive(Default)]
pub(crate) struct Scratch {
    codes: Vec<u32>,
    /// Best `(prob, end)` from each position of a block.
    route: Vec<(f64, u32)>,
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        let mut out = [0; N];
        out.copy_from_slice(head);
        out
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
}

impl Segmenter {
    pub(crate) fn new() -> Self {
        let mut r = Reader(BLOB);
        let total = u64::from_le_bytes(r.take());
        let (classes, slots, other) = (r.u32() as usize, r.u32() as usize, r.u32() as usize);
        assert!(slots as u64 <= INDEX_MASK, "trie too large for its slots");
        assert!(classes < 1 << CLASS_BITS, "too many frequency classes");
        let log_total = (total as f64).ln();
        // As jieba computes it: ln(freq) - ln(total).
        let score: Vec<f64> = [f64::NEG_INFINITY]
            .into_iter()
            .chain((0..classes).map(|_| f64::from(r.u32()).ln() - log_total))
            .collect();
        let bmp = (0..BMP_LEN).map(|_| u16::from_le_bytes(r.take())).collect();
        let other = (0..other).map(|_| (r.u32(), r.u32())).collect();
        let slots = (0..slots)
            .map(|_| {
                let (base, check, class) = (r.u32(), r.u32(), r.u32());
                // Empty slots' check (u32::MAX) masks to an index no slot has.
                let check = u64::from(check).min(INDEX_MASK);
                Slot(u64::from(base) | check << INDEX_BITS | u64::from(class) << (2 * INDEX_BITS))
            })
            .collect();
        debug_assert!(r.0.is_empty());
        Self {
            slots,
            bmp,
            other,
            score,
            unknown: 0.0 - log_total,
        }
    }

    /// Trie code of `c`; 0 for a char no word contains.
    #[inline]
    fn code(&self, c: char) -> u32 {
        let u = u32::from(c);
        match u.wrapping_sub(BMP_FIRST) {
            i if (i as usize) < BMP_LEN => u32::from(self.bmp[i as usize]),
            _ => self
                .other
                .binary_search_by_key(&u, |&(c, _)| c)
                .map_or(0, |i| self.other[i].1),
        }
    }

    /// Calls `word(start, end)` for every word of `run`, in order. `run`
    /// holds Han chars only (any others are cut as single chars too).
    pub(crate) fn cut(
        &self,
        run: &[char],
        scratch: &mut Scratch,
        mut word: impl FnMut(usize, usize),
    ) {
        let mut i = 0;
        while i < run.len() {
            if !is_jieba_cjk(run[i]) {
                word(i, i + 1);
                i += 1;
                continue;
            }
            let start = i;
            while i < run.len() && is_jieba_cjk(run[i]) {
                i += 1;
            }
            self.cut_block(&run[start..i], scratch, |a, b| word(start + a, start + b));
        }
    }

    fn cut_block(&self, block: &[char], scratch: &mut Scratch, mut word: impl FnMut(usize, usize)) {
        let n = block.len();
        let Scratch { codes, route } = scratch;
        codes.clear();
        codes.extend(block.iter().map(|&c| self.code(c)));
        route.clear();
        route.resize(n + 1, (0.0, n as u32));
        for idx in (0..n).rev() {
            // No word starts here: the char alone, with frequency 1.
            let mut best = (f64::NEG_INFINITY, 0u32);
            let (mut at, mut node) = (0, self.slots[0]);
            for (j, &c) in codes[idx..].iter().enumerate() {
                if c == 0 {
                    break;
                }
                let t = node.base() + c as usize;
                match self.slots.get(t) {
                    Some(&child) if child.check() == at => (at, node) = (t, child),
                    _ => break,
                }
                if node.class() != 0 {
                    let end = idx + j + 1;
                    let prob = self.score[node.class()] + route[end].0;
                    // Ends only grow: a tie goes to this longer word.
                    if prob >= best.0 {
                        best = (prob, end as u32);
                    }
                }
            }
            route[idx] = if best.1 == 0 {
                (self.unknown + route[idx + 1].0, idx as u32 + 1)
            } else {
                best
            };
        }
        let mut x = 0;
        while x < n {
            let y = route[x].1 as usize;
            word(x, y);
            x = y;
        }
    }
}

/// jieba-rs's `is_cjk`: the chars its segmenter keeps in one block.
#[inline]
fn is_jieba_cjk(c: char) -> bool {
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2A6DF}'
        | '\u{2A700}'..='\u{2EBEF}'
        | '\u{2F800}'..='\u{2FA1F}')
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use jieba_rs::Jieba;
    use proptest::prelude::*;

    use super::*;

    fn ours(seg: &Segmenter, text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        let mut words = Vec::new();
        seg.cut(&chars, &mut Scratch::default(), |a, b| {
            words.push(chars[a..b].iter().collect())
        });
        words
    }

    fn jiebas(jieba: &Jieba, text: &str) -> Vec<String> {
        jieba
            .cut(text, false)
            .into_iter()
            .map(|t| t.word.to_owned())
            .collect()
    }

    /// Han runs of `text`, as `segment` hands them over.
    fn han_runs(text: &str) -> impl Iterator<Item = String> + '_ {
        text.split(|c| !crate::t2s::is_han(c))
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
    }

    fn fixture() -> &'static (Segmenter, Jieba) {
        static BOTH: std::sync::OnceLock<(Segmenter, Jieba)> = std::sync::OnceLock::new();
        BOTH.get_or_init(|| (Segmenter::new(), Jieba::new()))
    }

    #[test]
    fn every_dictionary_word_cuts_as_jieba_cuts_it() {
        let (seg, jieba) = fixture();
        let dict = include_str!("../data/dict.txt");
        let mut n = 0;
        for word in dict
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(' ').next())
        {
            assert_eq!(ours(seg, word), jiebas(jieba, word), "{word}");
            n += 1;
        }
        assert!(n > 300_000, "only {n} words");
    }

    #[test]
    fn chars_outside_jiebas_ranges_are_words_of_their_own() {
        let (seg, jieba) = fixture();
        // U+2EBF5 is Han to the normalizer but outside jieba's blocks;
        // U+9FA6 is in a block but in no dictionary word.
        for text in [
            "中华人民\u{2EBF5}共和国",
            "\u{2EBF5}",
            "研究\u{9FA6}生命",
            "\u{9FA6}\u{9FA6}",
        ] {
            assert_eq!(ours(seg, text), jiebas(jieba, text), "{text}");
        }
        assert_eq!(ours(seg, "中华人民\u{2EBF5}共和国").len(), 3);
    }

    /// The shared dev sets' registered works: every Han run cut alike.
    #[test]
    fn devset_works_cut_as_jieba_cuts_them() {
        let (seg, jieba) = fixture();
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
        let mut files = 0;
        for set in ["devset", "devset-hard", "devset-wild"] {
            let Ok(works) = std::fs::read_dir(shared.join(set).join("works")) else {
                continue;
            };
            for work in works.flatten() {
                let Ok(chapters) = std::fs::read_dir(work.path().join("chapters")) else {
                    continue;
                };
                for chapter in chapters.flatten() {
                    let Ok(text) = std::fs::read_to_string(chapter.path()) else {
                        continue;
                    };
                    files += 1;
                    for run in han_runs(&text) {
                        assert_eq!(ours(seg, &run), jiebas(jieba, &run), "{run}");
                    }
                }
            }
        }
        if files == 0 {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "dev sets missing and CI=true"
            );
            eprintln!("note: {} has no dev sets, skipping", shared.display());
        }
    }

    /// Text made of dictionary words, their halves and stray chars, so
    /// that long words, overlaps and ties all occur.
    fn text_strategy() -> impl Strategy<Value = String> {
        let dict = include_str!("../data/dict.txt");
        let words: Vec<&'static str> = dict
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(' ').next())
            .step_by(37)
            .collect();
        let piece = prop_oneof![
            6 => prop::sample::select(words.clone()).prop_map(str::to_owned),
            2 => prop::sample::select(words).prop_map(|w| w.chars().skip(1).collect::<String>()),
            1 => prop::sample::select(vec!["的", "了", "是", "\u{9FA6}", "\u{2EBF5}", "\u{3400}", "\u{F900}"])
                .prop_map(str::to_owned),
        ];
        prop::collection::vec(piece, 1..40).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn random_text_cuts_as_jieba_cuts_it(text in text_strategy()) {
            let (seg, jieba) = fixture();
            for run in han_runs(&text) {
                prop_assert_eq!(ours(seg, &run), jiebas(jieba, &run));
            }
        }
    }
}
