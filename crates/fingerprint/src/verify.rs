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
use crate::hash::{FixedMap, tokens_hash};
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
    /// Shortest run (chapter tokens) that counts as a piece of a mosaic: a
    /// copy whose sentences were shuffled.
    pub mosaic_min_span: u32,
    /// Smallest seed density of a mosaic piece.
    pub mosaic_min_density: f32,
    /// Chapter tokens a mosaic and the long runs must cover together.
    pub mosaic_min_total: u32,
    /// Share of the chapter a mosaic and the long runs must cover together.
    pub mosaic_min_share: f32,
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
            mosaic_min_span: 16,
            mosaic_min_density: 0.75,
            mosaic_min_total: 192,
            mosaic_min_share: 0.25,
        }
    }
}

impl VerifyConfig {
    pub(crate) fn validate(&self) -> Result<(), FingerprintError> {
        if !(2..=32).contains(&self.seed_k)
            || self.min_span < self.seed_k
            || !(0.0..=1.0).contains(&self.min_density)
            || self.mosaic_min_span < self.seed_k
            || !(0.0..=1.0).contains(&self.mosaic_min_density)
            || !(0.0..=1.0).contains(&self.mosaic_min_share)
        {
            return Err(FingerprintError::Config(
                "verify: seed_k in 2..=32, min_span and mosaic_min_span >= seed_k, densities in [0, 1]".into(),
            ));
        }
        Ok(())
    }
}

/// A copied run: `[chapter_start, chapter_end)` of the chapter text appears as
/// `[page_start, page_end)` of the page text (character offsets in the originals).
// The one definition: `copyhound_core::model::CopiedSpan` is this type, stored in
// every match (its doc comment is the OpenAPI schema's description).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CopiedSpan {
    /// Start in the chapter text.
    pub chapter_start: u32,
    /// End in the chapter text (exclusive).
    pub chapter_end: u32,
    /// Start in the page text.
    pub page_start: u32,
    /// End in the page text (exclusive).
    pub page_end: u32,
}

/// One run the verifier found: its span, and the chapter tokens exact seeds
/// cover inside it. Reads as its [`CopiedSpan`] (`run.chapter_start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedSpan {
    /// Original char offsets on both sides.
    #[serde(flatten)]
    pub span: CopiedSpan,
    /// Chapter tokens covered by exact seeds inside this run.
    pub matched: u32,
}

impl std::ops::Deref for VerifiedSpan {
    type Target = CopiedSpan;

    fn deref(&self) -> &CopiedSpan {
        &self.span
    }
}

/// Result of [`crate::Fingerprinter::verify`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Copied runs, ordered by page position.
    pub spans: Vec<VerifiedSpan>,
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

/// Stands for a wildcard's position in a masked k-gram hash; no real token.
const MASKED: u32 = u32::MAX - 1;
/// Rounds of reading named glyphs from the runs found so far.
const GLYPH_ROUNDS: usize = 3;
/// A run lends its glyph readings only once it holds this many seed tokens.
const MIN_READING_MATCHED: u32 = 12;

/// Short runs considered for a mosaic, strongest first.
const MAX_MOSAIC_PIECES: usize = 4096;

/// Whether a verifier token is a glyph: glyph characters have no syllable and
/// keep their code point as token (syllable tokens start above Unicode).
fn is_wild(token: u32) -> bool {
    char::from_u32(token).is_some_and(crate::is_glyph)
}

fn kgram_hash(window: impl Iterator<Item = u32>) -> u64 {
    tokens_hash(0, window)
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
        .map(|w| match w.iter().filter(|&&t| is_wild(t)).count() {
            0 => Some(kgram_hash(w.iter().copied())),
            1 => Some(kgram_hash(
                w.iter().map(|&t| if is_wild(t) { MASKED } else { t }),
            )),
            _ => None,
        })
        .collect()
}

/// k-gram hash -> (first index into the positions, count), and the positions.
type SeedTable = (SeedIndex, Vec<u32>);

/// k-gram hash -> (first index into the positions, count), by open
/// addressing over the hashes themselves (already mixed by `tokens_hash`):
/// a key sits beside its value, so a probe reads one cache line, where a
/// general map hashes the key again and keeps its control bytes apart (two
/// misses per probe on the verifier's hottest line).
#[derive(Debug)]
struct SeedIndex {
    /// (hash, first, count); a count of 0 marks an empty slot.
    slots: Vec<(u64, u32, u32)>,
    shift: u32,
    /// Keys held.
    len: usize,
}

