//! The text of one EPUB chapter, read as a stream of tags. No DOM is built: a
//! document costs its text plus a stack of open elements, whatever its markup,
//! so `<b>a</b>` ten million times is refused by count instead of growing a tree
//! of ten million nodes. The scan is lenient like an HTML tokenizer (missing end
//! tags, stray `<` and `&`, HTML entities in XHTML) and linear in the input.

use std::borrow::Cow;

use copyhound_core::Result;
use copyhound_core::html::is_chapter_block_tag;

use super::ChapterDraft;
use super::limits::{MAX_XML_DEPTH, MAX_XML_ELEMENTS, check_chapter_chars, too_large};
use super::text::normalize_paragraphs;

/// Elements whose text is not chapter text.
const SKIPPED_ELEMENTS: &[&str] = &["head", "title"];
/// Elements whose content is raw text, skipped up to their end tag.
const RAW_TEXT_ELEMENTS: &[&str] = &["script", "style"];
/// Elements that never have content, so never stay open.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];
/// Elements an HTML parser closes when a sibling of the same name opens.
const SELF_CLOSING_SIBLINGS: &[&str] = &["p", "li", "dt", "dd", "tr", "td", "th", "option"];
/// Element names are compared on this many bytes at most.
const MAX_NAME_BYTES: usize = 32;

/// Returns the chapter of one XHTML document (`name` in messages), or `None` when it has no text.
pub(super) fn xhtml_chapter(name: &str, html: &str) -> Result<Option<ChapterDraft>> {
    let mut extractor = Extractor {
        name,
        open: Vec::new(),
        elements: 0,
        skip_depth: 0,
        heading: None,
        heading_buffer: None,
        text: String::new(),
        chars: 0,
    };
    extractor.run(html)?;
    let mut body = normalize_paragraphs(&extractor.text);
    let title = extractor.heading.filter(|title| !title.is_empty());
    if let Some(title) = &title {
        if let Some((first_line, rest)) = body.split_once('\n') {
            if first_line == title.as_str() {
                body = rest.to_string();
            }
        } else if body == *title {
            body.clear();
        }
    }
    if body.is_empty() {
        return Ok(None);
    }
    Ok(Some(ChapterDraft {
        title: title.unwrap_or_default(),
        text: body,
    }))
}

struct Extractor<'a> {
    name: &'a str,
    /// Open elements, lowercase, namespace prefix removed, at most `MAX_NAME_BYTES`.
    open: Vec<String>,
    elements: usize,
    /// Open elements of `SKIPPED_ELEMENTS`.
    skip_depth: usize,
    heading: Option<String>,
    heading_buffer: Option<String>,
    text: String,
    chars: usize,
}

