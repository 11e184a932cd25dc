//! Reading an EPUB: `META-INF/container.xml` names the OPF package; the OPF
//! spine lists the XHTML documents in reading order; each document becomes a
//! chapter (its first heading is the title). Archives are read with budgets on
//! entry count and decompressed size, so a zip bomb is refused, not inflated.

use std::io::{Cursor, Read};

use copyhound_core::{Error, ErrorKind, Result};
use ego_tree::iter::Edge;
use quick_xml::events::{BytesStart, Event};
use scraper::{Html, Node};

use super::ChapterDraft;
use super::text::normalize_paragraphs;

/// Most entries an archive may have.
pub const MAX_ENTRIES: usize = 20_000;
/// Most bytes all read entries may decompress to.
pub const MAX_DECOMPRESSED_BYTES: u64 = 256 << 20;

/// A parsed EPUB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpubBook {
    /// `dc:title` of the package, if any.
    pub title: Option<String>,
    /// `dc:creator` of the package, if any.
    pub author: Option<String>,
    /// Chapters in spine order.
    pub chapters: Vec<ChapterDraft>,
    /// Things skipped or guessed.
    pub warnings: Vec<String>,
}

struct Archive<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    budget: u64,
}

impl Archive<'_> {
    fn read(&mut self, name: &str) -> Result<Vec<u8>> {
        let entry = self.zip.by_name(name).map_err(|error| match error {
            zip::result::ZipError::FileNotFound => {
                Error::invalid(format!("corrupt EPUB: `{name}` is missing"))
            }
            other => Error::invalid(format!("corrupt EPUB: cannot open `{name}`: {other}")),
        })?;
        let mut bytes = Vec::new();
        let mut limited = entry.take(self.budget.saturating_add(1));
        limited.read_to_end(&mut bytes).map_err(|error| {
            Error::invalid(format!("corrupt EPUB: cannot read `{name}`: {error}"))
        })?;
        let read = bytes.len() as u64;
        if read > self.budget {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("EPUB decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes"),
            ));
        }
        self.budget -= read;
        Ok(bytes)
    }

    fn read_text(&mut self, name: &str) -> Result<String> {
        let bytes = self.read(name)?;
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid(format!("corrupt EPUB: `{name}` is not UTF-8")))
    }
}

/// Parses an EPUB into chapters. A file that is not a zip, lacks the container or
/// package document, or has no text in its spine is `InvalidInput`.
pub fn parse_epub(bytes: &[u8]) -> Result<EpubBook> {
    let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| {
        Error::invalid(format!(
            "not an EPUB: the file is not a valid zip archive ({error})"
        ))
    })?;
    if zip.len() > MAX_ENTRIES {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("EPUB has more than {MAX_ENTRIES} entries"),
        ));
    }
    let mut archive = Archive {
        zip,
        budget: MAX_DECOMPRESSED_BYTES,
    };
    let container = archive.read_text("META-INF/container.xml")?;
    let opf_path = rootfile_path(&container)?;
    let opf = archive.read_text(&opf_path)?;
    let package = parse_package(&opf)?;
    let base = opf_path
        .rsplit_once('/')
        .map(|(dir, _)| format!("{dir}/"))
        .unwrap_or_default();
    let mut chapters = Vec::new();
    let mut warnings = Vec::new();
    let mut skipped = 0usize;
    for idref in &package.spine {
        let Some(item) = package.manifest.iter().find(|item| &item.id == idref) else {
            warnings.push(format!(
                "spine item `{idref}` is not in the manifest; skipped"
            ));
            continue;
        };
        if !item.media_type.contains("html") {
            skipped += 1;
            continue;
        }
        let path = resolve_href(&base, &item.href);
        let document = archive.read(&path)?;
        let html = String::from_utf8_lossy(&document);
        match xhtml_chapter(&html) {
            Some(chapter) => chapters.push(chapter),
            None => skipped += 1,
        }
    }
    if skipped > 0 {
        warnings.push(format!(
            "{skipped} spine items without text (cover, images) were skipped"
        ));
    }
    if chapters.is_empty() {
        return Err(Error::invalid("EPUB has no chapter text in its spine"));
    }
    Ok(EpubBook {
        title: package.title,
        author: package.author,
        chapters,
        warnings,
    })
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    let value = element.try_get_attribute(name).ok()??;
    value.unescape_value().ok().map(|text| text.into_owned())
}

fn rootfile_path(container: &str) -> Result<String> {
    let mut reader = quick_xml::Reader::from_str(container);
    loop {
        match reader.read_event() {
            Ok(Event::Start(element) | Event::Empty(element))
                if element.local_name().as_ref() == b"rootfile" =>
            {
                if let Some(path) = attribute(&element, "full-path") {
                    return Ok(path);
                }
            }
            Ok(Event::Eof) => {
                return Err(Error::invalid(
                    "corrupt EPUB: container.xml names no rootfile",
                ));
            }
            Err(error) => {
                return Err(Error::invalid(format!(
                    "corrupt EPUB: container.xml: {error}"
                )));
            }
            Ok(_) => {}
        }
    }
}

struct ManifestItem {
    id: String,
    href: String,
    media_type: String,
}

