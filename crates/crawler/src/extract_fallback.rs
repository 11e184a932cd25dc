//! The guard in front of the HTML parser. html5ever's tree builder scans the
//! stack of open elements on many start tags, so a page nested a hundred
//! thousand levels deep takes minutes to parse. A linear pre-scan estimates the
//! nesting depth; past [`MAX_NESTING`] the page is reduced to its text by
//! stripping tags, without links (such a page is hostile, not a chapter).

/// Estimated nesting depth past which the parser is not used.
pub(crate) const MAX_NESTING: usize = 512;

/// Tags that never nest: void elements and those closed implicitly by a sibling.
fn never_nests(name: &str) -> bool {
    matches!(
        name,
        "br" | "img"
            | "meta"
            | "link"
            | "input"
            | "hr"
            | "area"
            | "base"
            | "col"
            | "embed"
            | "source"
            | "track"
            | "wbr"
            | "param"
            | "p"
            | "li"
            | "dt"
            | "dd"
            | "option"
            | "tr"
            | "td"
            | "th"
            | "!doctype"
    )
}

/// Returns the estimated maximum nesting depth of `html` (open tags minus
/// close tags, ignoring tags that never nest), in one linear pass.
pub(crate) fn nesting_estimate(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut max_depth, mut index) = (0usize, 0usize, 0usize);
    while let Some(offset) = memchr_lt(&bytes[index..]) {
        let start = index + offset + 1;
        index = start;
        let closing = bytes.get(start) == Some(&b'/');
        let name_start = if closing { start + 1 } else { start };
        let name_len = bytes[name_start.min(bytes.len())..]
            .iter()
            .take_while(|byte| byte.is_ascii_alphanumeric() || **byte == b'!')
            .count();
        let starts_like_a_tag = bytes
            .get(name_start)
            .is_some_and(|byte| byte.is_ascii_alphabetic() || *byte == b'!');
        if name_len == 0 || !starts_like_a_tag {
            continue;
        }
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        if never_nests(&name) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else {
            let tag_end = bytes[name_start..]
                .iter()
                .position(|byte| *byte == b'>')
                .map_or(bytes.len(), |end| name_start + end);
            if tag_end > 0 && bytes.get(tag_end - 1) == Some(&b'/') {
                continue;
            }
            depth += 1;
            max_depth = max_depth.max(depth);
        }
    }
    max_depth
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|byte| *byte == b'<')
}

/// Returns the text of `html` with tags removed (script and style content
/// dropped), ASCII whitespace runs collapsed, one non-empty line per line.
pub(crate) fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 4);
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let after = &rest[open..];
        let lower_head = after.get(..8).unwrap_or(after).to_ascii_lowercase();
        let skip_until = if lower_head.starts_with("<script") {
            Some("</script")
        } else if lower_head.starts_with("<style") {
            Some("</style")
        } else {
            None
        };
        let end = match skip_until {
            Some(closer) => after
                .to_ascii_lowercase()
                .find(closer)
                .map_or(after.len(), |at| at + closer.len()),
            None => 0,
        };
        let close = after[end..]
            .find('>')
            .map_or(after.len(), |at| end + at + 1);
        text.push('\n');
        rest = &after[close..];
    }
    text.push_str(rest);
    text.split('\n')
        .map(|line| line.split_ascii_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_estimated_linearly() {
        assert_eq!(
            nesting_estimate("<html><body><div><p>a<p>b<br></div></body></html>"),
            3
        );
        assert_eq!(nesting_estimate(&"<div>".repeat(5000)), 5000);
        assert!(nesting_estimate(&"<div>x</div>".repeat(5000)) <= 1);
        assert_eq!(nesting_estimate("a < b <3 <"), 0);
    }

    #[test]
    fn tags_are_stripped() {
        let text = strip_tags(
            "<div>正文<script>var x = '<b>';</script><b>粗体</b>\n  second   line</div>",
        );
        assert_eq!(text, "正文\n粗体\nsecond line");
    }
}
