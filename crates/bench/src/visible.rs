//! A page's full "visible text" by a fixed, simple specification (the one the
//! labeled benchmarks define their span offsets on), as opposed to `copyhound_crawler::extract`'s
//! main text. Evaluation maps match spans into it, and tests read benchmark
//! pages with it. Rules: skip head/script/style/noscript/
//! template/select/textarea, collapse ASCII whitespace runs inside text to one
//! space, block tags break lines, lines trimmed of spaces, empty lines dropped.
//!
//! It is one linear pass whatever the markup: at most
//! `copyhound_crawler::extract::MAX_HTML_BYTES` are read, no tree is built, and the
//! scans for a tag's end and a raw-text end tag never revisit text (an
//! unterminated quote remembered as such, end tags matched without copying).

use std::collections::HashSet;

use copyhound_core::html::is_block_tag;
use copyhound_crawler::text::{find_ascii_case_insensitive, join_nonempty_lines, within_budget};

const SKIP: &[&str] = &[
    "head", "script", "style", "noscript", "template", "select", "textarea",
];
const RAW_TEXT: &[&str] = &["script", "style"];

/// Returns the visible text of decoded HTML (its first [`MAX_HTML_BYTES`]).
pub fn visible_text(html: &str) -> String {
    let html = within_budget(html);
    let mut out = String::with_capacity(html.len() / 2);
    let mut skip_depth = 0usize;
    let mut tag_ends = TagEnds::default();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            push_text(&mut out, rest, skip_depth);
            break;
        };
        push_text(&mut out, &rest[..open], skip_depth);
        rest = &rest[open..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |end| &rest[end + 3..]);
            continue;
        }
        let offset = html.len() - rest.len();
        let Some((name, closing, self_closing, after)) = parse_tag(rest, offset, &mut tag_ends)
        else {
            // A lone '<' is text.
            push_text(&mut out, "<", skip_depth);
            rest = &rest[1..];
            continue;
        };
        rest = after;
        if name.is_empty() {
            continue;
        }
        if SKIP.contains(&name.as_str()) {
            if closing {
                skip_depth = skip_depth.saturating_sub(1);
            } else if !self_closing {
                skip_depth += 1;
                if RAW_TEXT.contains(&name.as_str()) {
                    let end_tag = format!("</{name}");
                    let end = find_ascii_case_insensitive(rest, &end_tag).unwrap_or(rest.len());
                    rest = &rest[end..];
                }
            }
        } else if is_block_tag(&name) {
            out.push('\n');
        }
    }
    join_nonempty_lines(&out)
}

fn parse_tag<'a>(
    text: &'a str,
    offset: usize,
    tag_ends: &mut TagEnds,
) -> Option<(String, bool, bool, &'a str)> {
    let body = &text[1..];
    let (closing, body) = match body.strip_prefix('/') {
        Some(stripped) => (true, stripped),
        None => (false, body),
    };
    let first = body.chars().next()?;
    if !(first.is_ascii_alphabetic() || (first == '!' || first == '?')) {
        return None;
    }
    let body_offset = offset + (text.len() - body.len());
    let end = tag_ends.find(body, body_offset)?;
    let inner = &body[..end];
    let name: String = inner
        .chars()
        .take_while(|c| !c.is_ascii_whitespace() && *c != '/' && *c != '>')
        .collect::<String>()
        .to_ascii_lowercase();
    let name = if name.starts_with('!') || name.starts_with('?') {
        String::new()
    } else {
        name
    };
    Some((
        name,
        closing,
        inner.trim_end().ends_with('/'),
        &body[end + 1..],
    ))
}

/// Finds the `>` closing a tag, skipping quoted attribute values, in time
/// linear in the page over all calls.
///
/// A scan outside quotes moves from one special byte (`"`, `'`, `>`) to the
/// next, jumping over quoted values, so where it ends depends only on the
/// first special byte it meets unquoted. A scan that reaches the end of the
/// page without a `>` marks every such byte it met as dead: a later `<` whose
/// scan meets one of them fails at once instead of rescanning (a page of
/// `<a "` repeated a million times would otherwise be quadratic).
#[derive(Debug, Default)]
struct TagEnds {
    /// Page offsets of unquoted special bytes from which no `>` is reached.
    dead: HashSet<usize>,
}

