//! How a page's text was read, and whether it can be read at all. A page whose
//! text still looks like no language after CSS, fonts and rendering (mostly
//! private-use code points from a font that was not decoded, a placeholder
//! where a script should have written the chapter) would fingerprint as
//! noise and never match: such a page is counted per run and named with its
//! reason, never passed off as a clean page.

use copyhound_core::model::Reading;

use crate::extract::Extracted;
use crate::fonts::is_private_use;
use crate::style::GLYPH_PLACEHOLDER;

/// Letters below which the text as served is "thin": a placeholder, a title,
/// a few links; a chapter has thousands.
pub const THIN_TEXT_CHARS: usize = 100;
/// Private-use characters that make a text unreadable, at least...
const MIN_PRIVATE_USE: usize = 20;
/// ...and as a share of its non-space characters, at least one in ten.
const PRIVATE_USE_SHARE: usize = 10;

/// Private-use code points left in the text: a font not decoded.
pub const PRIVATE_USE: &str = "private_use";
/// The text arrives by script, and no script ran.
pub const SCRIPT_NOT_RUN: &str = "script_not_run";

/// Whether `text` holds fewer than [`THIN_TEXT_CHARS`] letters.
pub fn is_thin(text: &str) -> bool {
    text.chars()
        .filter(|character| character.is_alphabetic())
        .take(THIN_TEXT_CHARS)
        .count()
        < THIN_TEXT_CHARS
}

/// How `extracted` was read: `rendered` by Chromium or not, when a script
/// writes its text (`scripted`).
pub fn reading_of(extracted: &Extracted, rendered: bool, scripted: bool) -> Reading {
    let unreadable = if scripted && !rendered {
        Some(SCRIPT_NOT_RUN)
    } else if mostly_private_use(&extracted.text) {
        Some(PRIVATE_USE)
    } else {
        None
    };
    Reading {
        rendered,
        font_decoded_chars: u64::try_from(extracted.fonts.changed_chars).unwrap_or(u64::MAX),
        unreadable: unreadable.map(str::to_string),
    }
}

/// What an unreadable reason means, for people.
pub fn explain(reason: &str) -> &'static str {
    match reason {
        PRIVATE_USE => {
            "text drawn by a site font that could not be decoded (private-use code points)"
        }
        SCRIPT_NOT_RUN => {
            "text written by the page's script, which did not run (no browser, or rendering failed)"
        }
        _ => "text that looks like no language",
    }
}

/// Whether a share of the text is characters whose identity no font told:
/// private-use code points of the Basic Multilingual Plane (where site fonts
/// put their characters) and the placeholders of glyphs nobody recognised.
/// The crawler's own names of pictures (`U+F0000 + n`, each picture read
/// alike wherever it recurs) are not counted: those pages still match.
fn mostly_private_use(text: &str) -> bool {
    let (mut private, mut visible) = (0usize, 0usize);
    for character in text.chars().filter(|character| !character.is_whitespace()) {
        visible += 1;
        if character == GLYPH_PLACEHOLDER
            || (is_private_use(character) && u32::from(character) <= 0xFFFF)
        {
            private += 1;
        }
    }
    private >= MIN_PRIVATE_USE && private * PRIVATE_USE_SHARE >= visible
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extracted(text: &str) -> Extracted {
        Extracted {
            text: text.to_string(),
            ..Extracted::default()
        }
    }

    #[test]
    fn thin_text_is_a_placeholder_not_a_chapter() {
        assert!(is_thin("内容加载中…"));
        assert!(is_thin(&"a ".repeat(99)));
        assert!(!is_thin(&"叔宝众人出了酒店".repeat(13)));
    }

    #[test]
    fn text_left_in_private_use_is_unreadable_and_a_few_such_characters_are_not() {
        let coded: String = (0xE000u32..0xE040).filter_map(char::from_u32).collect();
        let reading = reading_of(&extracted(&coded), false, false);
        assert_eq!(reading.unreadable.as_deref(), Some(PRIVATE_USE));
        let mostly_read = format!(
            "{}{}",
            "叔宝众人出了酒店".repeat(40),
            coded.chars().take(20).collect::<String>()
        );
        assert_eq!(
            reading_of(&extracted(&mostly_read), false, false).unreadable,
            None
        );
        assert_eq!(
            reading_of(&extracted("短"), false, false),
            Reading::default()
        );
        // Glyphs nobody recognised are unknown too; the crawler's names of
        // pictures are not.
        let unknown = "\u{FFFC}".repeat(40);
        assert_eq!(
            reading_of(&extracted(&unknown), false, false)
                .unreadable
                .as_deref(),
            Some(PRIVATE_USE)
        );
        let pictures: String = (0xF0000u32..0xF0040).filter_map(char::from_u32).collect();
        let with_pictures = format!("{}{pictures}", "叔宝众人".repeat(20));
        assert_eq!(
            reading_of(&extracted(&with_pictures), false, false).unreadable,
            None
        );
    }

    #[test]
    fn a_scripted_page_is_unreadable_until_rendered() {
        let placeholder = extracted("内容加载中…");
        let unrendered = reading_of(&placeholder, false, true);
        assert_eq!(unrendered.unreadable.as_deref(), Some(SCRIPT_NOT_RUN));
        assert!(explain(SCRIPT_NOT_RUN).contains("did not run"));
        let rendered = reading_of(&extracted(&"叔宝众人".repeat(50)), true, true);
        assert!(rendered.rendered && rendered.unreadable.is_none());
    }
}
