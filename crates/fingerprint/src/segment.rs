//! Word features for the tf-idf SimHash.
//!
//! Word SimHash follows the classic Charikar / Manku recipe: content words
//! weighted by tf-idf, so that a chapter's rare names and nouns dominate and
//! function words (的, 了, the, of) cannot make unrelated texts look alike.
//! Han runs are cut by [`crate::segmenter`], jieba's dictionary route
//! without its HMM (HMM only helps unknown words, which we fold into a
//! default IDF anyway); `simhash.hmm = true` uses jieba-rs itself, loaded on
//! first use. Latin runs are words as delimited by the original spacing and
//! punctuation.
//!
//! The IDF table is `data/idf.txt`: the entries of jieba's bundled `idf.txt`
//! (MIT, shipped with jieba-rs 0.11) with IDF below 10, rounded to one
//! decimal; rarer words get [`crate::SimHashConfig::default_idf`]. Regenerate
//! with `examples/derive_tables.rs`.

use std::sync::OnceLock;

use jieba_rs::Jieba;

use crate::hash::{FixedMap, feature_hash};
use crate::normalize::NormalizedText;
use crate::segmenter::{Scratch, Segmenter};
use crate::t2s::is_han;

static IDF_TABLE: &str = include_str!("../data/idf.txt");

/// Chinese function words and very common verbs; hand-picked, public-domain.
const STOP_ZH: &[&str] = &[
    "的", "了", "着", "过", "是", "在", "和", "与", "及", "或", "而", "也", "都", "就", "又", "还",
    "把", "被", "让", "给", "对", "向", "从", "往", "于", "以", "之", "其", "者", "所", "为", "因",
    "但", "却", "则", "若", "如", "即", "便", "乃", "且", "并", "等", "这", "那", "此", "彼", "我",
    "你", "他", "她", "它", "我们", "你们", "他们", "她们", "自己", "一个", "一", "不", "没",
    "没有", "有", "要", "会", "能", "可", "可以", "得", "地", "来", "去", "上", "下", "里", "中",
    "么", "什么", "怎么", "这个", "那个", "这样", "那样", "吗", "呢", "吧", "啊", "呀", "哦", "嗯",
    "哈", "矣", "焉", "哉", "也罢", "便是", "只是", "就是", "不是", "说", "道", "到", "个", "些",
    "这些", "那些",
];

/// English function words.
const STOP_EN: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "was", "are", "were", "be", "been", "it", "its", "he", "she", "his", "her",
    "him", "they", "them", "their", "we", "you", "i", "me", "my", "that", "this", "these", "those",
    "not", "no", "so", "if", "had", "has", "have", "do", "did", "which", "who", "what", "there",
    "then",
];

/// IDF table value marking a stop word: one lookup per word decides both.
const STOP: f32 = f32::NEG_INFINITY;

/// Segmenter plus IDF table (stop words as [`STOP`]), keyed by feature hash.
pub(crate) struct WordFeatures {
    segmenter: Segmenter,
    /// Only for `simhash.hmm = true`.
    jieba: OnceLock<Jieba>,
    idf: FixedMap<u64, f32>,
}

impl std::fmt::Debug for WordFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordFeatures")
            .field("idf_entries", &self.idf.len())
            .finish()
    }
}

impl WordFeatures {
    pub(crate) fn new() -> Self {
        let mut idf = FixedMap::default();
        for line in IDF_TABLE.lines().filter(|l| !l.starts_with('#')) {
            let mut it = line.split(' ');
            if let (Some(w), Some(v)) = (it.next(), it.next().and_then(|v| v.parse::<f32>().ok())) {
                idf.insert(feature_hash(w.as_bytes()), v);
            }
        }
        for w in STOP_ZH.iter().chain(STOP_EN) {
            idf.insert(feature_hash(w.as_bytes()), STOP);
        }
        Self {
            segmenter: Segmenter::new(),
            jieba: OnceLock::new(),
            idf,
        }
    }