impl Extractor<'_> {
    fn run(&mut self, html: &str) -> Result<()> {
        let bytes = html.as_bytes();
        let mut position = 0;
        while position < bytes.len() {
            let Some(offset) = bytes[position..].iter().position(|byte| *byte == b'<') else {
                return self.push_text(&html[position..]);
            };
            let tag_start = position + offset;
            self.push_text(&html[position..tag_start])?;
            position = self.markup(html, tag_start)?;
        }
        Ok(())
    }

    /// Handles the markup at `at` (a `<`) and returns where the text goes on.
    fn markup(&mut self, html: &str, at: usize) -> Result<usize> {
        let bytes = html.as_bytes();
        let rest = &bytes[at..];
        if rest.starts_with(b"<!--") {
            return Ok(find(bytes, at + 4, b"-->").map_or(bytes.len(), |end| end + 3));
        }
        if rest.starts_with(b"<![CDATA[") {
            let end = find(bytes, at + 9, b"]]>").unwrap_or(bytes.len());
            self.push_raw_text(&html[at + 9..end])?;
            return Ok((end + 3).min(bytes.len()));
        }
        if rest.len() >= 9 && rest[..9].eq_ignore_ascii_case(b"<!doctype") {
            return Ok(doctype_end(bytes, at + 9));
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            return Ok(find(bytes, at + 2, b">").map_or(bytes.len(), |end| end + 1));
        }
        let closing = rest.get(1) == Some(&b'/');
        let name_start = at + if closing { 2 } else { 1 };
        if !bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
            // A stray `<` is text.
            self.push_raw_text("<")?;
            return Ok(at + 1);
        }
        let name_end = bytes[name_start..]
            .iter()
            .position(|byte| byte.is_ascii_whitespace() || matches!(byte, b'/' | b'>'))
            .map_or(bytes.len(), |offset| name_start + offset);
        let name = element_name(&html[name_start..name_end]);
        let tag_end = tag_end(bytes, name_end);
        if closing {
            self.close(&name);
            return Ok(tag_end);
        }
        let self_closing = tag_end >= 2 && bytes[tag_end - 2] == b'/' && bytes[tag_end - 1] == b'>';
        self.open_element(name.clone(), self_closing)?;
        if RAW_TEXT_ELEMENTS.contains(&name.as_str()) && !self_closing {
            return Ok(find_end_tag(bytes, tag_end, name.as_bytes()).unwrap_or(bytes.len()));
        }
        Ok(tag_end)
    }

    fn open_element(&mut self, name: String, self_closing: bool) -> Result<()> {
        self.elements += 1;
        if self.elements > MAX_XML_ELEMENTS {
            return Err(too_large(format!(
                "EPUB chapter `{}` has more than {MAX_XML_ELEMENTS} elements (limit per document)",
                self.name
            )));
        }
        let name_str = name.as_str();
        if SELF_CLOSING_SIBLINGS.contains(&name_str) {
            let nearby = self.open.len().saturating_sub(8);
            if let Some(index) = self.open[nearby..].iter().rposition(|open| *open == name) {
                self.close_down_to(nearby + index);
            }
        }
        let is_void = self_closing
            || VOID_ELEMENTS.contains(&name_str)
            || RAW_TEXT_ELEMENTS.contains(&name_str);
        if SKIPPED_ELEMENTS.contains(&name_str) {
            self.skip_depth += usize::from(!is_void);
        } else if is_chapter_block_tag(name_str) {
            self.text.push('\n');
        }
        if matches!(name_str, "h1" | "h2" | "h3")
            && self.heading.is_none()
            && self.heading_buffer.is_none()
            && !is_void
        {
            self.heading_buffer = Some(String::new());
        }
        if is_void {
            self.closed(&name);
            return Ok(());
        }
        self.open.push(name);
        if self.open.len() > MAX_XML_DEPTH {
            return Err(too_large(format!(
                "EPUB chapter `{}` nests elements deeper than {MAX_XML_DEPTH} (limit per document)",
                self.name
            )));
        }
        Ok(())
    }

    fn close(&mut self, name: &str) {
        match self.open.iter().rposition(|open| open == name) {
            Some(index) => self.close_down_to(index),
            // A stray `</p>` still ends a paragraph.
            None if is_chapter_block_tag(name) => self.text.push('\n'),
            None => {}
        }
    }

    /// Closes the open elements from the innermost down to `index`, included.
    fn close_down_to(&mut self, index: usize) {
        while self.open.len() > index {
            if let Some(name) = self.open.pop() {
                self.closed(&name);
            }
        }
    }

    fn closed(&mut self, name: &str) {
        if SKIPPED_ELEMENTS.contains(&name) {
            self.skip_depth = self.skip_depth.saturating_sub(1);
        } else if is_chapter_block_tag(name) && name != "br" {
            self.text.push('\n');
        }
        if matches!(name, "h1" | "h2" | "h3") && self.heading.is_none() {
            self.heading = self
                .heading_buffer
                .take()
                .map(|buffer| buffer.trim().to_string());
        }
    }

    fn push_text(&mut self, text: &str) -> Result<()> {
        if text.is_empty() || self.skip_depth > 0 {
            return Ok(());
        }
        let decoded = decode_entities(text);
        self.push_raw_text(&decoded)
    }

    fn push_raw_text(&mut self, text: &str) -> Result<()> {
        if self.skip_depth > 0 {
            return Ok(());
        }
        self.chars += text.chars().count();
        check_chapter_chars(&format!("EPUB chapter `{}`", self.name), self.chars)?;
        self.text.push_str(text);
        if let Some(buffer) = self.heading_buffer.as_mut() {
            buffer.push_str(text);
        }
        Ok(())
    }
}

