//! Precise verification: which parts of a chapter appear on a page.
//!
//! Fingerprints only nominate candidates; a report needs evidence ("page
//! chars 120-2310 copy chapter chars 0-2200") and a coverage figure that a
//! threshold can be set on. The verifier works on a homophone-robust token
//! stream (toneless pinyin syllables for Han chars, optionally folded by
//! near-homophone confusions; pinyin words written in Latin letters inside
//! Chinese text parse back into syllables), finds exact k-token seeds through
//! a hash table, and chains seeds that stay near one diagonal into aligned
//! runs. Gaps left by typos, synonyms or stray watermarks are bridged; runs
//! are found in any order, so shuffled or deleted paragraphs only split spans.
//! A run must be long and dense enough to count: incidental shared phrases
//! ("且听下回分解") never become spans.
//!
//! Cost is linear in the two texts plus the number of seed hits (capped per
//! k-gram): a 5,000-char chapter against a 5,000-char page takes well under
//! a millisecond in release builds.

use serde::{Deserialize, Serialize};

use crate::FingerprintError;
use crate::hash::{FixedMap, mix64};
use crate::normalize::NormalizedText;
use crate::phonetic::Phonetic;
use crate::t2s::is_han;

/// Verifier settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VerifyConfig {
    /// Seed length in tokens.
    pub seed_k: u32,
    /// Fold near-homophones (z/zh, n/l, -n/-ng ...) into one token.
    pub fuzzy_syllables: bool,
    /// Read Latin letter runs next to Han text as pinyin syllables.
    pub parse_pinyin: bool,
    /// Largest gap (tokens, on either side) bridged inside one run.
    pub max_gap: u32,
    /// Largest shift of the diagonal between two seeds of one run (absorbs
    /// inserted or deleted chars).
    pub max_drift: u32,
    /// Shortest reported run, in chapter tokens.
    pub min_span: u32,
    /// Smallest share of a run's chapter tokens covered by seeds.
    pub min_density: f32,
    /// Seeds occurring more often than this in the chapter are ignored.
    pub max_occurrences: u32,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        Self {
            seed_k: 4,
            fuzzy_syllables: true,
            parse_pinyin: true,
            max_gap: 24,
            max_drift: 6,
            min_span: 48,
            min_density: 0.35,
            max_occurrences: 8,
        }
    }
}

impl VerifyConfig {
    pub(crate) fn validate(&self) -> Result<(), FingerprintError> {
        if !(2..=32).contains(&self.seed_k)
            || self.min_span < self.seed_k
            || !(0.0..=1.0).contains(&self.min_density)
        {
            return Err(FingerprintError::Config(
                "verify: seed_k in 2..=32, min_span >= seed_k, min_density in [0, 1]".into(),
            ));
        }
        Ok(())
    }
}

/// One copied run: original char offsets on both sides, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopiedSpan {
    /// Start in the chapter's original text.
    pub chapter_start: u32,
    /// End in the chapter's original text.
    pub chapter_end: u32,
    /// Start in the page's original text.
    pub page_start: u32,
    /// End in the page's original text.
    pub page_end: u32,
    /// Chapter tokens covered by exact seeds inside this run.
    pub matched: u32,
}

/// Result of [`crate::Fingerprinter::verify`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Copied runs, ordered by page position.
    pub spans: Vec<CopiedSpan>,
    /// Share of the chapter's normalized chars inside some span.
    pub chapter_coverage: f32,
    /// Share of the page's normalized chars inside some span.
    pub page_coverage: f32,
    /// Chapter tokens covered by exact seeds (a stricter count than coverage).
    pub matched_chars: u32,
    /// Characters the page drew as images inside the spans, aligned as wildcards.
    #[serde(default)]
    pub wildcards: u32,
}

/// Token stream with token -> normalized char range.
#[derive(Debug, Default)]
pub(crate) struct Tokens {
    pub(crate) ids: Vec<u32>,
    starts: Vec<u32>,
    ends: Vec<u32>,
}

