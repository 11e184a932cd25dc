//! The guard in front of the HTML parser. html5ever's tree builder scans the
//! stack of open elements on many start tags, so a page nested a hundred
//! thousand levels deep takes minutes to parse; and the tree costs a few hundred
//! bytes per node, so a page of ten million tiny elements takes gigabytes. A
//! linear pre-scan estimates the nesting depth and counts the elements; past
//! [`MAX_NESTING`] or [`MAX_ELEMENTS`] the page is reduced, in one streaming
//! pass, to its text outside links and its first links (such a page is hostile,
//! not a chapter, but its links still feed the crawl).

use std::collections::HashSet;

use crate::text::find_ascii_case_insensitive;

/// Estimated nesting depth past which the parser is not used.
pub const MAX_NESTING: usize = 512;
/// Elements (start tags) past which the parser is not used.
pub const MAX_ELEMENTS: usize = 100_000;
/// Bytes of HTML read per page; the rest is ignored with a warning.
pub const MAX_HTML_BYTES: usize = 16 << 20;

/// Tags that never nest: void elements and those closed implicitly by a sibling.
fn never_nests(name: &[u8]) -> bool {
    const NAMES: &[&str] = &[
        "br", "img", "meta", "link", "input", "hr", "area", "base", "col", "embed", "source",
        "track", "wbr", "param", "p", "li", "dt", "dd", "option", "tr", "td", "th", "!doctype",
    ];
    NAMES
        .iter()
        .any(|never| never.as_bytes().eq_ignore_ascii_case(name))
}

/// What the pre-scan found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Estimated maximum nesting depth (open tags minus close tags, ignoring
    /// tags that never nest).
    pub(crate) max_depth: usize,
    /// Start tags.
    pub(crate) elements: usize,
}

impl Shape {
    /// Returns why the page is not parsed, if it is not.
    pub(crate) fn refusal(&self) -> Option<String> {
        if self.max_depth > MAX_NESTING {
            return Some(format!(
                "html nested over {MAX_NESTING} levels; reduced to its text"
            ));
        }
        if self.elements > MAX_ELEMENTS {
            return Some(format!(
                "html of over {MAX_ELEMENTS} elements; reduced to its text"
            ));
        }
        None
    }
}

/// Returns the shape of `html`, in one linear pass.
pub(crate) fn shape(html: &str) -> Shape {
    let bytes = html.as_bytes();
    let (mut depth, mut index) = (0usize, 0usize);
    let mut shape = Shape::default();
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
        if !closing {
            shape.elements += 1;
        }
        if never_nests(&bytes[name_start..name_start + name_len]) {
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
            shape.max_depth = shape.max_depth.max(depth);
        }
    }
    shape
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|byte| *byte == b'<')
}

/// What is kept of a page that is not parsed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Stripped {
    /// Text outside links, tags removed (script and style content dropped),
    /// ASCII whitespace runs collapsed, one non-empty line per line.
    pub(crate) text: String,
    /// Distinct raw `href`s of `<a>` and `<area>` tags, at most `max_links`.
    pub(crate) links: Vec<String>,
}

/// Strips the tags of `html` in one pass, with no memory beyond the output.
pub(crate) fn strip_tags(html: &str, max_links: usize) -> Stripped {
    let mut lines = Lines::with_capacity(html.len() / 4);
    let mut links = Links::new(max_links);
    let mut in_link = false;
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        let Some((text, after)) = rest.split_at_checked(open) else {
            break;
        };
        if !in_link {
            lines.push_text(text);
        }
        let starts_with = |prefix: &str| {
            after
                .as_bytes()
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
        };
        let skip_until = if starts_with("<script") {
            Some("</script")
        } else if starts_with("<style") {
            Some("</style")
        } else {
            None
        };
        let end = match skip_until {
            Some(closer) => find_ascii_case_insensitive(after, closer)
                .map_or(after.len(), |at| at + closer.len()),
            None => 0,
        };
        let close = after
            .get(end..)
            .and_then(|tail| tail.find('>'))
            .map_or(after.len(), |at| end + at + 1);
        let Some((tag, tail)) = after.split_at_checked(close) else {
            rest = after;
            break;
        };
        match tag_name(tag) {
            (false, name) if name.eq_ignore_ascii_case(b"a") => {
                in_link = !tag.ends_with("/>");
                links.add(tag);
            }
            (true, name) if name.eq_ignore_ascii_case(b"a") => in_link = false,
            (false, name) if name.eq_ignore_ascii_case(b"area") => links.add(tag),
            _ => {}
        }
        lines.line_break();
        rest = tail;
    }
    if !in_link {
        lines.push_text(rest);
    }
    Stripped {
        text: lines.text,
        links: links.hrefs,
    }
}

