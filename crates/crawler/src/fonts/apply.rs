//! Where a page's web fonts apply, and the text they draw there.
//!
//! The page's CSS (its `<style>` blocks and the linked sheets at hand) is
//! read for `@font-face` rules (family name and first `src` URL) and for
//! rules setting `font-family` or `font`. Each element's family list is
//! cascaded the way a browser does for this one property: `style=` over
//! rules, higher specificity then later rules over others, inherited
//! otherwise. A text node is rewritten by the first family of its list that
//! is a decoded web font ([`super::FontMap::rewrite`]); text under system
//! families is left alone. Fonts not at hand are reported as unread, for the
//! caller to fetch and extract again; `data:` fonts are decoded in place.
//!
//! Bounded: [`MAX_FONT_RULES`] family rules and [`MAX_FACES`] faces per page;
//! a page without `@font-face` costs one scan of its CSS.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use base64::Engine as _;
use ego_tree::NodeId;
use scraper::{ElementRef, Html, Node, Selector};

use super::{FontMap, decode_font, system_reference};

/// Rules setting a font family examined per page.
pub const MAX_FONT_RULES: usize = 500;
/// `@font-face` rules kept per page.
pub const MAX_FACES: usize = 32;

/// A font file a page names: `url` as written in the CSS, resolved against
/// `sheet` (the href of the linked sheet, as written in the page) when the
/// rule is in a linked sheet, else against the page.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FontRef {
    /// The linked sheet holding the rule, or `None` for the page's own CSS.
    pub sheet: Option<String>,
    /// The `url()` of the font, as written.
    pub url: String,
}

/// What the caller knows of a font: `None` when it was never fetched,
/// `Some(None)` when it could not be had or read.
pub type FontLookup = Option<Option<Arc<FontMap>>>;

/// Returns what is known of a font the page names.
pub type FontSource<'a> = &'a dyn Fn(&FontRef) -> FontLookup;

/// What applying the page's fonts changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FontsApplied {
    /// Text nodes rewritten through a site font.
    pub rewritten_nodes: usize,
    /// Characters the fonts changed (replaced or dropped).
    pub changed_chars: usize,
    /// Fonts the page applies that were not at hand.
    pub unread: Vec<FontRef>,
}

/// One CSS text of the page and where it comes from.
#[derive(Clone, Copy, Debug)]
pub struct PageCss<'a> {
    /// The linked sheet's href as written in the page; `None` for `<style>`.
    pub sheet: Option<&'a str>,
    /// The CSS.
    pub text: &'a str,
}

struct FamilyRule {
    selector: Selector,
    rank: (u32, usize),
    families: Rc<[String]>,
}

/// Rewrites the text of `document` where a decoded web font applies.
pub fn apply_fonts(document: &mut Html, css: &[PageCss<'_>], font: FontSource<'_>) -> FontsApplied {
    let mut faces: HashMap<String, FontRef> = HashMap::new();
    let mut rules = Vec::new();
    for piece in css {
        parse_css(piece, &mut faces, &mut rules);
    }
    let mut applied = FontsApplied::default();
    if faces.is_empty() {
        return applied;
    }
    let mut maps: HashMap<String, Arc<FontMap>> = HashMap::new();
    for (family, font_ref) in &faces {
        match lookup(font_ref, font) {
            Some(Some(map)) if map.is_decoding() => {
                maps.insert(family.clone(), map);
            }
            Some(_) => {}
            None => applied.unread.push(font_ref.clone()),
        }
    }
    applied.unread.sort_by(|a, b| a.url.cmp(&b.url));
    if maps.is_empty() {
        return applied;
    }
    let plan = plan_rewrites(document, &rules, &maps);
    for (id, family) in plan {
        let Some(map) = maps.get(&family) else {
            continue;
        };
        let Some(mut node) = document.tree.get_mut(id) else {
            continue;
        };
        if let Node::Text(text) = node.value() {
            let changed = text.chars().filter(|c| map.drawn(*c).is_some()).count();
            if changed > 0 {
                let rewritten = map.rewrite(text);
                text.text = rewritten.as_str().into();
                applied.changed_chars += changed;
                applied.rewritten_nodes += 1;
            }
        }
    }
    applied
}

fn lookup(font_ref: &FontRef, font: FontSource<'_>) -> FontLookup {
    let Some(data) = font_ref.url.strip_prefix("data:") else {
        return font(font_ref);
    };
    let Some((_, payload)) = data.split_once(";base64,") else {
        return Some(None);
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload.trim())
        .ok();
    Some(bytes.and_then(|bytes| decode_font(&bytes, &system_reference()).ok().map(Arc::new)))
}

/// Returns the text nodes to rewrite and the family that draws each.
fn plan_rewrites(
    document: &Html,
    rules: &[FamilyRule],
    maps: &HashMap<String, Arc<FontMap>>,
) -> Vec<(NodeId, String)> {
    let mut plan = Vec::new();
    // (node, family drawing its text) per open element.
    let mut stack: Vec<(NodeId, Option<String>)> = Vec::new();
    for edge in document.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => match node.value() {
                Node::Element(element) => {
                    let inherited = stack.last().and_then(|(_, family)| family.clone());
                    let declared = ElementRef::wrap(node)
                        .and_then(|element_ref| declared_families(element_ref, element, rules));
                    let family = match declared {
                        Some(families) => families.iter().find(|f| maps.contains_key(*f)).cloned(),
                        None => inherited,
                    };
                    stack.push((node.id(), family));
                }
                Node::Text(_) => {
                    if let Some((_, Some(family))) = stack.last() {
                        plan.push((node.id(), family.clone()));
                    }
                }
                _ => {}
            },
            ego_tree::iter::Edge::Close(node) => {
                if matches!(node.value(), Node::Element(_)) {
                    stack.pop();
                }
            }
        }
    }
    plan
}

