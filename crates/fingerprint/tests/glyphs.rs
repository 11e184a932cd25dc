//! Characters drawn as images: the crawler writes a placeholder in their place,
//! and the verifier aligns it with any chapter character.

use copyhound_fingerprint::{
    FIRST_NAMED_GLYPH, FingerprintConfig, Fingerprinter, GLYPH_PLACEHOLDER,
};

const CHAPTER: &str = include_str!("../../cli/samples/registered-chapter.txt");

/// The chapter with every `k`-th Han character replaced by `with`.
fn every_kth(k: usize, with: Option<char>) -> String {
    let mut han = 0;
    CHAPTER
        .chars()
        .filter_map(|c| {
            if ('\u{4e00}'..='\u{9fff}').contains(&c) {
                han += 1;
                if han % k == 0 {
                    return with;
                }
            }
            Some(c)
        })
        .collect()
}

#[test]
fn placeholders_align_as_wildcards() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let chapter = fp.normalize(CHAPTER);
    let with_placeholders = fp.verify(
        &chapter,
        &fp.normalize(&every_kth(3, Some(GLYPH_PLACEHOLDER))),
    );
    let dropped = fp.verify(&chapter, &fp.normalize(&every_kth(3, None)));
    assert!(
        with_placeholders.chapter_coverage > 0.8,
        "{with_placeholders:?}"
    );
    assert!(
        with_placeholders.wildcards > 100,
        "{}",
        with_placeholders.wildcards
    );
    // The same pictures simply missing from the text break every seed.
    assert!(
        dropped.chapter_coverage < 0.3,
        "{}",
        dropped.chapter_coverage
    );
    // Placeholders alone are no evidence: a page of nothing but them copies nothing.
    let blank: String = std::iter::repeat_n(GLYPH_PLACEHOLDER, 800).collect();
    assert!(fp.verify(&chapter, &fp.normalize(&blank)).spans.is_empty());
}

#[test]
fn the_crawler_writes_the_placeholder_the_verifier_reads() {
    assert_eq!(
        copyhound_crawler::style::GLYPH_PLACEHOLDER,
        GLYPH_PLACEHOLDER
    );
    assert_eq!(
        copyhound_crawler::style::FIRST_NAMED_GLYPH,
        FIRST_NAMED_GLYPH
    );
    let last = copyhound_crawler::style::MAX_NAMED_GLYPHS as u32 - 1;
    let last = char::from_u32(FIRST_NAMED_GLYPH as u32 + last).expect("a character");
    assert!(copyhound_fingerprint::is_glyph(last));
}

/// The chapter with each of its `n` most frequent Han characters drawn as one
/// picture wherever it occurs: `named` gives each picture its own character
/// (as the crawler does), otherwise all are the anonymous placeholder.
fn common_drawn(n: usize, named: bool) -> String {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in CHAPTER
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
    {
        *counts.entry(c).or_default() += 1;
    }
    let mut ranked: Vec<(usize, char)> = counts.into_iter().map(|(c, k)| (k, c)).collect();
    ranked.sort_unstable_by(|a, b| b.cmp(a));
    let drawn: std::collections::HashMap<char, char> = ranked
        .iter()
        .take(n)
        .enumerate()
        .map(|(i, &(_, c))| {
            let picture = if named {
                char::from_u32(FIRST_NAMED_GLYPH as u32 + i as u32)
                    .expect("a private-use character")
            } else {
                GLYPH_PLACEHOLDER
            };
            (c, picture)
        })
        .collect();
    CHAPTER
        .chars()
        .map(|c| drawn.get(&c).copied().unwrap_or(c))
        .collect()
}

#[test]
fn pictures_that_repeat_are_read_from_the_runs_around_them() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let chapter = fp.normalize(CHAPTER);
    let named = fp.verify(&chapter, &fp.normalize(&common_drawn(150, true)));
    let anonymous = fp.verify(&chapter, &fp.normalize(&common_drawn(150, false)));
    // Drawing the 150 most common characters (six characters in ten) leaves
    // few windows with at most one unknown: anonymous pictures lose most of
    // the chapter, named ones are read back from the seeds that survive.
    assert!(
        named.chapter_coverage > 0.9,
        "named {} anonymous {}",
        named.chapter_coverage,
        anonymous.chapter_coverage
    );
    assert!(
        named.chapter_coverage > anonymous.chapter_coverage + 0.4,
        "named {} anonymous {}",
        named.chapter_coverage,
        anonymous.chapter_coverage
    );
    assert!(named.wildcards > 200, "{}", named.wildcards);
    // Readings come from this chapter's runs only: an unrelated text whose
    // pictures are named the same gains nothing.
    let unrelated: String = "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳"
        .chars()
        .cycle()
        .take(2_000)
        .enumerate()
        .map(|(i, c)| {
            if i % 3 == 0 {
                char::from_u32(FIRST_NAMED_GLYPH as u32 + (i % 40) as u32).unwrap()
            } else {
                c
            }
        })
        .collect();
    assert!(
        fp.verify(&chapter, &fp.normalize(&unrelated))
            .spans
            .is_empty()
    );
}
