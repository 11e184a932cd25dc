//! Characters drawn as images: the crawler writes a placeholder in their place,
//! and the verifier aligns it with any chapter character.

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter, GLYPH_PLACEHOLDER};

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
}
