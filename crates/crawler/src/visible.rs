//! A page's full "visible text" by a fixed, simple specification (the one the
//! labeled benchmarks define their span offsets on), as opposed to [`crate::extract`]'s
//! main text. Evaluation maps match spans into it, and tests read benchmark
//! pages with it. Rules: skip head/script/style/noscript/
//! template/select/textarea, collapse ASCII whitespace runs inside text to one
//! space, block tags break lines, lines trimmed of spaces, empty lines dropped.

const BLOCK: &[&str] = &[
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
const SKIP: &[&str] = &[
    "head", "script", "style", "noscript", "template", "select", "textarea",
];
const RAW_TEXT: &[&str] = &["script", "style"];

/// Returns the visible text of decoded HTML.
pub fn visible_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut skip_depth = 0usize;
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
        let Some((name, closing, self_closing, after)) = parse_tag(rest) else {
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
        } else if BLOCK.contains(&name.as_str()) {
            out.push('\n');
        }
    }
    out.split('\n')
        .map(|line| line.trim_matches(' '))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses a tag at the start of `text`: (lowercase name, is end tag, self-closing, rest).
fn parse_tag(text: &str) -> Option<(String, bool, bool, &str)> {
    let body = &text[1..];
    let (closing, body) = match body.strip_prefix('/') {
        Some(stripped) => (true, stripped),
        None => (false, body),
    };
    let first = body.chars().next()?;
    if !(first.is_ascii_alphabetic() || (first == '!' || first == '?')) {
        return None;
    }
    let end = tag_end(body)?;
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

/// Finds the `>` closing a tag, skipping quoted attribute values.
fn tag_end(body: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (index, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(index),
            _ => {}
        }
    }
    None
}

fn find_ascii_case_insensitive(haystack: &str, needle: &str) -> Option<usize> {
    let lower = haystack.to_ascii_lowercase();
    lower.find(&needle.to_ascii_lowercase())
}

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
    fn survives_broken_markup() {
        assert_eq!(visible_text("a < b <p>c"), "a < b\nc");
        assert_eq!(visible_text("<div title='>'>x</div><!-- y"), "x");
        assert_eq!(visible_text(""), "");
    }
}
