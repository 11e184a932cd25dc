//! Text helpers shared by the extractors: the byte budget of a page, line
//! joining without intermediate lists, and case-insensitive ASCII search.

use tracing::warn;

use crate::extract::MAX_HTML_BYTES;

/// Returns the first [`MAX_HTML_BYTES`] of `html` (cut at a char boundary).
pub fn within_budget(html: &str) -> &str {
    if html.len() <= MAX_HTML_BYTES {
        return html;
    }
    let mut cut = MAX_HTML_BYTES;
    while !html.is_char_boundary(cut) {
        cut -= 1;
    }
    warn!(
        bytes = html.len(),
        max_bytes = MAX_HTML_BYTES,
        "html over the extraction budget; the rest is ignored"
    );
    &html[..cut]
}

/// Returns the lines of `raw` trimmed of spaces, empty ones dropped, joined by
/// line breaks; without an intermediate list (pages of millions of lines).
pub fn join_nonempty_lines(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for line in raw.split('\n') {
        let line = line.trim_matches(' ');
        if line.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

/// Parses a tag at the start of `text`, found at byte `offset` of the page:
/// (lowercase name, is end tag, self-closing, rest).
pub fn find_ascii_case_insensitive(haystack: &str, needle: &str) -> Option<usize> {
    let needle = needle.as_bytes();
    let first = needle.first()?;
    let bytes = haystack.as_bytes();
    let mut at = 0;
    while let Some(step) = bytes[at..]
        .iter()
        .position(|byte| byte.eq_ignore_ascii_case(first))
    {
        let start = at + step;
        let candidate = bytes.get(start..start + needle.len())?;
        if candidate.eq_ignore_ascii_case(needle) {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_search_ignores_case_and_respects_char_boundaries() {
        assert_eq!(
            find_ascii_case_insensitive("ab</ScRiPt>", "</script"),
            Some(2)
        );
        assert_eq!(find_ascii_case_insensitive("</scrip", "</script"), None);
        assert_eq!(find_ascii_case_insensitive("", "<"), None);
    }

    #[test]
    fn lines_are_trimmed_and_empty_ones_dropped() {
        assert_eq!(join_nonempty_lines("  a \n\n b\n "), "a\nb");
    }
}