impl SeedIndex {
    /// Room for `keys` distinct keys, at most half full.
    fn with_room(keys: usize) -> Self {
        let slots = (keys * 2).next_power_of_two().max(8);
        Self {
            slots: vec![(0, 0, 0); slots],
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    /// Adds a key not yet present, with `count` ≥ 1.
    fn insert(&mut self, hash: u64, first: u32, count: u32) {
        let mask = self.slots.len() - 1;
        let mut i = (hash >> self.shift) as usize;
        while self.slots[i].2 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (hash, first, count);
        self.len += 1;
    }

    /// Starts loading the line where `hash`'s probe begins.
    #[inline]
    fn prefetch(&self, hash: u64) {
        prefetch_index::prefetch_index(&self.slots, (hash >> self.shift) as usize);
    }

    #[inline]
    fn get(&self, hash: u64) -> Option<(u32, u32)> {
        let mask = self.slots.len() - 1;
        let mut i = (hash >> self.shift) as usize;
        loop {
            let (key, first, count) = self.slots[i];
            if count == 0 {
                return None;
            }
            if key == hash {
                return Some((first, count));
            }
            i = (i + 1) & mask;
        }
    }

    fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().filter(|s| s.2 != 0).map(|s| s.0)
    }

    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<(u64, u32, u32)>()
    }
}

/// One bit per k-gram hash of a chapter, 16 bits per distinct k-gram: most
/// of a page's k-grams are not in the chapter, and this answers "not here"
/// from L1 for ~94 % of them, where the seed table's probe misses cache (the
/// largest single cost of a comparison).
#[derive(Debug)]
struct SeedFilter {
    bits: Vec<u64>,
    shift: u32,
}

impl SeedFilter {
    fn new(table: &SeedIndex) -> Self {
        let wanted = (table.len * 16).next_power_of_two().max(512);
        let mut filter = Self {
            bits: vec![0; wanted / 64],
            shift: 64 - wanted.trailing_zeros(),
        };
        for hash in table.keys() {
            let slot = filter.slot(hash);
            filter.bits[slot / 64] |= 1 << (slot % 64);
        }
        filter
    }

    #[inline]
    fn slot(&self, hash: u64) -> usize {
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// False only for a hash the chapter does not have.
    #[inline]
    fn may_contain(&self, hash: u64) -> bool {
        let slot = self.slot(hash);
        self.bits[slot / 64] & (1 << (slot % 64)) != 0
    }
}

/// Seed table of a chapter: k-gram hash -> (first index into `positions`, count).
fn seed_table(hashes: Vec<(u64, u32)>) -> SeedTable {
    let mut pairs = hashes;
    pairs.sort_unstable();
    let distinct = pairs.chunk_by(|x, y| x.0 == y.0).count();
    let mut table = SeedIndex::with_room(distinct);
    let mut i = 0;
    while i < pairs.len() {
        let j = pairs[i..].partition_point(|p| p.0 == pairs[i].0) + i;
        table.insert(pairs[i].0, i as u32, (j - i) as u32);
        i = j;
    }
    (table, pairs.into_iter().map(|p| p.1).collect())
}

/// The chapter's k-grams with each position masked in turn: built only for a
/// page that holds wildcards.
fn masked_seed_table(ids: &[u32], k: usize) -> SeedTable {
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
    table: SeedIndex,
    positions: Vec<u32>,
    /// The table's keys, checked before it.
    filter: SeedFilter,
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
        let filter = SeedFilter::new(&table);
        Self {
            text: text.clone(),
            tokens,
            table,
            positions,
            filter,
        }
    }

    /// The normalized chapter.
    pub fn text(&self) -> &NormalizedText {
        &self.text
    }

