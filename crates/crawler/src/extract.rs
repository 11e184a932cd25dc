//! Main-text extraction from novel and news pages, without site templates.
//!
//! The content block is found by text density: every block element is scored by
//! the non-link text it holds directly (its text nodes and paragraph-like
//! children), damped by its link density. The best block wins; blocks scoring
//! close to it (articles split in sections) and blocks built like it (same tag
//! and class: forum floors, however short) are kept too, in document order. Scripts, styles, navigation, headers, footers and
//! elements marked as ads are dropped; block tags become line breaks, as in the
//! reference extractor, so paragraphs stay one per line. Watermarks and ad lines
//! inside the content are left to the fingerprint normalizer.
//!
//! Traversals are iterative: hostile pages nested a million deep cannot
//! overflow the stack. Every page is bounded before it is parsed: at most
//! [`MAX_HTML_BYTES`] are read, and a page nested over [`MAX_NESTING`] levels or
//! holding over [`MAX_ELEMENTS`] elements is reduced to its text outside links
//! and its first links in one streaming pass instead of being parsed
//! (`Extracted::warning` says so); the
//! texts of titles, headings and anchors are read up to a few hundred chars.

use std::collections::HashSet;
use std::sync::Arc;

use copyhound_core::html::is_block_tag;
use copyhound_core::model::ExtractionHints;
use ego_tree::NodeId;
use ego_tree::iter::Edge;
use scraper::{ElementRef, Html, Node, Selector};
use tracing::warn;

pub use crate::extract_fallback::{MAX_ELEMENTS, MAX_HTML_BYTES, MAX_NESTING};
use crate::extract_fallback::{shape, strip_tags};
use crate::fonts::apply::{FontSource, FontsApplied, PageCss, apply_fonts};
use crate::style::{self, Applied, LinkedSheets};
use crate::text::{join_nonempty_lines, within_budget};
use tags::{is_heading_like, is_next_page_anchor, page_number, part_marker};

/// Links kept per page by [`extract`]; the rest are dropped (link farms).
pub const DEFAULT_MAX_LINKS: usize = 2000;
/// Anchors examined per page for links and pagination.
const MAX_ANCHORS_EXAMINED: usize = 50_000;
/// Chars of a `<title>` or `<h1>` kept.
const MAX_TITLE_CHARS: usize = 512;
/// Chars of a heading-like element read: longer ones are not headings.
const MAX_HEADING_CHARS: usize = 120;
/// Chars of an anchor's text read (page numbers and "next page" are short).
const MAX_ANCHOR_TEXT_CHARS: usize = 64;
/// Non-whitespace characters of main text that make a page a content page.
pub const MIN_CONTENT_CHARS: usize = 200;
/// Blocks scoring at least this share of the best block are kept as content.
const SECONDARY_BLOCK_SHARE: f64 = 0.3;
/// ... and at least this many characters.
const SECONDARY_BLOCK_MIN_CHARS: f64 = 100.0;
/// Blocks built like the best one (same tag and class) are kept from this size.
const SIBLING_BLOCK_MIN_CHARS: f64 = 8.0;

/// What extraction found on a page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The `<title>`, whitespace collapsed.
    pub title: String,
    /// The chapter heading: the last heading-like element before the content.
    pub heading: String,
    /// The main text, one paragraph per line.
    pub text: String,
    /// The raw `href` of the next part of a paginated chapter, if any.
    pub next_page_url: Option<String>,
    /// Raw `href`s of the page's links in document order (capped, deduplicated).
    pub links: Vec<String>,
    /// The `<base href>`, against which links resolve, if the page sets one.
    pub base_href: Option<String>,
    /// Set when a budget cut the page short (bytes, nesting, elements, CSS).
    pub warning: Option<String>,
    /// What the page's CSS hid, reordered, generated or drew as images.
    pub styled: Applied,
    /// Hrefs of linked style sheets that were not supplied: the text was read
    /// without them (see [`extract_styled`]).
    pub unread_sheets: Vec<String>,
    /// What the page's web fonts changed, and the fonts that were not at
    /// hand (see [`extract_with_fonts`]).
    pub fonts: FontsApplied,
}