impl Tokens {
    pub(crate) fn new(phon: &Phonetic, text: &NormalizedText, cfg: &VerifyConfig) -> Self {
        let chars = &text.chars;
        let mut t = Tokens {
            ids: Vec::with_capacity(chars.len()),
            starts: Vec::with_capacity(chars.len()),
            ends: Vec::with_capacity(chars.len()),
        };
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if cfg.parse_pinyin && c.is_ascii_lowercase() {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_lowercase() || chars[i].is_ascii_digit())
                {
                    i += 1;
                }
                let han_near = (start > 0 && is_han(chars[start - 1]))
                    || (i < chars.len() && is_han(chars[i]));
                if !(han_near && t.push_pinyin(phon, cfg, &chars[start..i], start)) {
                    for (j, &c) in chars[start..i].iter().enumerate() {
                        t.push(u32::from(c), start + j, start + j + 1);
                    }
                }
                continue;
            }
            t.push(phon.token(c, cfg.fuzzy_syllables), i, i + 1);
            i += 1;
        }
        t
    }

    fn push(&mut self, id: u32, start: usize, end: usize) {
        self.ids.push(id);
        self.starts.push(start as u32);
        self.ends.push(end as u32);
    }

    /// Greedy longest-match pinyin parse of a letter run (tone digits
    /// skipped). Pushes nothing and returns false unless all of it parses.
    fn push_pinyin(
        &mut self,
        phon: &Phonetic,
        cfg: &VerifyConfig,
        run: &[char],
        base: usize,
    ) -> bool {
        let mut parsed = Vec::new();
        let mut i = 0;
        let mut buf = String::new();
        while i < run.len() {
            let mut found = None;
            for len in (1..=6.min(run.len() - i)).rev() {
                buf.clear();
                buf.extend(&run[i..i + len]);
                if let Some(s) = phon.syllable_of_name(&buf) {
                    found = Some((s, len));
                    break;
                }
            }
            let Some((s, len)) = found else { return false };
            let mut end = i + len;
            if end < run.len() && ('1'..='5').contains(&run[end]) {
                end += 1;
            }
            parsed.push((
                phon.syllable_token(s, cfg.fuzzy_syllables),
                base + i,
                base + end,
            ));
            i = end;
        }
        for (id, s, e) in parsed {
            self.push(id, s, e);
        }
        true
    }
}

/// The token of [`crate::GLYPH_PLACEHOLDER`]: a character the page drew as an
/// image, which may stand for any chapter token.
const WILDCARD: u32 = crate::GLYPH_PLACEHOLDER as u32;
/// Stands for the wildcard's position in a masked k-gram hash; no real token.
const MASKED: u32 = u32::MAX - 1;

fn kgram_hash(window: impl Iterator<Item = u32>) -> u64 {
    mix64(window.fold(0u64, |h, t| {
        h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(u64::from(t) + 1)
    }))
}

/// k-gram hashes of a token stream.
fn kgram_hashes(ids: &[u32], k: usize) -> Vec<u64> {
    if ids.len() < k {
        return Vec::new();
    }
    ids.windows(k)
        .map(|w| kgram_hash(w.iter().copied()))
        .collect()
}

/// k-gram hashes of a page: a window holding one wildcard hashes with that
/// position masked (it meets the chapter's masked hashes), one holding more
/// is left out (`None`).
fn page_kgram_hashes(ids: &[u32], k: usize) -> Vec<Option<u64>> {
    if ids.len() < k {
        return Vec::new();
    }
    ids.windows(k)
        .map(|w| match w.iter().filter(|&&t| t == WILDCARD).count() {
            0 => Some(kgram_hash(w.iter().copied())),
            1 => Some(kgram_hash(
                w.iter().map(|&t| if t == WILDCARD { MASKED } else { t }),
            )),
            _ => None,
        })
        .collect()
}

