//! The one list of HTML block tags: the elements that end a line of a page's
//! visible text. The crawler's extraction, the style module, the EPUB chapter
//! reader and the benchmarks' reference extractor all read it from here, each
//! through the function that says which of its tags it breaks at.

/// Elements that end a line of visible text, in a page's extraction and in
/// the benchmarks' reference visible text.
pub const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "br",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "tr",
    "td",
    "th",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "blockquote",
    "pre",
    "form",
    "hr",
    "center",
];

/// The [`BLOCK_TAGS`] an EPUB chapter's text reads inline: cells, lists,
/// tables and page furniture. A chapter breaks lines at paragraphs, headings,
/// list items, table rows and sections only, as registration always has (a
/// change would move the stored text, hence the fingerprints, of registered
/// chapters).
const READ_INLINE_IN_CHAPTERS: &[&str] = &[
    "ul", "ol", "dl", "dt", "dd", "td", "th", "table", "header", "footer", "nav", "aside", "main",
    "form", "hr", "center",
];

/// Returns whether `name` (lowercase) is one of [`BLOCK_TAGS`].
pub fn is_block_tag(name: &str) -> bool {
    BLOCK_TAGS.contains(&name)
}

/// Returns whether `name` (lowercase) is a tag an EPUB chapter's text breaks
/// a line at: the [`BLOCK_TAGS`] but those it reads inline.
pub fn is_chapter_block_tag(name: &str) -> bool {
    is_block_tag(name) && !READ_INLINE_IN_CHAPTERS.contains(&name)
}

/// Returns whether `name` (lowercase) is an element the style module treats
/// as a block box: the [`BLOCK_TAGS`] that hold content (not `br` or `hr`),
/// and `body`.
pub fn is_block_box(name: &str) -> bool {
    name == "body" || (is_block_tag(name) && !matches!(name, "br" | "hr"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_read_inline_only_block_tags() {
        for name in READ_INLINE_IN_CHAPTERS {
            assert!(is_block_tag(name), "{name}");
            assert!(!is_chapter_block_tag(name), "{name}");
        }
        assert!(is_chapter_block_tag("p") && is_chapter_block_tag("tr"));
    }

    #[test]
    fn block_boxes_are_the_block_tags_with_content_and_body() {
        assert!(is_block_box("body") && is_block_box("div") && is_block_box("td"));
        assert!(!is_block_box("br") && !is_block_box("hr") && !is_block_box("span"));
    }
}