/// Returns a lowercase element name without namespace prefix, cut to `MAX_NAME_BYTES`.
fn element_name(raw: &str) -> String {
    let local = raw.rsplit(':').next().unwrap_or(raw);
    let mut end = local.len().min(MAX_NAME_BYTES);
    while !local.is_char_boundary(end) {
        end -= 1;
    }
    local[..end].to_ascii_lowercase()
}

/// Returns the position after the `>` ending a tag whose attributes start at `from`.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote: Option<u8> = None;
    let mut previous = b' ';
    for (offset, byte) in bytes[from..].iter().enumerate() {
        match quote {
            Some(open) if *byte == open => quote = None,
            Some(_) => {}
            None if *byte == b'>' => return from + offset + 1,
            None if matches!(byte, b'"' | b'\'') && previous == b'=' => quote = Some(*byte),
            None => {}
        }
        if !byte.is_ascii_whitespace() {
            previous = *byte;
        }
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|offset| from + offset)
}

/// Returns where `</name` (any case) starts at or after `from`.
fn find_end_tag(bytes: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut position = from;
    while let Some(start) = find(bytes, position, b"</") {
        let candidate = bytes.get(start + 2..start + 2 + name.len())?;
        if candidate.eq_ignore_ascii_case(name) {
            return Some(start);
        }
        position = start + 2;
    }
    None
}

/// Named entities of HTML that EPUBs use although XHTML does not define them.
const NAMED_ENTITIES: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("ensp", '\u{2002}'),
    ("emsp", '\u{2003}'),
    ("thinsp", '\u{2009}'),
    ("shy", '\u{ad}'),
    ("hellip", '…'),
    ("mdash", '—'),
    ("ndash", '–'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("middot", '·'),
    ("bull", '•'),
    ("copy", '©'),
    ("reg", '®'),
    ("trade", '™'),
    ("times", '×'),
    ("divide", '÷'),
    ("deg", '°'),
    ("sect", '§'),
];

