//! Devset access for tests and the report example: locating the shared set,
//! reading truth.json, decoding pages by declared charset and extracting
//! visible text (a small re-implementation of `tools/pagetext.py`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `../../../shared/<name>` relative to the crate, if present. Panics when it
/// is missing and `CI=true`.
pub fn locate(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(name);
    if dir.join("truth.json").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("devset {} missing and CI=true", dir.display());
    }
    eprintln!("note: {} not found, skipping devset test", dir.display());
    None
}

/// A loaded devset.
pub struct Devset {
    pub dir: PathBuf,
    pub truth: Value,
}

impl Devset {
    pub fn load(dir: PathBuf) -> Self {
        let truth = serde_json::from_str(
            &std::fs::read_to_string(dir.join("truth.json")).expect("truth.json"),
        )
        .expect("truth.json parses");
        Self { dir, truth }
    }

    /// `(work, chapter)` of every registered chapter, sorted.
    pub fn chapters(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let works = std::fs::read_dir(self.dir.join("works")).expect("works dir");
        for w in works.flatten() {
            let work = w.file_name().to_string_lossy().into_owned();
            if let Ok(files) = std::fs::read_dir(w.path().join("chapters")) {
                for f in files.flatten() {
                    let name = f.file_name().to_string_lossy().into_owned();
                    if let Some(ch) = name.strip_suffix(".txt") {
                        out.push((work.clone(), ch.to_owned()));
                    }
                }
            }
        }
        out.sort();
        out
    }

    pub fn chapter_text(&self, work: &str, chapter: &str) -> String {
        std::fs::read_to_string(
            self.dir
                .join("works")
                .join(work)
                .join("chapters")
                .join(format!("{chapter}.txt")),
        )
        .expect("chapter file")
    }

    /// Page ids (sorted) with their truth entry.
    pub fn pages(&self) -> Vec<(String, &Value)> {
        let mut v: Vec<(String, &Value)> = self.truth["pages"]
            .as_object()
            .expect("pages object")
            .iter()
            .map(|(k, v)| (k.clone(), v))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    pub fn page_text(&self, page_id: &str) -> String {
        let bytes = std::fs::read(self.dir.join("pages").join(page_id)).expect("page file");
        visible_text(&decode_page(&bytes))
    }
}

/// Decodes by BOM or the first `charset=` in the first 4 KiB.
pub fn decode_page(data: &[u8]) -> String {
    if let Some(rest) = data.strip_prefix(b"\xef\xbb\xbf") {
        return String::from_utf8_lossy(rest).into_owned();
    }
    let head = String::from_utf8_lossy(&data[..data.len().min(4096)]).to_ascii_lowercase();
    let label = head.find("charset").and_then(|i| {
        let rest = head[i + 7..].trim_start();
        let rest = rest
            .strip_prefix('=')?
            .trim_start()
            .trim_start_matches(['"', '\''])
            .trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        Some(rest[..end].to_owned())
    });
    let enc = match label.as_deref() {
        Some("gb2312" | "gbk" | "x-gbk" | "gb18030") => encoding_rs::GB18030,
        Some("big5" | "big5-hkscs") => encoding_rs::BIG5,
        Some(l) => encoding_rs::Encoding::for_label(l.as_bytes()).unwrap_or(encoding_rs::UTF_8),
        None => encoding_rs::UTF_8,
    };
    enc.decode(data).0.into_owned()
}

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

fn decode_entity(ent: &str) -> Option<char> {
    if let Some(num) = ent.strip_prefix('#') {
        let v = if let Some(hex) = num.strip_prefix(['x', 'X']) {
            u32::from_str_radix(hex, 16).ok()?
        } else {
            num.parse().ok()?
        };
        return char::from_u32(v);
    }
    Some(match ent {
        "nbsp" => '\u{a0}',
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "ldquo" => '“',
        "rdquo" => '”',
        "hellip" => '…',
        "mdash" => '—',
        "middot" => '·',
        "copy" => '©',
        _ => return None,
    })
}

fn push_text(out: &mut String, data: &str) {
    let mut chars = data.char_indices().peekable();
    let mut ws = false;
    while let Some((i, c)) = chars.next() {
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c') {
            if !ws {
                out.push(' ');
            }
            ws = true;
            continue;
        }
        ws = false;
        if c == '&'
            && let Some(end) = data[i + 1..].find(';').filter(|&e| e <= 10)
            && let Some(d) = decode_entity(&data[i + 1..i + 1 + end])
        {
            out.push(d);
            for _ in 0..=end {
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
}

/// Visible text: like pagetext.py (skip head/script/style..., block tags
/// break lines, ASCII whitespace runs collapse, empty lines dropped).
pub fn visible_text(html: &str) -> String {
    let mut out = String::new();
    let mut skip = 0usize;
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if skip == 0 {
                push_text(&mut out, rest);
            }
            break;
        };
        if skip == 0 {
            push_text(&mut out, &rest[..lt]);
        }
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |e| &rest[e + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if SKIP.contains(&name.as_str()) {
            if closing {
                skip = skip.saturating_sub(1);
            } else if !tag.ends_with('/') {
                skip += 1;
                // Raw text elements: jump to the closing tag.
                if name == "script" || name == "style" {
                    let close = format!("</{name}");
                    let lower = rest.to_ascii_lowercase();
                    if let Some(e) = lower.find(&close) {
                        rest = &rest[e..];
                    }
                }
            }
        } else if BLOCK.contains(&name.as_str()) {
            out.push('\n');
        }
    }
    out.split('\n')
        .map(|l| l.trim_matches(' '))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
