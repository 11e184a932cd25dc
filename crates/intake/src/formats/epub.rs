//! Reading an EPUB: `META-INF/container.xml` names the OPF package; the OPF
//! spine lists the XHTML documents in reading order; each document becomes a
//! chapter (its first heading is the title). Every step has a budget
//! ([`super::limits`]): entries in the archive, compressed and decompressed
//! bytes per entry and in total (a zip bomb is refused, not inflated), elements
//! and nesting per XML document, spine items, and characters per chapter and per
//! book. Chapters are read as a stream of tags ([`super::xhtml`]), never as a DOM.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use copyhound_core::{Error, Result};
use quick_xml::events::{BytesStart, Event};

use super::ChapterDraft;
use super::limits::{
    MAX_CHAPTERS, MAX_DECOMPRESSED_BYTES, MAX_ENTRY_BYTES, MAX_ENTRY_COMPRESSED_BYTES,
    MAX_FILE_BYTES, MAX_XML_DEPTH, MAX_XML_ELEMENTS, MAX_ZIP_ENTRIES, TextBudget, too_large,
};
use super::xhtml::xhtml_chapter;

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
    /// Decompressed bytes the remaining reads may take.
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
        if entry.compressed_size() > MAX_ENTRY_COMPRESSED_BYTES {
            return Err(too_large(format!(
                "EPUB entry `{name}` is larger than {MAX_ENTRY_COMPRESSED_BYTES} bytes compressed (limit per entry)"
            )));
        }
        // The declared size may lie; the read below is capped either way.
        if entry.size() > MAX_ENTRY_BYTES {
            return Err(entry_too_large(name));
        }
        let cap = MAX_ENTRY_BYTES.min(self.budget);
        let mut bytes = Vec::new();
        let mut limited = entry.take(cap.saturating_add(1));
        limited.read_to_end(&mut bytes).map_err(|error| {
            Error::invalid(format!("corrupt EPUB: cannot read `{name}`: {error}"))
        })?;
        let read = bytes.len() as u64;
        if read > MAX_ENTRY_BYTES {
            return Err(entry_too_large(name));
        }
        if read > self.budget {
            return Err(too_large(format!(
                "EPUB decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes (limit per book)"
            )));
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

fn entry_too_large(name: &str) -> Error {
    too_large(format!(
        "EPUB entry `{name}` decompresses to more than {MAX_ENTRY_BYTES} bytes (limit per entry)"
    ))
}

/// Parses an EPUB into chapters. A file that is not a zip, lacks the container or
/// package document, or has no text in its spine is `InvalidInput`; one past a
/// budget of [`super::limits`] is `TooLarge`, naming the limit.
pub fn parse_epub(bytes: &[u8]) -> Result<EpubBook> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(too_large(format!(
            "the EPUB is larger than {MAX_FILE_BYTES} bytes (limit per upload)"
        )));
    }
    let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| {
        Error::invalid(format!(
            "not an EPUB: the file is not a valid zip archive ({error})"
        ))
    })?;
    if zip.len() > MAX_ZIP_ENTRIES {
        return Err(too_large(format!(
            "EPUB has more than {MAX_ZIP_ENTRIES} entries (limit per archive)"
        )));
    }
    let mut archive = Archive {
        zip,
        budget: MAX_DECOMPRESSED_BYTES,
    };
    let container = archive.read_text("META-INF/container.xml")?;
    let opf_path = rootfile_path(&container)?;
    let opf = archive.read_text(&opf_path)?;
    let package = parse_package(&opf_path, &opf)?;
    let base = opf_path
        .rsplit_once('/')
        .map(|(dir, _)| format!("{dir}/"))
        .unwrap_or_default();
    let mut chapters = Vec::new();
    let mut warnings = Vec::new();
    let mut skipped = 0usize;
    let mut budget = TextBudget::for_upload();
    for idref in &package.spine {
        let Some(item) = package.manifest.get(idref) else {
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
        match xhtml_chapter(&path, &html)? {
            Some(chapter) => {
                budget.spend(chapter.text.chars().count())?;
                chapters.push(chapter);
            }
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

/// Counts the elements and nesting of one XML document against their budgets.
struct XmlBudget<'a> {
    name: &'a str,
    elements: usize,
    depth: usize,
}

impl<'a> XmlBudget<'a> {
    fn new(name: &'a str) -> Self {
        Self {
            name,
            elements: 0,
            depth: 0,
        }
    }

    /// Counts one event: a start tag opens, an empty tag counts, an end tag closes.
    fn count(&mut self, event: &Event<'_>) -> Result<()> {
        match event {
            Event::Start(_) => {
                self.depth += 1;
                if self.depth > MAX_XML_DEPTH {
                    return Err(too_large(format!(
                        "EPUB `{}` nests elements deeper than {MAX_XML_DEPTH} (limit per document)",
                        self.name
                    )));
                }
            }
            Event::End(_) => {
                self.depth = self.depth.saturating_sub(1);
                return Ok(());
            }
            Event::Empty(_) => {}
            _ => return Ok(()),
        }
        self.elements += 1;
        if self.elements > MAX_XML_ELEMENTS {
            return Err(too_large(format!(
                "EPUB `{}` has more than {MAX_XML_ELEMENTS} elements (limit per document)",
                self.name
            )));
        }
        Ok(())
    }
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    let value = element.try_get_attribute(name).ok()??;
    value.unescape_value().ok().map(|text| text.into_owned())
}

fn rootfile_path(container: &str) -> Result<String> {
    let mut reader = quick_xml::Reader::from_str(container);
    let mut budget = XmlBudget::new("META-INF/container.xml");
    loop {
        let event = reader
            .read_event()
            .map_err(|error| Error::invalid(format!("corrupt EPUB: container.xml: {error}")))?;
        budget.count(&event)?;
        match event {
            Event::Start(element) | Event::Empty(element)
                if element.local_name().as_ref() == b"rootfile" =>
            {
                if let Some(path) = attribute(&element, "full-path") {
                    return Ok(path);
                }
            }
            Event::Eof => {
                return Err(Error::invalid(
                    "corrupt EPUB: container.xml names no rootfile",
                ));
            }
            _ => {}
        }
    }
}

struct ManifestItem {
    href: String,
    media_type: String,
}

struct Package {
    title: Option<String>,
    author: Option<String>,
    /// Items by id.
    manifest: BTreeMap<String, ManifestItem>,
    spine: Vec<String>,
}

fn parse_package(name: &str, opf: &str) -> Result<Package> {
    let mut reader = quick_xml::Reader::from_str(opf);
    let mut budget = XmlBudget::new(name);
    let mut package = Package {
        title: None,
        author: None,
        manifest: BTreeMap::new(),
        spine: Vec::new(),
    };
    let mut capturing: Option<&'static str> = None;
    let mut text = String::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|error| Error::invalid(format!("corrupt EPUB: package document: {error}")))?;
        budget.count(&event)?;
        match event {
            Event::Start(element) | Event::Empty(element) => match element.local_name().as_ref() {
                b"title" if package.title.is_none() => capturing = Some("title"),
                b"creator" if package.author.is_none() => capturing = Some("creator"),
                b"item" => {
                    if let (Some(id), Some(href)) =
                        (attribute(&element, "id"), attribute(&element, "href"))
                    {
                        let media_type = attribute(&element, "media-type").unwrap_or_default();
                        package
                            .manifest
                            .entry(id)
                            .or_insert(ManifestItem { href, media_type });
                    }
                }
                b"itemref" => {
                    let linear = attribute(&element, "linear").unwrap_or_default();
                    if let (Some(idref), false) = (attribute(&element, "idref"), linear == "no") {
                        if package.spine.len() == MAX_CHAPTERS {
                            return Err(too_large(format!(
                                "EPUB spine has more than {MAX_CHAPTERS} items (a work has at most {MAX_CHAPTERS} chapters)"
                            )));
                        }
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

#[cfg(any(test, feature = "testsuite"))]
pub(crate) mod tests;