    /// Heap bytes held (what a cache of prepared chapters weighs).
    pub fn heap_bytes(&self) -> usize {
        let text = &self.text;
        let words = text.chars.capacity()
            + text.offsets.capacity()
            + text.breaks.capacity()
            + self.tokens.ids.capacity()
            + self.tokens.starts.capacity()
            + self.tokens.ends.capacity()
            + self.positions.capacity();
        words * 4 + self.table.heap_bytes() + self.filter.bits.capacity() * 8
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

/// What a seed says a glyph stands for: (chain, glyph, chapter token).
type Reading = (u32, u32, u32);

/// A page prepared for verification against many chapters: its tokens and
/// seed hashes, built once instead of once per candidate chapter; see
/// [`crate::Fingerprinter::prepare_page`].
#[derive(Debug)]
pub struct PreparedPage {
    tokens: Tokens,
    hashes: Vec<Option<u64>>,
    has_glyphs: bool,
}

impl PreparedPage {
    pub(crate) fn new(phon: &Phonetic, page: &NormalizedText, cfg: &VerifyConfig) -> Self {
        let tokens = Tokens::new(phon, page, cfg);
        let hashes = page_kgram_hashes(&tokens.ids, cfg.seed_k as usize);
        let has_glyphs = tokens.ids.iter().any(|&t| is_wild(t));
        Self {
            tokens,
            hashes,
            has_glyphs,
        }
    }
}

/// Seeds -> chains -> spans.
///
/// A page whose glyphs are named (one character per picture, see
/// [`crate::FIRST_NAMED_GLYPH`]) is read again: every seed that aligned a
/// glyph inside a run of [`MIN_READING_MATCHED`] seed tokens votes for the
/// chapter token it stands for, each glyph takes its clear winner everywhere
/// on the page, and the chains are built anew. Windows with two or more
/// unknown characters, useless before, then seed as well, so a page that
/// draws every third character as a picture is read like plain text where
/// its pictures repeat. A reading only ever turns a glyph into the token the
/// chapter has beside the same neighbours, so it cannot make unrelated text
/// match.
pub(crate) fn verify_prepared(
    chapter: &PreparedChapter,
    page: &NormalizedText,
    prepared: &PreparedPage,
    cfg: &VerifyConfig,
) -> Verification {
    let chapter_text = &chapter.text;
    let k = cfg.seed_k;
    let pt = &prepared.tokens;
    let has_glyphs = prepared.has_glyphs;
    let masked = has_glyphs.then(|| masked_seed_table(&chapter.tokens.ids, k as usize));
    let named = has_glyphs
        && pt
            .ids
            .iter()
            .any(|&t| is_wild(t) && t != u32::from(crate::GLYPH_PLACEHOLDER));
    let mut ids = pt.ids.clone();
    let mut readings = Vec::new();
    let mut chains = find_chains(
        chapter,
        &ids,
        &prepared.hashes,
        masked.as_ref(),
        cfg,
        named.then_some(&mut readings),
    );
    if named {
        for _ in 0..GLYPH_ROUNDS {
            if !read_glyphs(&pt.ids, &mut ids, &readings) {
                break;
            }
            readings.clear();
            let hashes = page_kgram_hashes(&ids, k as usize);
            chains = find_chains(
                chapter,
                &ids,
                &hashes,
                masked.as_ref(),
                cfg,
                Some(&mut readings),
            );
        }
    }
    let mut kept = keep_runs(chains, chapter.tokens.ids.len(), cfg);
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
            .filter(|&&t| is_wild(t))
            .count() as u32;
        let (na0, na1) = (ct.starts[c.a_start as usize], ct.ends[c.a_end as usize - 1]);
        let (nb0, nb1) = (pt.starts[c.b_start as usize], pt.ends[c.b_end as usize - 1]);
        a_ranges.push((na0, na1));
        b_ranges.push((nb0, nb1));
        let (chapter_start, chapter_end) = chapter_text.original_range(na0 as usize, na1 as usize);
        let (page_start, page_end) = page.original_range(nb0 as usize, nb1 as usize);
        spans.push(VerifiedSpan {
            span: CopiedSpan {
                chapter_start,
                chapter_end,
                page_start,
                page_end,
            },
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

/// The chains that count as copied runs: long and dense ones, and the short,
/// nearly exact ones of a mosaic.
///
/// A page that shuffles a chapter's sentences leaves no long run, only many
/// short ones. Each of those alone could be a shared phrase, and related texts
/// (two laws on one subject) share dozens of clauses, so short runs count
/// only as a whole that reads like the chapter cut up: pieces of at least
/// `mosaic_min_span` tokens at `mosaic_min_density`, each page stretch and
/// each chapter stretch used once, that together with the long runs cover
/// `mosaic_min_total` tokens and `mosaic_min_share` of the chapter. A
/// quotation of a few sentences stays far below that.
fn keep_runs(chains: Vec<Chain>, chapter_tokens: usize, cfg: &VerifyConfig) -> Vec<Chain> {
    let dense = |c: &Chain, min_span: u32, density: f32| {
        let len = c.a_end - c.a_start;
        len >= min_span && c.matched as f32 >= density * len as f32
    };
    let (mut kept, rest): (Vec<Chain>, Vec<Chain>) = chains
        .into_iter()
        .partition(|c| dense(c, cfg.min_span, cfg.min_density));
    let mut candidates: Vec<Chain> = rest
        .into_iter()
        .filter(|c| dense(c, cfg.mosaic_min_span, cfg.mosaic_min_density))
        .collect();
    if candidates.is_empty() {
        return kept;
    }
    candidates.sort_unstable_by_key(|c| std::cmp::Reverse((c.matched, c.a_end - c.a_start)));
    // Bounds the pairwise overlap checks on a page built to repeat phrases.
    candidates.truncate(MAX_MOSAIC_PIECES);
    let overlaps = |x: (u32, u32), y: (u32, u32)| x.0 < y.1 && y.0 < x.1;
    let mut pieces: Vec<Chain> = Vec::new();
    for c in candidates {
        let free = kept.iter().chain(&pieces).all(|o| {
            !overlaps((c.a_start, c.a_end), (o.a_start, o.a_end))
                && !overlaps((c.b_start, c.b_end), (o.b_start, o.b_end))
        });
        if free {
            pieces.push(c);
        }
    }
    let total = covered_len(kept.iter().chain(&pieces).map(|c| (c.a_start, c.a_end)));
    let share = total as f64 / chapter_tokens.max(1) as f64;
    if !pieces.is_empty()
        && total >= u64::from(cfg.mosaic_min_total)
        && share >= f64::from(cfg.mosaic_min_share)
    {
        kept.extend(pieces);
    }
    kept
}

/// Seeds ahead whose seed-table probe [`find_chains`] starts early.
const PROBE_AHEAD: usize = 8;

/// Chains the page's seeds (`ids`, glyphs as wildcards) against the chapter.
/// With `readings`, every seed that aligns a glyph records what it read.
fn find_chains(
    chapter: &PreparedChapter,
    ids: &[u32],
    hashes: &[Option<u64>],
    masked: Option<&SeedTable>,
    cfg: &VerifyConfig,
    mut readings: Option<&mut Vec<Reading>>,
) -> Vec<Chain> {
    let k = cfg.seed_k;
    let mut active: Vec<(u32, Chain)> = Vec::new();
    // Each active chain's (last_a, last_b), beside `active` in the same
    // order: the search for a seed's chain reads only these.
    let mut last: Vec<(u32, u32)> = Vec::new();
    let mut done: Vec<(u32, Chain)> = Vec::new();
    let mut next_id = 0u32;
    // No active chain can be retired before `b` passes this (a lower bound
    // of every active chain's `last_b + max_gap + k`).
    let mut retire_after = u32::MAX;
    for (b, h) in hashes.iter().enumerate() {
        // The probe of a seed the filter passes misses cache: start it a few
        // seeds ahead, so the loads overlap.
        if let Some(Some(ahead)) = hashes.get(b + PROBE_AHEAD)
            && chapter.filter.may_contain(*ahead)
        {
            chapter.table.prefetch(*ahead);
        }
        let b = b as u32;
        let Some(h) = h else { continue };
        let window = &ids[b as usize..(b + k) as usize];
        // Only a page with glyphs has windows holding one (and a masked table).
        let glyph_at = masked.and_then(|_| window.iter().position(|&t| is_wild(t)));
        let (table, positions) = match (masked, glyph_at) {
            (Some((table, positions)), Some(_)) => (table, positions),
            _ if !chapter.filter.may_contain(*h) => continue,
            _ => (&chapter.table, &chapter.positions),
        };
        let Some((first, count)) = table.get(*h) else {
            continue;
        };
        if count > cfg.max_occurrences {
            continue;
        }
        // Retire chains that can no longer be extended.
        if b > retire_after {
            retire_after = u32::MAX;
            let mut idx = 0;
            while idx < active.len() {
                let deadline = active[idx].1.last_b + cfg.max_gap + k;
                if b > deadline {
                    done.push(active.swap_remove(idx));
                    last.swap_remove(idx);
                } else {
                    retire_after = retire_after.min(deadline);
                    idx += 1;
                }
            }
        }
        for &a in &positions[first as usize..(first + count) as usize] {
            let chain_id = match best_chain(&last, a, b, cfg.max_gap + k, cfg.max_drift) {
                Some(ci) => {
                    last[ci] = (a, b);
                    let (id, c) = &mut active[ci];
                    c.matched += (a + k).saturating_sub(c.a_end.max(a)).min(k);
                    c.a_end = c.a_end.max(a + k);
                    c.b_end = c.b_end.max(b + k);
                    c.last_a = a;
                    c.last_b = b;
                    *id
                }
                None if active.len() < 512 => {
                    next_id += 1;
                    retire_after = retire_after.min(b + cfg.max_gap + k);
                    last.push((a, b));
                    active.push((
                        next_id,
                        Chain {
                            a_start: a,
                            a_end: a + k,
                            b_start: b,
                            b_end: b + k,
                            last_a: a,
                            last_b: b,
                            matched: k,
                        },
                    ));
                    next_id
                }
                None => continue,
            };
            if let (Some(out), Some(j)) = (readings.as_deref_mut(), glyph_at) {
                out.push((chain_id, window[j], chapter.tokens.ids[(a as usize) + j]));
            }
        }
    }
    done.extend(active);
    if let Some(out) = readings {
        // Only runs long enough to be no accident lend their readings.
        let trusted: FixedMap<u32, ()> = done
            .iter()
            .filter(|(_, c)| c.matched >= MIN_READING_MATCHED)
            .map(|(id, _)| (*id, ()))
            .collect();
        out.retain(|(chain, _, _)| trusted.contains_key(chain));
    }
    done.into_iter().map(|(_, c)| c).collect()
}

/// The chain a seed at (`a`, `b`) extends: of the chains it may follow (its
/// chapter token within `reach` after the chain's last, its page token
/// after it), the one whose diagonal drifts least, at most `max_drift`;
/// the first in order among equals, so the first that does not drift ends
/// the search. A copied page keeps dozens of short chains active, and this
/// search is the verifier's inner loop: it reads only the `(last_a,
/// last_b)` pairs.
#[inline]
fn best_chain(last: &[(u32, u32)], a: u32, b: u32, reach: u32, max_drift: u32) -> Option<usize> {
    let mut best: Option<(usize, u32)> = None;
    for (ci, &(la, lb)) in last.iter().enumerate() {
        if a <= la || a > la.saturating_add(reach) || b <= lb {
            continue;
        }
        // (b - a) - (lb - la), both steps forward.
        let drift = (i64::from(b - lb) - i64::from(a - la)).unsigned_abs();
        if drift <= u64::from(max_drift) && best.is_none_or(|(_, d)| (drift as u32) < d) {
            best = Some((ci, drift as u32));
            if drift == 0 {
                break;
            }
        }
    }
    best.map(|(ci, _)| ci)
}

/// Gives each named glyph of `original` the token its readings agree on
/// (at least twice as many votes as any other), writing it into `ids` at
/// every place the glyph occurs. Returns whether anything new was read.
fn read_glyphs(original: &[u32], ids: &mut [u32], readings: &[Reading]) -> bool {
    let mut votes: FixedMap<u32, FixedMap<u32, u32>> = FixedMap::default();
    for &(_, glyph, token) in readings {
        if glyph != u32::from(crate::GLYPH_PLACEHOLDER) {
            *votes.entry(glyph).or_default().entry(token).or_default() += 1;
        }
    }
    let mut read: FixedMap<u32, u32> = FixedMap::default();
    for (glyph, tally) in votes {
        let mut ranked: Vec<(u32, u32)> = tally.into_iter().map(|(t, n)| (n, t)).collect();
        ranked.sort_unstable_by(|x, y| y.cmp(x));
        let runner_up = ranked.get(1).map_or(0, |r| r.0);
        if runner_up == 0 || ranked[0].0 >= 2 * runner_up {
            read.insert(glyph, ranked[0].1);
        }
    }
    let mut changed = false;
    for (at, &t) in original.iter().enumerate() {
        if let Some(&token) = read.get(&t)
            && ids[at] != token
        {
            ids[at] = token;
            changed = true;
        }
    }
    changed
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_filter_keeps_every_key_and_drops_most_others() {
        let keys: Vec<u64> = (0..3000_u64)
            .map(|n| n.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ 0x5555)
            .collect();
        let (table, _) = seed_table(keys.iter().map(|&key| (key, 0)).collect());
        let filter = SeedFilter::new(&table);
        assert!(keys.iter().all(|key| filter.may_contain(*key)));
        let strangers = (0..100_000_u64)
            .map(|n| {
                (n + 1_000_000)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .rotate_left(17)
            })
            .filter(|hash| filter.may_contain(*hash))
            .count();
        assert!(strangers < 10_000, "{strangers} of 100000 strangers pass");
    }
}