/// Returns the family list the element itself declares, if any.
fn declared_families(
    element_ref: ElementRef<'_>,
    element: &scraper::node::Element,
    rules: &[FamilyRule],
) -> Option<Rc<[String]>> {
    if let Some(style) = element.attr("style")
        && let Some(families) = families_of_declarations(style)
    {
        return Some(families.into());
    }
    rules
        .iter()
        .filter(|rule| rule.selector.matches(&element_ref))
        .max_by_key(|rule| rule.rank)
        .map(|rule| rule.families.clone())
}

/// Reads `@font-face` rules and family rules of one CSS text.
fn parse_css(
    piece: &PageCss<'_>,
    faces: &mut HashMap<String, FontRef>,
    rules: &mut Vec<FamilyRule>,
) {
    let css = strip_comments(piece.text);
    let mut rest = css.as_str();
    while let Some(open) = rest.find('{') {
        let prelude = rest.get(..open).unwrap_or_default();
        let prelude = prelude.rsplit(['}', ';']).next().unwrap_or_default().trim();
        let after = rest.get(open + 1..).unwrap_or_default();
        let lowered = prelude.to_ascii_lowercase();
        if lowered.starts_with("@media") || lowered.starts_with("@supports") {
            // Enter the block: its rules are read as top-level ones.
            rest = after;
            continue;
        }
        let close = after.find('}').unwrap_or(after.len());
        let body = after.get(..close).unwrap_or_default();
        rest = after.get(close + 1..).unwrap_or_default();
        if lowered.starts_with("@font-face") {
            if faces.len() < MAX_FACES
                && let Some((family, url)) = font_face(body)
            {
                faces.entry(family).or_insert(FontRef {
                    sheet: piece.sheet.map(str::to_string),
                    url,
                });
            }
            continue;
        }
        if lowered.starts_with('@') || rules.len() >= MAX_FONT_RULES {
            continue;
        }
        let Some(families) = families_of_declarations(body) else {
            continue;
        };
        let families: Rc<[String]> = families.into();
        for selector_text in prelude.split(',') {
            let selector_text = selector_text.trim();
            if selector_text.is_empty() || selector_text.contains("::") {
                continue;
            }
            let Ok(selector) = Selector::parse(selector_text) else {
                continue;
            };
            rules.push(FamilyRule {
                selector,
                rank: (specificity(selector_text), rules.len()),
                families: families.clone(),
            });
        }
    }
}

fn strip_comments(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        out.push_str(rest.get(..start).unwrap_or_default());
        let after = rest.get(start + 2..).unwrap_or_default();
        rest = after
            .find("*/")
            .and_then(|end| after.get(end + 2..))
            .unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Returns the family and first `src` URL of an `@font-face` body.
fn font_face(body: &str) -> Option<(String, String)> {
    let mut family = None;
    let mut url = None;
    for (name, value) in declarations(body) {
        match name.as_str() {
            "font-family" => family = parse_families(value).into_iter().next(),
            "src" if url.is_none() => url = first_url(value),
            _ => {}
        }
    }
    Some((family?, url?))
}

fn first_url(value: &str) -> Option<String> {
    let lowered = value.to_ascii_lowercase();
    let start = lowered.find("url(")? + 4;
    let inner = value.get(start..)?;
    let end = inner.find(')')?;
    let url = inner.get(..end)?.trim().trim_matches(['"', '\'']).trim();
    (!url.is_empty()).then(|| url.to_string())
}

/// Splits a declaration block into (lowercase name, value) pairs.
fn declarations(body: &str) -> impl Iterator<Item = (String, &str)> {
    body.split(';').filter_map(|declaration| {
        let (name, value) = declaration.split_once(':')?;
        Some((name.trim().to_ascii_lowercase(), value.trim()))
    })
}

/// Returns the families a declaration block sets (`font-family`, or `font`'s last part).
fn families_of_declarations(body: &str) -> Option<Vec<String>> {
    let mut families = None;
    for (name, value) in declarations(body) {
        let value = value.trim_end_matches("!important").trim();
        match name.as_str() {
            "font-family" => families = Some(parse_families(value)),
            "font" => families = Some(parse_families(font_shorthand_families(value))),
            _ => {}
        }
    }
    families.filter(|families| !families.is_empty())
}

/// Returns the family part of a `font` shorthand: what follows the size.
fn font_shorthand_families(value: &str) -> &str {
    let head_end = value.find([',', '"', '\'']).unwrap_or(value.len());
    let head = value.get(..head_end).unwrap_or_default();
    let mut offset = 0;
    let mut family_start = 0;
    for token in head.split(' ') {
        let starts_with_size = token
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.');
        offset += token.len() + 1;
        if starts_with_size {
            family_start = offset.min(value.len());
        }
    }
    value.get(family_start..).unwrap_or_default()
}

/// Parses `"A", B C, sans-serif` into lowercase names.
fn parse_families(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|family| {
            family
                .trim()
                .trim_matches(['"', '\''])
                .trim()
                .to_lowercase()
        })
        .filter(|family| !family.is_empty())
        .collect()
}

/// Specificity as one number: ids, then classes, attributes and pseudo-classes, then tags.
fn specificity(selector: &str) -> u32 {
    let ids = selector.matches('#').count() as u32;
    let classes = (selector.matches('.').count()
        + selector.matches('[').count()
        + selector.matches(':').count()) as u32;
    let tags = selector
        .split([' ', '>', '+', '~'])
        .filter(|part| part.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .count() as u32;
    ids * 10_000 + classes * 100 + tags
}
