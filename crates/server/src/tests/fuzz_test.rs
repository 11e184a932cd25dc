//! Arbitrary bytes never panic the upload parsers.

use proptest::prelude::*;

use crate::register::{HeadingPattern, decode_text, parse_epub, split_txt_chapters};

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

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
    fn epub_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = parse_epub(&bytes);
    }

    #[test]
    fn mutated_epubs_never_panic(position in 0usize..4096, value in any::<u8>()) {
        let mut bytes = crate::register::epub_for_test();
        let index = position % bytes.len();
        bytes[index] = value;
        if let Err(error) = parse_epub(&bytes) {
            prop_assert!(error.kind() == copyhound_core::ErrorKind::InvalidInput || error.kind() == copyhound_core::ErrorKind::TooLarge);
        }
    }
}