impl Extracted {
    /// Returns whether the main text is long enough for a content page (not an index).
    pub fn is_content(&self) -> bool {
        self.text
            .chars()
            .filter(|c| !c.is_whitespace())
            .take(MIN_CONTENT_CHARS)
            .count()
            >= MIN_CONTENT_CHARS
    }
}

/// Returns the title, heading, main text, next-page link and links of `html`.
pub fn extract(html: &str, hints: &ExtractionHints) -> Extracted {
    extract_with_limit(html, hints, DEFAULT_MAX_LINKS)
}

/// Like [`extract`], keeping at most `max_links` links.
pub fn extract_with_limit(html: &str, hints: &ExtractionHints, max_links: usize) -> Extracted {
    extract_styled(html, hints, max_links, Some(&|_| None))
}

/// Returns the text of the style sheet an href names (as written in the page).
pub type SheetSource<'a> = &'a dyn Fn(&str) -> Option<Arc<str>>;

/// Like [`extract_with_limit`], with the page's linked style sheets: `sheet`
/// returns the text of the sheet an href (as written in the page) names, when
/// it is at hand. The ones that are not are listed in
/// [`Extracted::unread_sheets`], for the caller to fetch and extract again.
/// `None` reads the markup alone, ignoring all CSS (the benchmarks' baseline).
pub fn extract_styled(
    html: &str,
    hints: &ExtractionHints,
    max_links: usize,
    sheet: Option<SheetSource<'_>>,
) -> Extracted {
    extract_with_fonts(html, hints, max_links, sheet, None)
}

/// Like [`extract_styled`], with the page's web fonts: `font` says what is
/// known of a font the CSS applies (see [`crate::fonts::apply`]); text drawn
/// by a decoded site font is read as drawn. Fonts not at hand are listed in
/// `Extracted::fonts.unread`, for the caller to fetch and extract again.
pub fn extract_with_fonts(
    html: &str,
    hints: &ExtractionHints,
    max_links: usize,
    sheet: Option<SheetSource<'_>>,
    font: Option<FontSource<'_>>,
) -> Extracted {
    let whole = html.len();
    let html = within_budget(html);
    let cut = (html.len() < whole)
        .then(|| format!("html over {MAX_HTML_BYTES} bytes; the rest was ignored"));
    if let Some(refusal) = shape(html).refusal() {
        // Deep nesting makes html5ever quadratic, millions of elements make its
        // tree huge: such pages are hostile, not novels.
        warn!(bytes = html.len(), "{refusal}");
        let stripped = strip_tags(html, max_links);
        return Extracted {
            text: stripped.text,
            links: stripped.links,
            warning: Some(cut.map_or(refusal.clone(), |cut| format!("{cut}; {refusal}"))),
            ..Extracted::default()
        };
    }
    let mut document = Html::parse_document(html);
    let mut unread_sheets = Vec::new();
    let mut sheets = Vec::new();
    let styled = match sheet {
        Some(sheet) => {
            for href in style::linked_sheet_hrefs(&document) {
                match sheet(&href) {
                    Some(text) => sheets.push((href, text)),
                    None => unread_sheets.push(href),
                }
            }
            let sheet_texts: Vec<&str> = sheets.iter().map(|(_, text)| &**text).collect();
            style::apply(
                &mut document,
                LinkedSheets {
                    sheets: &sheet_texts,
                    complete: unread_sheets.is_empty(),
                },
            )
        }
        None => Applied::default(),
    };
    if styled.read_as_markup {
        warn!(
            bytes = html.len(),
            "css cascade over its time budget; page read as markup"
        );
        // More sheets would only make the cascade slower: none are asked for.
        unread_sheets.clear();
    }
    let fonts = match font {
        Some(font) if !styled.read_as_markup => read_fonts(&mut document, &sheets, font),
        _ => FontsApplied::default(),
    };
    // After the cascade, so hidden drawings stay hidden.
    svg::inline_svg_text(&mut document);
    let warning = match (cut, &styled.truncated) {
        (Some(cut), Some(css)) => Some(format!("{cut}; {css}")),
        (cut, css) => cut.or_else(|| css.clone()),
    };
    let scan = scan(&document, max_links);
    let hinted = hints
        .content_selector
        .as_deref()
        .and_then(|css| select_ids(&document, css));
    let content_ids = hinted.unwrap_or_else(|| pick_content_blocks(&document, &scan.candidates));
    let rendered = render(&document, &content_ids);
    let hinted_next = hints
        .next_page_selector
        .as_deref()
        .and_then(|css| first_href(&document, css));
    let next_page_url = hinted_next
        .or_else(|| scan.next_page.clone())
        .or_else(|| numbered_next_page(&scan));
    Extracted {
        title: scan.title,
        heading: rendered.heading.or(scan.first_h1).unwrap_or_default(),
        text: rendered.text,
        next_page_url,
        links: scan.links,
        base_href: scan.base_href,
        warning,
        styled,
        unread_sheets,
        fonts,
    }
}