impl TagEnds {
    /// Returns the index in `body` (at page offset `offset`) of its closing `>`.
    fn find(&mut self, body: &str, offset: usize) -> Option<usize> {
        let bytes = body.as_bytes();
        let mut visited = Vec::new();
        let mut at = 0;
        while let Some(step) = bytes[at..]
            .iter()
            .position(|byte| matches!(byte, b'"' | b'\'' | b'>'))
        {
            let special = at + step;
            if bytes[special] == b'>' {
                return Some(special);
            }
            if self.dead.contains(&(offset + special)) {
                break;
            }
            visited.push(offset + special);
            let quote = bytes[special];
            let Some(close) = bytes[special + 1..].iter().position(|byte| *byte == quote) else {
                break;
            };
            at = special + 1 + close + 1;
        }
        self.dead.extend(visited);
        None
    }
}

/// Returns the byte offset of the first ASCII-case-insensitive occurrence of
/// `needle` in `haystack`, without copying either.
fn push_text(out: &mut String, raw: &str, skip_depth: usize) {
    if skip_depth > 0 || raw.is_empty() {
        return;
    }
    let decoded = decode_entities(raw);
    let mut in_space = false;
    for c in decoded.chars() {
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}') {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
}

fn decode_entities(raw: &str) -> String {
    if !raw.contains('&') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        match decode_one(rest) {
            Some((c, used)) => {
                out.push(c);
                rest = &rest[used..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_one(text: &str) -> Option<(char, usize)> {
    let end = text.find(';').filter(|end| *end <= 12)?;
    let entity = &text[1..end];
    let c = if let Some(number) = entity.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        char::from_u32(code).unwrap_or('\u{fffd}')
    } else {
        match entity {
            "nbsp" => '\u{a0}',
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "middot" => '·',
            "copy" => '©',
            "ldquo" => '“',
            "rdquo" => '”',
            "hellip" => '…',
            "mdash" => '—',
            "ensp" => '\u{2002}',
            "emsp" => '\u{2003}',
            _ => return None,
        }
    };
    Some((c, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_benchmark_rules() {
        let html = "<html><head><title>T</title></head><body><div class=\"a\">第一段 &nbsp;文字\n  续</div>\
                    <script>document.write('<p>ad</p>')</script><p>第二&#x6bb5;&amp;</p><br/>尾 </body></html>";
        assert_eq!(visible_text(html), "第一段 \u{a0}文字 续\n第二段&\n尾");
    }

    #[test]
    fn unterminated_quotes_and_raw_text_stay_linear() {
        // Each `<` opens a quote that never closes before the end.
        let quotes = "<a \"x".repeat(50_000);
        let started = std::time::Instant::now();
        let text = visible_text(&quotes);
        assert!(text.starts_with("<a \"x<a"));
        let scripts = "<SCRIPT>x</script>".repeat(50_000) + "<p>end";
        assert_eq!(visible_text(&scripts), "end");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn case_insensitive_search_finds_the_first_match() {
        assert_eq!(
            find_ascii_case_insensitive("ab</ScRiPt>", "</script"),
            Some(2)
        );
        assert_eq!(
            find_ascii_case_insensitive("天</script", "</SCRIPT"),
            Some(3)
        );
        assert_eq!(find_ascii_case_insensitive("</scrip", "</script"), None);
        assert_eq!(find_ascii_case_insensitive("", "<"), None);
    }

    #[test]
    fn survives_broken_markup() {
        assert_eq!(visible_text("a < b <p>c"), "a < b\nc");
        assert_eq!(visible_text("<div title='>'>x</div><!-- y"), "x");
        assert_eq!(visible_text(""), "");
    }
}
