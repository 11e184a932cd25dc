//! Text helpers shared by the extractors: the byte budget of a page, line
//! joining without intermediate lists, and case-insensitive ASCII search.

use tracing::warn;

use crate::extract::MAX_HTML_BYTES;

/// Returns the first [`MAX_HTML_BYTES`] of `html` (cut at a char boundary).
pub fn within_budget(html: &str) -> &str {
    if html.len() <= MAX_HTML_BYTES {
        return html;
    }
    warn!(
        bytes = html.len(),
        max_bytes = MAX_HTML_BYTES,
        "html over the extraction budget; the rest is ignored"
    );
    char_prefix(html, MAX_HTML_BYTES)
}

/// Returns the longest prefix of `text` of at most `max_bytes` that ends on a
/// char boundary: a cut inside a multi-byte character moves back before it.
pub fn char_prefix(text: &str, max_bytes: usize) -> &str {
    let mut cut = max_bytes.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.split_at_checked(cut).map_or("", |(head, _)| head)
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
    fn prefixes_end_on_char_boundaries() {
        assert_eq!(char_prefix("站点地图", 4), "站");
        assert_eq!(char_prefix("站点地图", 6), "站点");
        assert_eq!(char_prefix("ab", 9), "ab");
        assert_eq!(char_prefix("站", 0), "");
    }

    #[test]
    fn lines_are_trimmed_and_empty_ones_dropped() {
        assert_eq!(join_nonempty_lines("  a \n\n b\n "), "a\nb");
    }
}