/// Rewrites the text drawn by the page's decoded web fonts.
fn read_fonts(
    document: &mut Html,
    sheets: &[(String, Arc<str>)],
    font: FontSource<'_>,
) -> FontsApplied {
    let inline: Vec<String> = Selector::parse("style")
        .map(|styles| {
            document
                .select(&styles)
                .map(|style| style.text().collect())
                .collect()
        })
        .unwrap_or_default();
    let mut css: Vec<PageCss<'_>> = sheets
        .iter()
        .map(|(href, text)| PageCss {
            sheet: Some(href.as_str()),
            text,
        })
        .collect();
    css.extend(inline.iter().map(|text| PageCss { sheet: None, text }));
    apply_fonts(document, &css, font)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Dropped with its subtree (script, style, nav, ads).
    Skip,
    /// A block container: a candidate content block.
    Block,
    /// Paragraphs and inline formatting: their text counts for the parent block.
    Inline,
    /// A link: its text is link text.
    Link,
    /// Anything else.
    Other,
}

fn classify(name: &str, element: &scraper::node::Element) -> Kind {
    match name {
        "head" | "script" | "style" | "noscript" | "template" | "select" | "textarea"
        | "iframe" | "svg" | "nav" | "header" | "footer" | "aside" | "form" | "button"
        | "object" | "embed" | "canvas" => Kind::Skip,
        _ if is_ad(element) => Kind::Skip,
        "div" | "section" | "article" | "main" | "td" | "body" | "dd" | "li" | "blockquote"
        | "center" | "pre" => Kind::Block,
        "p" | "span" | "font" | "b" | "strong" | "em" | "i" | "u" | "br" | "small" | "big"
        | "sup" | "sub" | "code" | "q" | "cite" | "s" | "strike" | "ins" | "mark" | "h2" | "h3"
        | "h4" | "h5" | "h6" => Kind::Inline,
        "a" => Kind::Link,
        _ => Kind::Other,
    }
}

/// Returns whether class or id marks the element as an ad (`ad`, `ad_top`, `ads-x`).
fn is_ad(element: &scraper::node::Element) -> bool {
    let marked = |value: &str| {
        value
            .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
            .any(|token| {
                matches!(
                    token.to_ascii_lowercase().as_str(),
                    "ad" | "ads" | "advert" | "adsbygoogle" | "gg" | "banner"
                )
            })
    };
    element.attr("class").is_some_and(marked) || element.id().is_some_and(marked)
}

struct Frame {
    id: NodeId,
    kind: Kind,
    text_chars: usize,
    link_chars: usize,
    direct_chars: usize,
}

struct Scan {
    /// Part N of M, from a "第N/M页" marker.
    part_marker: Option<(u32, u32)>,
    /// Anchors whose text is a page number (`3`, `[3]`), with their href.
    numbered_links: Vec<(u32, String)>,
    title: String,
    first_h1: Option<String>,
    candidates: Vec<(NodeId, f64)>,
    links: Vec<String>,
    next_page: Option<String>,
    base_href: Option<String>,
}