struct Package {
    title: Option<String>,
    author: Option<String>,
    manifest: Vec<ManifestItem>,
    spine: Vec<String>,
}

fn parse_package(opf: &str) -> Result<Package> {
    let mut reader = quick_xml::Reader::from_str(opf);
    let mut package = Package {
        title: None,
        author: None,
        manifest: Vec::new(),
        spine: Vec::new(),
    };
    let mut capturing: Option<&'static str> = None;
    let mut text = String::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|error| Error::invalid(format!("corrupt EPUB: package document: {error}")))?;
        match event {
            Event::Start(element) | Event::Empty(element) => match element.local_name().as_ref() {
                b"title" if package.title.is_none() => capturing = Some("title"),
                b"creator" if package.author.is_none() => capturing = Some("creator"),
                b"item" => {
                    if let (Some(id), Some(href)) =
                        (attribute(&element, "id"), attribute(&element, "href"))
                    {
                        let media_type = attribute(&element, "media-type").unwrap_or_default();
                        package.manifest.push(ManifestItem {
                            id,
                            href,
                            media_type,
                        });
                    }
                }
                b"itemref" => {
                    let linear = attribute(&element, "linear").unwrap_or_default();
                    if let (Some(idref), false) = (attribute(&element, "idref"), linear == "no") {
                        package.spine.push(idref);
                    }
                }
                _ => {}
            },
            Event::Text(content) if capturing.is_some() => {
                text.push_str(&content.decode().unwrap_or_default())
            }
            Event::GeneralRef(reference) if capturing.is_some() => {
                match reference.resolve_char_ref() {
                    Ok(Some(ch)) => text.push(ch),
                    _ => text.push_str(match &reference[..] {
                        b"amp" => "&",
                        b"lt" => "<",
                        b"gt" => ">",
                        b"quot" => "\"",
                        b"apos" => "'",
                        _ => "",
                    }),
                }
            }
            Event::End(_) if capturing.is_some() => {
                let value = text.trim().to_string();
                match capturing.take() {
                    Some("title") if !value.is_empty() => package.title = Some(value),
                    Some("creator") if !value.is_empty() => package.author = Some(value),
                    _ => {}
                }
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if package.spine.is_empty() {
        return Err(Error::invalid(
            "corrupt EPUB: the package document has an empty spine",
        ));
    }
    Ok(package)
}

/// Returns `href` resolved against the OPF folder, percent-decoded, `..` applied.
fn resolve_href(base: &str, href: &str) -> String {
    let without_fragment = href.split('#').next().unwrap_or_default();
    let decoded = percent_decode(without_fragment);
    let mut parts: Vec<&str> = Vec::new();
    let joined = format!("{base}{decoded}");
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        let hex = bytes
            .get(position + 1..position + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok());
        match (
            bytes[position],
            hex.and_then(|pair| u8::from_str_radix(pair, 16).ok()),
        ) {
            (b'%', Some(value)) => {
                out.push(value);
                position += 3;
            }
            (byte, _) => {
                out.push(byte);
                position += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

const BLOCK_ELEMENTS: &[&str] = &[
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
    "section",
    "blockquote",
    "tr",
    "article",
    "pre",
];
const SKIPPED_ELEMENTS: &[&str] = &["script", "style", "head", "title"];

/// Returns the chapter of one XHTML document, or `None` when it has no text.
fn xhtml_chapter(html: &str) -> Option<ChapterDraft> {
    let document = Html::parse_document(html);
    let mut heading: Option<String> = None;
    let mut text = String::new();
    let mut skip_depth = 0usize;
    let mut heading_depth: Option<String> = None;
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => {
                    let name = element.name();
                    if SKIPPED_ELEMENTS.contains(&name) {
                        skip_depth += 1;
                    } else if BLOCK_ELEMENTS.contains(&name) {
                        text.push('\n');
                    }
                    if heading.is_none()
                        && heading_depth.is_none()
                        && matches!(name, "h1" | "h2" | "h3")
                    {
                        heading_depth = Some(String::new());
                    }
                }
                Node::Text(content) if skip_depth == 0 => {
                    text.push_str(content);
                    if let Some(buffer) = heading_depth.as_mut() {
                        buffer.push_str(content);
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(element) = node.value() {
                    let name = element.name();
                    if SKIPPED_ELEMENTS.contains(&name) {
                        skip_depth = skip_depth.saturating_sub(1);
                    } else if BLOCK_ELEMENTS.contains(&name) {
                        text.push('\n');
                    }
                    if matches!(name, "h1" | "h2" | "h3") && heading.is_none() {
                        heading = heading_depth.take().map(|buffer| buffer.trim().to_string());
                    }
                }
            }
        }
    }
    let mut body = normalize_paragraphs(&text);
    let title = heading.filter(|title| !title.is_empty());
    if let Some(title) = &title {
        let first_line = body.lines().next().unwrap_or_default();
        if first_line == title.as_str() {
            body = body.lines().skip(1).collect::<Vec<_>>().join("\n");
        }
    }
    if body.is_empty() {
        return None;
    }
    Some(ChapterDraft {
        title: title.unwrap_or_default(),
        text: body,
    })
}

#[cfg(test)]
pub(crate) mod tests;