/// Returns whether `tag` (from its `<`) is an end tag, and its name's bytes.
fn tag_name(tag: &str) -> (bool, &[u8]) {
    let bytes = tag.as_bytes();
    let closing = bytes.get(1) == Some(&b'/');
    let start = if closing { 2 } else { 1 };
    let name_len = bytes
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii_alphanumeric())
        .count();
    (
        closing,
        &bytes[start.min(bytes.len())..start.min(bytes.len()) + name_len],
    )
}

/// Distinct hrefs of link tags, up to a cap.
struct Links {
    hrefs: Vec<String>,
    seen: HashSet<String>,
    max_links: usize,
}

impl Links {
    fn new(max_links: usize) -> Self {
        Self {
            hrefs: Vec::new(),
            seen: HashSet::new(),
            max_links,
        }
    }

    fn add(&mut self, tag: &str) {
        if self.hrefs.len() >= self.max_links {
            return;
        }
        if let Some(href) = href_of(tag)
            && self.seen.insert(href.clone())
        {
            self.hrefs.push(href);
        }
    }
}

/// Returns the `href` attribute of a start tag (`&amp;` decoded).
fn href_of(tag: &str) -> Option<String> {
    let bytes = tag.as_bytes();
    let mut from = 0;
    while let Some(found) = find_ascii_case_insensitive(tag.get(from..)?, "href") {
        let at = from + found;
        from = at + 4;
        if !bytes
            .get(at.wrapping_sub(1))
            .is_some_and(u8::is_ascii_whitespace)
        {
            continue;
        }
        let value = tag
            .get(from..)?
            .trim_start()
            .strip_prefix('=')?
            .trim_start();
        let raw = match value.chars().next()? {
            quote @ ('"' | '\'') => value.strip_prefix(quote)?.split(quote).next()?,
            _ => value
                .split(|c: char| c.is_ascii_whitespace() || c == '>')
                .next()?,
        };
        return Some(raw.trim().replace("&amp;", "&"));
    }
    None
}

/// Text built line by line: words of a line joined by one space, empty lines dropped.
struct Lines {
    text: String,
    /// The current line has a word.
    in_line: bool,
    /// A space is due before the next word of the line.
    space: bool,
}

impl Lines {
    fn with_capacity(bytes: usize) -> Self {
        Self {
            text: String::with_capacity(bytes),
            in_line: false,
            space: false,
        }
    }

    fn line_break(&mut self) {
        self.in_line = false;
        self.space = false;
    }

    fn push_text(&mut self, text: &str) {
        for c in text.chars() {
            if c == '\n' {
                self.line_break();
            } else if c.is_ascii_whitespace() {
                self.space = self.in_line;
            } else {
                if !self.in_line && !self.text.is_empty() {
                    self.text.push('\n');
                } else if self.space {
                    self.text.push(' ');
                }
                self.space = false;
                self.in_line = true;
                self.text.push(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_and_elements_are_counted_linearly() {
        let depth = |html: &str| shape(html).max_depth;
        assert_eq!(
            shape("<html><body><div><p>a<P>b<br></div></body></html>"),
            Shape {
                max_depth: 3,
                elements: 6
            }
        );
        assert_eq!(depth(&"<div>".repeat(5000)), 5000);
        assert!(depth(&"<div>x</div>".repeat(5000)) <= 1);
        assert_eq!(shape("a < b <3 <"), Shape::default());
        assert!(
            shape(&"<b>a</b>".repeat(MAX_ELEMENTS + 1))
                .refusal()
                .is_some()
        );
        assert!(shape(&"<b>a</b>".repeat(1000)).refusal().is_none());
    }

    #[test]
    fn tags_are_stripped() {
        let text = |html: &str| strip_tags(html, 10).text;
        assert_eq!(
            text("<div>正文<script>var x = '<b>';</script><b>粗体</b>\n  second   line</div>"),
            "正文\n粗体\nsecond line"
        );
        assert_eq!(text("  a \t b  \n\n<i> c</i>"), "a b\nc");
        assert_eq!(text("<STYLE>x{}</style>天<script"), "天");
    }

    #[test]
    fn links_are_kept_and_their_text_dropped() {
        let stripped = strip_tags(
            "前<A class=x HREF = '/a?x=1&amp;y=2'>链接</a>中<a href=/b>b</A>\
             <area href=\"/c\"><a data-href=\"/no\" href=\"/a?x=1&y=2\">again</a>后<a href=/d>",
            3,
        );
        assert_eq!(stripped.text, "前\n中\n后");
        assert_eq!(stripped.links, ["/a?x=1&y=2", "/b", "/c"]);
        assert_eq!(href_of("<a title='x'>"), None);
        assert_eq!(href_of("<a href>"), None);
    }
}