/// One pass over the document: block scores, title, links and pagination.
fn scan(document: &Html, max_links: usize) -> Scan {
    let mut scan = Scan {
        part_marker: None,
        numbered_links: Vec::new(),
        title: String::new(),
        first_h1: None,
        candidates: Vec::new(),
        links: Vec::new(),
        next_page: None,
        base_href: None,
    };
    let mut seen_links = HashSet::new();
    let mut anchors_examined = 0usize;
    let mut stack: Vec<Frame> = Vec::new();
    let mut skip_depth = 0usize;
    let mut link_depth = 0usize;
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(node) => {
                if let Node::Element(element) = node.value() {
                    let name = element.name();
                    let kind = classify(name, element);
                    match name {
                        "title" if scan.title.is_empty() => {
                            scan.title = element_text(node.id(), document, MAX_TITLE_CHARS)
                        }
                        "base" if scan.base_href.is_none() => {
                            scan.base_href = element.attr("href").map(str::to_string)
                        }
                        "h1" if scan.first_h1.is_none() && skip_depth == 0 => {
                            scan.first_h1 =
                                Some(element_text(node.id(), document, MAX_TITLE_CHARS));
                        }
                        "a" | "area" if anchors_examined < MAX_ANCHORS_EXAMINED => {
                            anchors_examined += 1;
                            if let Some(href) = element.attr("href") {
                                if scan.links.len() < max_links && seen_links.insert(href) {
                                    scan.links.push(href.to_string());
                                }
                                let text = element_text(node.id(), document, MAX_ANCHOR_TEXT_CHARS);
                                if scan.next_page.is_none() && is_next_page_anchor(&text, element) {
                                    scan.next_page = Some(href.to_string());
                                }
                                if let Some(number) = page_number(&text)
                                    && scan.numbered_links.len() < 500
                                {
                                    scan.numbered_links.push((number, href.to_string()));
                                }
                            }
                        }
                        _ => {}
                    }
                    if kind == Kind::Skip {
                        skip_depth += 1;
                    }
                    if kind == Kind::Link {
                        link_depth += 1;
                    }
                    stack.push(Frame {
                        id: node.id(),
                        kind,
                        text_chars: 0,
                        link_chars: 0,
                        direct_chars: 0,
                    });
                } else if let Node::Text(text) = node.value() {
                    let Some(top) = stack.last_mut() else {
                        continue;
                    };
                    if skip_depth > 0 {
                        continue;
                    }
                    if scan.part_marker.is_none() && text.len() < 200 && text.contains('页') {
                        scan.part_marker = part_marker(text);
                    }
                    let chars = text.chars().filter(|c| !c.is_whitespace()).count();
                    if link_depth > 0 {
                        top.link_chars += chars;
                    } else {
                        top.text_chars += chars;
                        top.direct_chars += chars;
                    }
                }
            }
            Edge::Close(node) => {
                if !matches!(node.value(), Node::Element(_)) {
                    continue;
                }
                let Some(frame) = stack.pop() else { continue };
                match frame.kind {
                    Kind::Skip => skip_depth = skip_depth.saturating_sub(1),
                    Kind::Link => link_depth = link_depth.saturating_sub(1),
                    _ => {}
                }
                if frame.kind == Kind::Skip || skip_depth > 0 {
                    continue;
                }
                if frame.kind == Kind::Block && frame.direct_chars > 0 {
                    let total = (frame.text_chars + frame.link_chars) as f64;
                    let link_density = frame.link_chars as f64 / total.max(1.0);
                    scan.candidates
                        .push((frame.id, frame.direct_chars as f64 * (1.0 - link_density)));
                }
                if let Some(parent) = stack.last_mut() {
                    parent.text_chars += frame.text_chars;
                    parent.link_chars += frame.link_chars;
                    if matches!(frame.kind, Kind::Inline | Kind::Link) {
                        parent.direct_chars += frame.text_chars;
                    }
                }
            }
        }
    }
    scan
}

/// Returns the href of part N+1 when the page says it is part N of M.
fn numbered_next_page(scan: &Scan) -> Option<String> {
    let (part, of) = scan.part_marker?;
    if part >= of {
        return None;
    }
    scan.numbered_links
        .iter()
        .find(|(number, _)| *number == part + 1)
        .map(|(_, href)| href.clone())
}

/// Returns the text of an element, ASCII whitespace runs collapsed, trimmed.
/// Reading stops a few chars past `max_chars`: a text longer than `max_chars`
/// comes back cut, but still longer than `max_chars`.
fn element_text(id: NodeId, document: &Html, max_chars: usize) -> String {
    let Some(element) = document.tree.get(id).and_then(ElementRef::wrap) else {
        return String::new();
    };
    // One leading and one trailing space are trimmed: read two more.
    let limit = max_chars + 3;
    let mut out = String::new();
    let mut chars = 0;
    let mut in_space = false;
    'pieces: for piece in element.text() {
        for c in piece.chars() {
            if matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}') {
                if in_space {
                    continue;
                }
                out.push(' ');
                in_space = true;
            } else {
                out.push(c);
                in_space = false;
            }
            chars += 1;
            if chars >= limit {
                break 'pieces;
            }
        }
    }
    out.trim_matches(' ').to_string()
}