/// Seed table of a chapter: k-gram hash -> (first index into `positions`, count).
fn seed_table(hashes: Vec<(u64, u32)>) -> (FixedMap<u64, (u32, u32)>, Vec<u32>) {
    let mut pairs = hashes;
    pairs.sort_unstable();
    let mut table = FixedMap::default();
    table.reserve(pairs.len());
    let mut i = 0;
    while i < pairs.len() {
        let j = pairs[i..].partition_point(|p| p.0 == pairs[i].0) + i;
        table.insert(pairs[i].0, (i as u32, (j - i) as u32));
        i = j;
    }
    (table, pairs.into_iter().map(|p| p.1).collect())
}

/// The chapter's k-grams with each position masked in turn: built only for a
/// page that holds wildcards.
fn masked_seed_table(ids: &[u32], k: usize) -> (FixedMap<u64, (u32, u32)>, Vec<u32>) {
    let mut hashes = Vec::with_capacity(ids.len().saturating_sub(k - 1) * k);
    for (i, w) in ids.windows(k).enumerate() {
        for masked in 0..k {
            let window = w
                .iter()
                .enumerate()
                .map(|(j, &t)| if j == masked { MASKED } else { t });
            hashes.push((kgram_hash(window), i as u32));
        }
    }
    seed_table(hashes)
}

/// A chapter prepared for many verifications (tokens and seed table built
/// once); see [`crate::Fingerprinter::prepare_chapter`].
#[derive(Debug)]
pub struct PreparedChapter {
    text: NormalizedText,
    tokens: Tokens,
    /// k-gram hash -> (first index into `positions`, count).
    table: FixedMap<u64, (u32, u32)>,
    positions: Vec<u32>,
}

impl PreparedChapter {
    pub(crate) fn new(phon: &Phonetic, text: &NormalizedText, cfg: &VerifyConfig) -> Self {
        let tokens = Tokens::new(phon, text, cfg);
        let hashes = kgram_hashes(&tokens.ids, cfg.seed_k as usize);
        let (table, positions) = seed_table(
            hashes
                .iter()
                .enumerate()
                .map(|(i, &h)| (h, i as u32))
                .collect(),
        );
        Self {
            text: text.clone(),
            tokens,
            table,
            positions,
        }
    }

    /// The normalized chapter.
    pub fn text(&self) -> &NormalizedText {
        &self.text
    }
}

#[derive(Debug, Clone, Copy)]
struct Chain {
    a_start: u32,
    a_end: u32,
    b_start: u32,
    b_end: u32,
    last_a: u32,
    last_b: u32,
    matched: u32,
}