/// Returns `text` with character references replaced; unknown ones stay as written.
fn decode_entities(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let reference = after
            .char_indices()
            .take(32)
            .find(|(_, ch)| *ch == ';')
            .map(|(end, _)| &after[..end]);
        match reference.and_then(resolve_reference) {
            Some(ch) => {
                out.push(ch);
                rest = &after[reference.map_or(0, |name| name.len() + 1)..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn resolve_reference(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let value = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return Some(
            char::from_u32(value)
                .filter(|ch| *ch != '\0')
                .unwrap_or('\u{fffd}'),
        );
    }
    NAMED_ENTITIES
        .iter()
        .find(|(entity, _)| *entity == name)
        .map(|(_, ch)| *ch)
}

/// Returns where a `<!DOCTYPE` declaration whose name starts at `from` ends,
/// its internal subset (`[ <!ENTITY x "a]>b"> ]`) included: the first `>`
/// outside quotes, the subset and its comments. The subset's declarations
/// are not applied (its entities stay text, as an HTML parser leaves them).
fn doctype_end(bytes: &[u8], from: usize) -> usize {
    let mut position = from;
    let mut quote = None;
    let mut in_subset = false;
    while let Some(&byte) = bytes.get(position) {
        if let Some(open) = quote {
            if byte == open {
                quote = None;
            }
            position += 1;
            continue;
        }
        match byte {
            b'"' | b'\'' => quote = Some(byte),
            b'[' => in_subset = true,
            b']' => in_subset = false,
            b'<' if in_subset && bytes[position..].starts_with(b"<!--") => {
                position = find(bytes, position + 4, b"-->").map_or(bytes.len(), |end| end + 3);
                continue;
            }
            b'>' if !in_subset => return position + 1,
            _ => {}
        }
        position += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(html: &str) -> Option<ChapterDraft> {
        xhtml_chapter("c.xhtml", html).unwrap()
    }

    #[test]
    fn headings_paragraphs_and_skipped_elements() {
        let html = r#"<?xml version="1.0"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title>
<style>p { color: red }</style></head><body><h2>第一章</h2><p>甲&amp;乙&#x4e19;</p><!-- note --><p>丁<br/>戊</p>
<script>if (a<b) { document.write("<p>no</p>") }</script><p><![CDATA[己 < 庚]]>&nbsp;&unknown; a & b</p></body></html>"#;
        let draft = chapter(html).unwrap();
        assert_eq!(draft.title, "第一章");
        assert_eq!(draft.text, "甲&乙丙\n丁\n戊\n己 < 庚\u{a0}&unknown; a & b");
    }

    #[test]
    fn a_doctype_with_an_internal_subset_leaves_nothing_in_the_text() {
        let html = r#"<?xml version="1.0"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd" [
  <!ENTITY author "某人">
  <!ENTITY tricky 'a ]> b'>
  <!-- a comment with ]> and ' inside -->
  <!ATTLIST p class CDATA #IMPLIED>
]>
<html><body><h1>第一章</h1><p>正文</p></body></html>"#;
        let draft = chapter(html).unwrap();
        assert_eq!(draft.title, "第一章");
        assert_eq!(draft.text, "正文");
        assert_eq!(chapter("<!doctype html><p>正文</p>").unwrap().text, "正文");
        // A declaration never closed swallows the rest, as before.
        assert_eq!(chapter("<!DOCTYPE html [ <p>正文</p>"), None);
    }

    #[test]
    fn sloppy_html_is_read_like_an_html_parser() {
        let many_open_paragraphs = "<p>段".repeat(MAX_XML_DEPTH * 2);
        let draft = chapter(&format!("<body><h1>Title</h1><p>{many_open_paragraphs}")).unwrap();
        assert_eq!(draft.title, "Title");
        assert_eq!(draft.text.lines().count(), MAX_XML_DEPTH * 2);
        assert_eq!(
            chapter("<P CLASS=x>a < b <i>c</I></P><xhtml:p>d")
                .unwrap()
                .text,
            "a < b c\nd"
        );
        assert_eq!(
            chapter("<html><body><img src='a.jpg'/></body></html>"),
            None
        );
        assert_eq!(chapter("<p title='a>b'>text</p>").unwrap().text, "text");
    }

    #[test]
    fn element_count_depth_and_chars_are_bounded() {
        let bomb = "<b>a</b>".repeat(MAX_XML_ELEMENTS + 1);
        let error = xhtml_chapter("bomb.xhtml", &bomb).unwrap_err();
        assert_eq!(error.kind(), copyhound_core::ErrorKind::TooLarge);
        assert!(error.message().contains("elements"), "{error}");
        assert!(error.message().contains("bomb.xhtml"), "{error}");
        let deep = "<div>".repeat(MAX_XML_DEPTH + 1);
        let error = xhtml_chapter("deep.xhtml", &deep).unwrap_err();
        assert!(error.message().contains("deeper than"), "{error}");
        let long = format!(
            "<p>{}</p>",
            "字".repeat(super::super::limits::MAX_CHAPTER_CHARS + 1)
        );
        let error = xhtml_chapter("long.xhtml", &long).unwrap_err();
        assert!(error.message().contains("characters"), "{error}");
    }
}