fn push_collapsed(out: &mut String, text: &str) {
    let mut in_space = out.ends_with(' ');
    for c in text.chars() {
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}') {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            out.push(c);
            in_space = false;
        }
    }
}

/// Picks the best block, blocks scoring close to it, and blocks built like it
/// (same tag and class: the floors of a forum thread, however short).
fn pick_content_blocks(document: &Html, candidates: &[(NodeId, f64)]) -> HashSet<NodeId> {
    let Some((best_id, best)) = candidates
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return HashSet::new();
    };
    if best <= 0.0 {
        return HashSet::new();
    }
    let signature = |id: NodeId| {
        let element = document.tree.get(id).and_then(ElementRef::wrap)?;
        let class = element.value().attr("class")?;
        Some((element.value().name().to_string(), class.to_string()))
    };
    let best_signature = signature(best_id);
    let floor = (best * SECONDARY_BLOCK_SHARE).max(SECONDARY_BLOCK_MIN_CHARS.min(best));
    candidates
        .iter()
        .filter(|(id, score)| {
            *score >= floor
                || (*score >= SIBLING_BLOCK_MIN_CHARS
                    && best_signature.is_some()
                    && signature(*id) == best_signature)
        })
        .map(|(id, _)| *id)
        .collect()
}

fn select_ids(document: &Html, css: &str) -> Option<HashSet<NodeId>> {
    let selector = Selector::parse(css).ok()?;
    let ids: HashSet<NodeId> = document
        .select(&selector)
        .map(|element| element.id())
        .collect();
    (!ids.is_empty()).then_some(ids)
}

fn first_href(document: &Html, css: &str) -> Option<String> {
    let selector = Selector::parse(css).ok()?;
    document
        .select(&selector)
        .find_map(|element| element.attr("href"))
        .map(str::to_string)
}

struct Rendered {
    text: String,
    heading: Option<String>,
}

/// Renders the text of the content blocks, and finds the heading above them.
fn render(document: &Html, content_ids: &HashSet<NodeId>) -> Rendered {
    let mut raw = String::new();
    let mut heading = None;
    let mut active: Option<NodeId> = None;
    let mut seen_content = false;
    let mut skip_depth = 0usize;
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => {
                    let name = element.name();
                    let skipped = classify(name, element) == Kind::Skip;
                    if skipped {
                        skip_depth += 1;
                    }
                    if active.is_none() && skip_depth == 0 && content_ids.contains(&node.id()) {
                        active = Some(node.id());
                        seen_content = true;
                    }
                    if !seen_content && skip_depth == 0 && is_heading_like(name, element) {
                        let text = element_text(node.id(), document, MAX_HEADING_CHARS);
                        if !text.is_empty() && text.chars().count() <= MAX_HEADING_CHARS {
                            heading = Some(text);
                        }
                    }
                    if active.is_some() && skip_depth == 0 && is_block_tag(name) {
                        raw.push('\n');
                    }
                }
                Node::Text(text) if active.is_some() && skip_depth == 0 => {
                    push_collapsed(&mut raw, text)
                }
                _ => {}
            },
            Edge::Close(node) => {
                let Node::Element(element) = node.value() else {
                    continue;
                };
                let name = element.name();
                if classify(name, element) == Kind::Skip {
                    skip_depth = skip_depth.saturating_sub(1);
                    continue;
                }
                if active.is_some() && skip_depth == 0 && is_block_tag(name) {
                    raw.push('\n');
                }
                if active == Some(node.id()) {
                    active = None;
                    raw.push('\n');
                }
            }
        }
    }
    Rendered {
        text: join_nonempty_lines(&raw),
        heading,
    }
}

#[path = "extract_svg.rs"]
mod svg;
#[path = "extract_tags.rs"]
mod tags;

#[cfg(test)]
#[path = "extract_test.rs"]
mod tests;