/// Seeds -> chains -> spans.
pub(crate) fn verify_prepared(
    phon: &Phonetic,
    chapter: &PreparedChapter,
    page: &NormalizedText,
    cfg: &VerifyConfig,
) -> Verification {
    let chapter_text = &chapter.text;
    let k = cfg.seed_k;
    let pt = Tokens::new(phon, page, cfg);
    let hashes = page_kgram_hashes(&pt.ids, k as usize);
    let masked = pt
        .ids
        .contains(&WILDCARD)
        .then(|| masked_seed_table(&chapter.tokens.ids, k as usize));
    let mut active: Vec<Chain> = Vec::new();
    let mut done: Vec<Chain> = Vec::new();
    for (b, h) in hashes.iter().enumerate() {
        let b = b as u32;
        let Some(h) = h else { continue };
        let (table, positions) = match &masked {
            Some((table, positions))
                if pt.ids[b as usize..(b + k) as usize].contains(&WILDCARD) =>
            {
                (table, positions)
            }
            _ => (&chapter.table, &chapter.positions),
        };
        let Some(&(first, count)) = table.get(h) else {
            continue;
        };
        if count > cfg.max_occurrences {
            continue;
        }
        // Retire chains that can no longer be extended.
        let mut idx = 0;
        while idx < active.len() {
            if b > active[idx].last_b + cfg.max_gap + k {
                done.push(active.swap_remove(idx));
            } else {
                idx += 1;
            }
        }
        for &a in &positions[first as usize..(first + count) as usize] {
            let diag = i64::from(b) - i64::from(a);
            let mut best: Option<(usize, i64)> = None;
            for (ci, c) in active.iter().enumerate() {
                if a <= c.last_a || a > c.last_a + cfg.max_gap + k || b <= c.last_b {
                    continue;
                }
                let drift = (diag - (i64::from(c.last_b) - i64::from(c.last_a))).abs();
                if drift <= i64::from(cfg.max_drift) && best.is_none_or(|(_, d)| drift < d) {
                    best = Some((ci, drift));
                }
            }
            match best {
                Some((ci, _)) => {
                    let c = &mut active[ci];
                    c.matched += (a + k).saturating_sub(c.a_end.max(a)).min(k);
                    c.a_end = c.a_end.max(a + k);
                    c.b_end = c.b_end.max(b + k);
                    c.last_a = a;
                    c.last_b = b;
                }
                None if active.len() < 512 => active.push(Chain {
                    a_start: a,
                    a_end: a + k,
                    b_start: b,
                    b_end: b + k,
                    last_a: a,
                    last_b: b,
                    matched: k,
                }),
                None => {}
            }
        }
    }
    done.extend(active);
    let mut kept: Vec<Chain> = done
        .into_iter()
        .filter(|c| {
            let len = c.a_end - c.a_start;
            len >= cfg.min_span && c.matched as f32 >= cfg.min_density * len as f32
        })
        .collect();
    kept.sort_unstable_by_key(|c| (c.b_start, c.a_start));

    let ct = &chapter.tokens;
    let mut a_ranges = Vec::with_capacity(kept.len());
    let mut b_ranges = Vec::with_capacity(kept.len());
    let mut spans = Vec::with_capacity(kept.len());
    let mut matched = 0u32;
    let mut wildcards = 0u32;
    for c in &kept {
        wildcards += pt.ids[c.b_start as usize..c.b_end as usize]
            .iter()
            .filter(|&&t| t == WILDCARD)
            .count() as u32;
        let (na0, na1) = (ct.starts[c.a_start as usize], ct.ends[c.a_end as usize - 1]);
        let (nb0, nb1) = (pt.starts[c.b_start as usize], pt.ends[c.b_end as usize - 1]);
        a_ranges.push((na0, na1));
        b_ranges.push((nb0, nb1));
        let (chapter_start, chapter_end) = chapter_text.original_range(na0 as usize, na1 as usize);
        let (page_start, page_end) = page.original_range(nb0 as usize, nb1 as usize);
        spans.push(CopiedSpan {
            chapter_start,
            chapter_end,
            page_start,
            page_end,
            matched: c.matched,
        });
        matched += c.matched;
    }
    let cov = |ranges: &[(u32, u32)], total: usize| {
        if total == 0 {
            return 0.0;
        }
        (covered_len(ranges.iter().copied()) as f64 / total as f64).min(1.0) as f32
    };
    Verification {
        chapter_coverage: cov(&a_ranges, chapter_text.len()),
        page_coverage: cov(&b_ranges, page.len()),
        matched_chars: matched.min(chapter_text.len() as u32),
        wildcards,
        spans,
    }
}

/// Length of the union of half-open `(start, end)` ranges: overlapping or
/// repeated ranges count once. Coverage, the infringement bar and the
/// reports all measure copied text this way.
pub fn covered_len(ranges: impl IntoIterator<Item = (u32, u32)>) -> u64 {
    let mut ranges: Vec<(u32, u32)> = ranges
        .into_iter()
        .filter(|(start, end)| end > start)
        .collect();
    ranges.sort_unstable();
    let mut total = 0u64;
    let mut current: Option<(u32, u32)> = None;
    for (start, end) in ranges {
        current = match current {
            Some((open, close)) if start <= close => Some((open, close.max(end))),
            Some((open, close)) => {
                total += u64::from(close - open);
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(0, |(open, close)| u64::from(close - open))
}
