//! Arbitrary bytes never panic the upload parsers (EPUB and its XHTML chapters,
//! TXT chapter split, charset detection), and what they return keeps its
//! invariants. Case counts stay small: the whole file runs in seconds.

use copyhound_core::ErrorKind;
use proptest::prelude::*;

use crate::formats::{
    HeadingPattern, decode_text, epub_with_document_for_test, parse_epub, split_txt_chapters,
};

/// Markup-like text: tags (well-formed or not), references, comments, CDATA and text.
fn markup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "<[/!?]?[a-zA-Z:]{0,7}( [a-z]{1,5}=('[^']{0,6}'|\"[^\"]{0,6}\"|[^ >]{0,4}))?/?>",
        "&[#xa-z0-9]{0,7};?",
        "[^<&]{0,10}",
        "(<!--|-->|<!\\[CDATA\\[|\\]\\]>|</?(script|style|head|title|h[1-3]|p|br)>|<)",
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

fn assert_parse_outcome(
    result: copyhound_core::Result<crate::formats::EpubBook>,
) -> Result<(), TestCaseError> {
    match result {
        Ok(book) => {
            prop_assert!(!book.chapters.is_empty());
            for chapter in &book.chapters {
                prop_assert!(!chapter.text.is_empty());
                prop_assert!(chapter.text.lines().all(|line| !line.trim().is_empty()));
            }
        }
        Err(error) => prop_assert!(
            matches!(error.kind(), ErrorKind::InvalidInput | ErrorKind::TooLarge),
            "{}",
            error
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn split_txt_never_panics_and_keeps_text(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        if let Ok(decoded) = decode_text(&bytes) {
            let (chapters, warnings) = split_txt_chapters(&decoded.text, &HeadingPattern::default()).unwrap();
            prop_assert!(!chapters.is_empty() || !warnings.is_empty());
            for chapter in &chapters {
                prop_assert!(!chapter.text.is_empty());
            }
        }
    }

    #[test]
    fn split_txt_handles_arbitrary_strings_with_headings(lines in proptest::collection::vec("(第[一二三十0-9]{1,3}章)?[^\n]{0,30}", 0..40)) {
        let text = lines.join("\n");
        let (chapters, _) = split_txt_chapters(&text, &HeadingPattern::default()).unwrap();
        for chapter in &chapters {
            prop_assert!(!chapter.text.is_empty());
        }
    }

    #[test]
    fn split_txt_with_arbitrary_patterns_never_panics(pattern in "[^\n]{0,12}", text in "[^\u{0}]{0,200}") {
        if let Ok(pattern) = HeadingPattern::new(&pattern) {
            let (chapters, _) = split_txt_chapters(&text, &pattern).unwrap();
            for chapter in &chapters {
                prop_assert!(!chapter.text.is_empty());
            }
        }
    }

    #[test]
    fn charset_detection_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        match decode_text(&bytes) {
            // Every encoding spends at least one byte per character.
            Ok(decoded) => prop_assert!(decoded.text.chars().count() <= bytes.len()),
            Err(error) => prop_assert_eq!(error.kind(), ErrorKind::InvalidInput, "{}", error),
        }
    }

    #[test]
    fn utf8_with_stray_bytes_stays_utf8(
        text in "[一-龥，。a-z ]{40,200}",
        strays in proptest::collection::vec((any::<prop::sample::Index>(), 0x80u8..=0xff), 1..3),
    ) {
        let mut bytes = text.as_bytes().to_vec();
        // Insert at character boundaries, from the back so earlier positions stay valid.
        let mut positions: Vec<(usize, u8)> = strays
            .iter()
            .map(|(index, byte)| {
                let boundaries: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
                (boundaries[index.index(boundaries.len())], *byte)
            })
            .collect();
        positions.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
        // Two bytes at one place could form a valid character (C2 80).
        positions.dedup_by_key(|(at, _)| *at);
        for (at, byte) in &positions {
            bytes.insert(*at, *byte);
        }
        let multibyte = text.chars().filter(|ch| ch.len_utf8() > 1).count();
        prop_assume!(multibyte >= 8 * positions.len());
        let decoded = decode_text(&bytes).unwrap();
        prop_assert_eq!(decoded.encoding, "UTF-8");
        prop_assert_eq!(decoded.text.replace('\u{fffd}', ""), text);
        prop_assert_eq!(decoded.warnings.len(), 1);
    }

    #[test]
    fn epub_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        assert_parse_outcome(parse_epub(&bytes))?;
    }

    #[test]
    fn mutated_epubs_never_panic(position in 0usize..4096, value in any::<u8>()) {
        let mut bytes = crate::formats::epub_for_test();
        let index = position % bytes.len();
        bytes[index] = value;
        assert_parse_outcome(parse_epub(&bytes))?;
    }

    #[test]
    fn epub_chapters_of_arbitrary_markup_never_panic(xhtml in markup()) {
        assert_parse_outcome(parse_epub(&epub_with_document_for_test(xhtml.as_bytes())))?;
    }

    #[test]
    fn epub_chapters_of_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        assert_parse_outcome(parse_epub(&epub_with_document_for_test(&bytes)))?;
    }
}