    /// IDF of a word hash; `None` for a stop word.
    #[inline]
    pub(crate) fn idf(&self, h: u64, default_idf: f32) -> Option<f32> {
        match self.idf.get(&h) {
            None => Some(default_idf),
            Some(&idf) if idf != STOP => Some(idf),
            Some(_) => None,
        }
    }

    /// Calls `sink(hash, idf)` for every non-stop word of `text`, in order.
    #[cfg(test)]
    pub(crate) fn for_each_word(
        &self,
        text: &NormalizedText,
        hmm: bool,
        default_idf: f32,
        mut sink: impl FnMut(u64, f32),
    ) {
        self.for_each_word_hash(text, hmm, |h| {
            if let Some(idf) = self.idf(h, default_idf) {
                sink(h, idf);
            }
        });
    }

    /// Calls `sink(hash)` for every word of `text`, stop words included, in
    /// order (the IDF table is looked up once per distinct word instead: it
    /// is too big for the cache). `hmm` enables jieba's HMM for unknown words.
    pub(crate) fn for_each_word_hash(
        &self,
        text: &NormalizedText,
        hmm: bool,
        mut sink: impl FnMut(u64),
    ) {
        let chars = &text.chars;
        let mut buf = String::new();
        let mut scratch = Scratch::default();
        let hash = |buf: &mut String, w: &[char]| {
            // Dictionary words are at most 16 chars: encoded on the stack.
            let mut bytes = [0u8; 64];
            if w.len() <= 16 {
                let mut n = 0;
                for c in w {
                    n += c.encode_utf8(&mut bytes[n..]).len();
                }
                return feature_hash(&bytes[..n]);
            }
            buf.clear();
            buf.extend(w);
            feature_hash(buf.as_bytes())
        };
        // Segments between separators (sentences, for jieba), then runs of
        // Han / non-Han chars inside them.
        let bounds = text.breaks.iter().map(|&b| b as usize).chain([chars.len()]);
        let mut seg_start = 0;
        for seg_end in bounds {
            let mut i = seg_start;
            while i < seg_end {
                let han = is_han(chars[i]);
                let start = i;
                while i < seg_end && is_han(chars[i]) == han {
                    i += 1;
                }
                let run = &chars[start..i];
                if !han {
                    sink(hash(&mut buf, run));
                } else if hmm {
                    let jieba = self.jieba.get_or_init(Jieba::new);
                    let text: String = run.iter().collect();
                    for tok in jieba.cut(&text, true) {
                        sink(feature_hash(tok.word.as_bytes()));
                    }
                } else {
                    self.segmenter
                        .cut(run, &mut scratch, |a, b| sink(hash(&mut buf, &run[a..b])));
                }
            }
            seg_start = seg_end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::{NormalizeConfig, Normalizer};

    #[test]
    fn words_skip_stop_words_and_use_idf() {
        let wf = WordFeatures::new();
        let n = Normalizer::new(NormalizeConfig::default()).expect("config");
        let text = n.normalize("我们的计算机很好。The quick fox");
        let mut words = Vec::new();
        wf.for_each_word(&text, false, 12.0, |h, idf| words.push((h, idf)));
        assert!(
            words
                .iter()
                .any(|&(h, _)| h == feature_hash("计算机".as_bytes()))
        );
        assert!(words.iter().any(|&(h, _)| h == feature_hash(b"quick")));
        assert!(
            !words
                .iter()
                .any(|&(h, _)| h == feature_hash("我们".as_bytes()))
        );
        assert!(!words.iter().any(|&(h, _)| h == feature_hash(b"the")));
        let idf = words
            .iter()
            .find(|&&(h, _)| h == feature_hash("计算机".as_bytes()))
            .map(|w| w.1);
        assert!(idf.is_some_and(|v| v < 10.0));
    }

    #[test]
    fn idf_values_never_collide_with_the_stop_marker() {
        let wf = WordFeatures::new();
        let stops = STOP_ZH.len() + STOP_EN.len();
        let finite = wf.idf.values().filter(|v| v.is_finite() && **v >= 0.0);
        assert_eq!(finite.count() + stops, wf.idf.len());
    }
}
