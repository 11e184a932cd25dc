//! Turning uploaded files into chapters: pure functions, no IO, so the API, the
//! CLI and the fuzz tests share them. A novel arrives as one TXT file (UTF-8 or
//! GBK, detected), an EPUB, or JSON; news arrives as articles one by one or as
//! JSON lines. Parsing never panics on hostile input: every failure is an
//! `InvalidInput` (or `TooLarge`) error with a message a publisher can act on,
//! and recoverable oddities (no headings, empty chapters, replaced bytes) become
//! warnings. Every parser runs under the budgets of [`limits`], so a hostile file
//! costs bounded time and memory; the API runs them on a bounded blocking pool.

mod epub;
pub mod limits;
mod text;
mod txt;
mod xhtml;

pub use epub::{EpubBook, parse_epub};

/// Returns a small valid EPUB (tests).
#[cfg(any(test, feature = "testsuite"))]
pub fn epub_for_test() -> Vec<u8> {
    epub::tests::build_epub(
        "测试",
        &[("第一章", &["甲乙丙丁", "戊己庚辛"]), ("第二章", &["壬癸"])],
    )
}
/// Returns an EPUB whose one spine document is `xhtml` (tests).
#[cfg(any(test, feature = "testsuite"))]
pub fn epub_with_document_for_test(xhtml: &[u8]) -> Vec<u8> {
    epub::tests::epub_with_document(xhtml)
}

/// Returns an EPUB whose chapter is `<b>a</b>` repeated `repeats` times (tests).
#[cfg(any(test, feature = "testsuite"))]
pub fn dom_bomb_epub_for_test(repeats: usize) -> Vec<u8> {
    epub::tests::dom_bomb_epub(repeats)
}

pub use text::{Decoded, decode_text, normalize_paragraphs};
pub use txt::{HeadingPattern, MAX_PATTERN_LEN, chinese_numeral_value, split_txt_chapters};

use serde::{Deserialize, Serialize};

/// A chapter parsed from an upload, before it gets an id and a place in a work.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChapterDraft {
    /// Title (the heading line for TXT, the first heading for EPUB).
    pub title: String,
    /// Body: one paragraph per line, trimmed, no empty lines.
    pub text: String,
}

/// Longest excerpt shown in previews, characters.
pub const PREVIEW_EXCERPT_CHARS: usize = 80;

/// One line of a split preview.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChapterPreview {
    /// 1-based position.
    pub index: u32,
    /// Title.
    pub title: String,
    /// Length of the body, characters.
    pub chars: u64,
    /// The first characters of the body.
    pub excerpt: String,
}

/// Returns the preview lines of drafts.
pub fn preview(drafts: &[ChapterDraft]) -> Vec<ChapterPreview> {
    drafts
        .iter()
        .enumerate()
        .map(|(position, draft)| ChapterPreview {
            index: u32::try_from(position + 1).unwrap_or(u32::MAX),
            title: draft.title.clone(),
            chars: draft.text.chars().count() as u64,
            excerpt: draft.text.chars().take(PREVIEW_EXCERPT_CHARS).collect(),
        })
        .collect()
}

#[cfg(test)]
mod fuzz_test;
