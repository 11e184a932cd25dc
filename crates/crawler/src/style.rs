//! What a reader sees: the page's CSS applied to the tree before extraction.
//!
//! Piracy sites defend their copies against matching: decoy characters hidden
//! by CSS (`display:none`, zero font size, off-screen positions, text coloured
//! like its background), text chunks stored out of order that flex `order`
//! puts back, characters drawn as images. Read as markup, the decoys reach the
//! fingerprints and the chunks arrive scrambled. So the `<style>` blocks,
//! same-site sheets and `style=` attributes are cascaded (specificity,
//! `!important`, inheritance) for the handful of properties that decide
//! whether text is seen, and the tree is rewritten the way it is rendered:
//! hidden nodes detached, flex items sorted by `order`, `::before`/`::after`
//! strings inserted, images standing for one character replaced by
//! [`GLYPH_PLACEHOLDER`]. The extractor then reads the tree as before.
//!
//! Only what is known is trusted: text coloured like the background counts as
//! hidden only when the background is known (declared, or the browser's white
//! when every linked sheet was read), and an inherited zero font size hides
//! descendants only then too; otherwise it hides the element's own text.
//!
//! Bounded: [`MAX_CSS_BYTES`] of CSS and [`MAX_SELECTORS`] selectors are read,
//! [`MAX_MATCH_TESTS`] selector tests run per page; past a bound the rest is
//! read as markup, as before, and the result says so. Selectors are bucketed
//! by their rightmost id, class or tag, so an element is tested only against
//! rules that can match it.
//!
//! A count of tests does not bound their cost: `:is(:is(span div) div) div`
//! walks the ancestors once per ancestor per ancestor, and a page of such
//! rules over 500 nested `div`s took 15 minutes. So selectors nested past
//! [`MAX_COMBINATOR_LEVELS`] are dropped (one test then costs at most the
//! depth squared), and the cascade has [`CSS_TIME_BUDGET`]: past it the page
//! is read as markup alone ([`Applied::read_as_markup`]), never half styled.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::{Duration, Instant};

use copyhound_core::html::is_block_box;
use ego_tree::NodeId;
use ego_tree::iter::Edge;
use scraper::{ElementRef, Html, Node, Selector};

mod css;

use css::{Background, Declaration, Display, Field, FontSize, Rgba, SLOTS};

use crate::text::char_prefix;

/// Bytes of CSS read per page, inline blocks and linked sheets together.
pub const MAX_CSS_BYTES: usize = 1 << 20;
/// Selectors kept per page.
pub const MAX_SELECTORS: usize = 20_000;
/// Selector tests run per page.
pub const MAX_MATCH_TESTS: usize = 1_000_000;
/// Time the cascade of one page may take; past it the page is read as markup.
/// Real pages take milliseconds.
pub const CSS_TIME_BUDGET: Duration = Duration::from_secs(1);
/// Levels of a selector holding a descendant or sibling combinator, counted
/// through the arguments of `:is()`, `:not()`, `:where()`: matching one walks
/// the ancestors per try of the level around it, so a test costs up to the
/// page's depth to this power. Selectors past it are dropped.
pub const MAX_COMBINATOR_LEVELS: usize = 2;
/// Functional pseudo-classes nested in one another; deeper selectors are dropped.
pub const MAX_SELECTOR_NESTING: usize = 4;
/// Stands for a character drawn as an image: U+FFFC OBJECT REPLACEMENT
/// CHARACTER, which the fingerprint normalizer keeps and the verifier aligns as
/// a wildcard (`copyhound_fingerprint::GLYPH_PLACEHOLDER`, the same character).
pub const GLYPH_PLACEHOLDER: char = '\u{FFFC}';
/// The n-th distinct picture of a page that stands for one character is
/// written as `U+F0000 + n` (private use), so every copy of one picture reads
/// as the same unknown character, which the verifier learns to read
/// (`copyhound_fingerprint::FIRST_NAMED_GLYPH`, the same character). Past
/// [`MAX_NAMED_GLYPHS`] pictures, or without a `src`, [`GLYPH_PLACEHOLDER`].
pub const FIRST_NAMED_GLYPH: char = '\u{F0000}';
/// Distinct glyph pictures named per page.
pub const MAX_NAMED_GLYPHS: usize = 0xFFFD;
/// An element moved this far out of view (px) is not seen.
const OFF_SCREEN_PX: f32 = -500.0;
/// Images larger than this (px, by their attributes) are pictures, not glyphs.
const MAX_GLYPH_PX: u32 = 64;

/// The style sheets a page links, as far as they could be read.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkedSheets<'a> {
    /// The sheets' texts, in document order.
    pub sheets: &'a [&'a str],
    /// Whether every sheet the page links is among them.
    pub complete: bool,
}

/// What applying the page's CSS changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Elements and text nodes removed as unseen.
    pub hidden: usize,
    /// Flex or grid containers whose items were put in `order`.
    pub reordered: usize,
    /// `::before`/`::after` strings inserted.
    pub generated: usize,
    /// Images replaced by [`GLYPH_PLACEHOLDER`] or their one-character `alt`.
    pub glyphs: usize,
    /// Set when a bound stopped the CSS from being applied in full.
    pub truncated: Option<String>,
    /// Set when the cascade ran past [`CSS_TIME_BUDGET`]: nothing was
    /// applied, the page reads as its markup alone.
    pub read_as_markup: bool,
}

/// Hrefs of the page's `<link rel="stylesheet">` elements, in document order.
pub fn linked_sheet_hrefs(document: &Html) -> Vec<String> {
    let Ok(selector) = Selector::parse("link[href]") else {
        return Vec::new();
    };
    document
        .select(&selector)
        .filter(|link| {
            let rel = link.value().attr("rel").unwrap_or("");
            rel.split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case("stylesheet"))
                && !rel
                    .split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("alternate"))
                && applies_to_screen(link.value().attr("media"))
        })
        .filter_map(|link| link.value().attr("href"))
        .map(|href| href.trim().to_string())
        .filter(|href| !href.is_empty())
        .collect()
}

/// Applies the page's CSS to `document` within [`CSS_TIME_BUDGET`] (see the module docs).
pub fn apply(document: &mut Html, linked: LinkedSheets<'_>) -> Applied {
    apply_within(document, linked, CSS_TIME_BUDGET)
}

/// Like [`apply`], with `budget` for the cascade: past it `document` is left
/// as it is and [`Applied::read_as_markup`] is set.
pub fn apply_within(document: &mut Html, linked: LinkedSheets<'_>, budget: Duration) -> Applied {
    let deadline = Instant::now() + budget;
    let mut applied = Applied::default();
    let rules = Rules::of(document, linked, &mut applied);
    let Some(plan) = plan(document, &rules, linked.complete, deadline, &mut applied) else {
        return Applied {
            truncated: Some(format!(
                "CSS cascade over {} ms; the page was read as markup",
                budget.as_millis()
            )),
            read_as_markup: true,
            ..Applied::default()
        };
    };
    rewrite(document, plan, &mut applied);
    applied
}

fn applies_to_screen(media: Option<&str>) -> bool {
    media.is_none_or(|media| {
        let media = media.to_ascii_lowercase();
        media.trim().is_empty()
            || media.contains("screen")
            || media.contains("all") && !media.contains("print")
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pseudo {
    None,
    Before,
    After,
}

struct Rule {
    selector: Selector,
    specificity: u32,
    pseudo: Pseudo,
    declarations: Rc<[Declaration]>,
}

/// The page's rules, bucketed by what their rightmost compound requires.
#[derive(Default)]
struct Rules {
    rules: Vec<Rule>,
    by_id: HashMap<String, Vec<u32>>,
    by_class: HashMap<String, Vec<u32>>,
    by_tag: HashMap<String, Vec<u32>>,
    any: Vec<u32>,
}

enum Key {
    Id(String),
    Class(String),
    Tag(String),
    Any,
}

impl Rules {
    fn of(document: &Html, linked: LinkedSheets<'_>, applied: &mut Applied) -> Rules {
        let mut budget = MAX_CSS_BYTES;
        let mut raw = Vec::new();
        let mut read = |css: &str, raw: &mut Vec<css::RawRule>, applied: &mut Applied| {
            let css = if css.len() > budget {
                applied.truncated = Some(format!("over {MAX_CSS_BYTES} bytes of CSS"));
                char_prefix(css, budget)
            } else {
                css
            };
            budget -= css.len();
            css::parse_sheet(css, raw, MAX_SELECTORS);
        };
        // Linked sheets come first in the cascade of a typical page (in <head>).
        for sheet in linked.sheets {
            read(sheet, &mut raw, applied);
        }
        if let Ok(styles) = Selector::parse("style") {
            for style in document.select(&styles) {
                if !applies_to_screen(style.value().attr("media")) {
                    continue;
                }
                let text: String = style.text().collect();
                read(&text, &mut raw, applied);
            }
        }
        let mut rules = Rules::default();
        let mut too_complex = 0usize;
        'rules: for rule in raw {
            let declarations: Rc<[Declaration]> = rule.declarations.into();
            for piece in split_selector_list(&rule.selectors) {
                if rules.rules.len() >= MAX_SELECTORS {
                    applied.truncated = Some(format!("over {MAX_SELECTORS} CSS selectors"));
                    break 'rules;
                }
                let Some((text, pseudo)) = strip_pseudo_element(piece) else {
                    continue;
                };
                if !is_cheap(text) {
                    too_complex += 1;
                    continue;
                }
                let Ok(selector) = Selector::parse(if text.is_empty() { "*" } else { text }) else {
                    continue;
                };
                let index = rules.rules.len() as u32;
                match rightmost_key(text) {
                    Key::Id(id) => rules.by_id.entry(id).or_default().push(index),
                    Key::Class(class) => rules.by_class.entry(class).or_default().push(index),
                    Key::Tag(tag) => rules.by_tag.entry(tag).or_default().push(index),
                    Key::Any => rules.any.push(index),
                }
                rules.rules.push(Rule {
                    selector,
                    specificity: specificity(text),
                    pseudo,
                    declarations: declarations.clone(),
                });
            }
        }
        if too_complex > 0 && applied.truncated.is_none() {
            applied.truncated = Some(format!(
                "{too_complex} CSS selectors too costly to match were dropped"
            ));
        }
        rules
    }

    /// Rules that may match `element`, in source order.
    fn candidates(&self, element: &scraper::node::Element, out: &mut Vec<u32>) {
        out.clear();
        if let Some(id) = element.id()
            && let Some(found) = self.by_id.get(id)
        {
            out.extend_from_slice(found);
        }
        for class in element.classes() {
            if let Some(found) = self.by_class.get(class) {
                out.extend_from_slice(found);
            }
        }
        if let Some(found) = self.by_tag.get(element.name()) {
            out.extend_from_slice(found);
        }
        out.extend_from_slice(&self.any);
        out.sort_unstable();
        out.dedup();
    }
}

/// Splits `a, b:is(c, d)` at its top-level commas.
fn split_selector_list(list: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (at, c) in list.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                pieces.push(list.get(start..at).unwrap_or_default().trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    pieces.push(list.get(start..).unwrap_or_default().trim());
    pieces.retain(|piece| !piece.is_empty());
    pieces
}

/// Takes `::before`/`::after` off a selector; `None` for other pseudo-elements
/// (never text a reader sees) and for `:has()` (costly to match).
fn strip_pseudo_element(selector: &str) -> Option<(&str, Pseudo)> {
    let lower = selector.to_ascii_lowercase();
    for (suffix, pseudo) in [
        ("::before", Pseudo::Before),
        ("::after", Pseudo::After),
        (":before", Pseudo::Before),
        (":after", Pseudo::After),
    ] {
        if lower.ends_with(suffix) {
            let text = selector.get(..selector.len() - suffix.len())?.trim_end();
            return (!text.contains("::")).then_some((text, pseudo));
        }
    }
    (!lower.contains("::") && !lower.contains(":has(")).then_some((selector, Pseudo::None))
}

/// Specificity as one number: ids, then classes, attributes and pseudo-classes, then tags.
fn specificity(selector: &str) -> u32 {
    let (mut ids, mut classes, mut tags) = (0u32, 0u32, 0u32);
    let bytes = selector.as_bytes();
    let mut at = 0;
    let mut compound_start = true;
    while at < bytes.len() {
        let c = bytes[at];
        match c {
            b'#' => ids += 1,
            b'.' | b'[' => classes += 1,
            b':' => {
                let rest = &bytes[at + 1..];
                // :not(), :is() count their argument (scanned on), :where() nothing.
                if rest.starts_with(b"where(") {
                    let mut depth = 0;
                    while at < bytes.len() {
                        match bytes[at] {
                            b'(' => depth += 1,
                            b')' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        at += 1;
                    }
                } else if !rest.starts_with(b"not(") && !rest.starts_with(b"is(") {
                    classes += 1;
                }
            }
            b' ' | b'>' | b'+' | b'~' | b'(' | b',' => {
                compound_start = true;
                at += 1;
                continue;
            }
            _ if compound_start && (c.is_ascii_alphabetic() || c >= 0x80) => tags += 1,
            _ => {}
        }
        if c == b'[' {
            while at < bytes.len() && bytes[at] != b']' {
                at += 1;
            }
        }
        compound_start = false;
        at += 1;
    }
    ids.min(255) << 16 | classes.min(255) << 8 | tags.min(255)
}

/// What an element must have for the selector to match it: the first id, class
/// or tag of the rightmost compound (`div.a > p#b` needs id `b`).
fn rightmost_key(selector: &str) -> Key {
    if selector.contains('\\') {
        return Key::Any;
    }
    let (mut depth, mut start) = (0i32, 0);
    for (at, c) in selector.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ' ' | '>' | '+' | '~' if depth == 0 => start = at + 1,
            _ => {}
        }
    }
    let compound = selector.get(start..).unwrap_or_default();
    let ident = |from: usize| -> String {
        compound
            .get(from..)
            .unwrap_or_default()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || !c.is_ascii())
            .collect()
    };
    // Only the compound's own top level: `:not(.x)` requires no class x.
    let (mut depth, mut class, mut id) = (0i32, None, None);
    for (at, c) in compound.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '#' if depth == 0 && id.is_none() => id = Some(ident(at + 1)),
            '.' if depth == 0 && class.is_none() => class = Some(ident(at + 1)),
            _ => {}
        }
    }
    if let Some(id) = id.filter(|id| !id.is_empty()) {
        return Key::Id(id);
    }
    if let Some(class) = class.filter(|class| !class.is_empty()) {
        return Key::Class(class);
    }
    let tag = ident(0);
    if tag.is_empty() {
        Key::Any
    } else {
        Key::Tag(tag.to_ascii_lowercase())
    }
}

/// Whether testing `selector` stays cheap: functional pseudo-classes nested
/// at most [`MAX_SELECTOR_NESTING`] deep, and descendant or sibling
/// combinators on at most [`MAX_COMBINATOR_LEVELS`] levels along any path
/// through the nesting (`div :not(:is(p span))` has two). Conservative:
/// a `+` in `:nth-child(2n + 1)` counts as a combinator.
fn is_cheap(selector: &str) -> bool {
    // Per open level: whether it holds a combinator, and the most levels
    // holding one along a path below it.
    let mut levels: Vec<(bool, usize)> = vec![(false, 0)];
    let (mut quote, mut in_brackets, mut escaped) = (None, false, false);
    let (mut last, mut space) = ('(', false);
    for c in selector.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => in_brackets = true,
            (None, ']') => in_brackets = false,
            _ if in_brackets => {}
            (None, '(') => {
                levels.push((false, 0));
                if levels.len() > MAX_SELECTOR_NESTING + 1 {
                    return false;
                }
            }
            (None, ')') if levels.len() > 1 => close_level(&mut levels),
            (None, '~') => mark_combinator(&mut levels),
            (None, c) if c.is_whitespace() => {
                space = true;
                continue;
            }
            _ => {}
        }
        let after_joint = matches!(last, '(' | ',' | '>' | '+' | '~');
        let before_joint = matches!(c, ')' | ',' | '>' | '+' | '~');
        if space && !after_joint && !before_joint {
            mark_combinator(&mut levels);
        }
        (last, space) = (c, false);
    }
    while levels.len() > 1 {
        close_level(&mut levels);
    }
    let (holds, below) = levels.first().copied().unwrap_or_default();
    usize::from(holds) + below <= MAX_COMBINATOR_LEVELS
}

fn mark_combinator(levels: &mut [(bool, usize)]) {
    if let Some(level) = levels.last_mut() {
        level.0 = true;
    }
}

fn close_level(levels: &mut Vec<(bool, usize)>) {
    if let Some((holds, below)) = levels.pop()
        && let Some(parent) = levels.last_mut()
    {
        parent.1 = parent.1.max(usize::from(holds) + below);
    }
}

/// Precedence of a declaration: `!important`, then origin (hint, sheet,
/// `style=`), then specificity, then source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Precedence {
    important: bool,
    origin: u8,
    specificity: u32,
    order: u32,
}

const HINT: u8 = 0;
const SHEET: u8 = 1;
const INLINE: u8 = 2;

#[derive(Default)]
struct Cascade {
    slots: [Option<(Precedence, Field)>; SLOTS],
}

impl Cascade {
    fn declare(&mut self, declaration: &Declaration, origin: u8, specificity: u32, order: u32) {
        let precedence = Precedence {
            important: declaration.important,
            origin,
            specificity,
            order,
        };
        let slot = &mut self.slots[declaration.field.slot()];
        if slot.as_ref().is_none_or(|(held, _)| *held <= precedence) {
            *slot = Some((precedence, declaration.field.clone()));
        }
    }

    fn get(&self, slot: usize) -> Option<&Field> {
        self.slots[slot].as_ref().map(|(_, field)| field)
    }

    fn display(&self) -> Option<Display> {
        match self.get(0) {
            Some(Field::Display(display)) => Some(*display),
            _ => None,
        }
    }

    /// Whether the element and everything in it is out of sight. `block` says
    /// the element is a box by default (sizes and indents do not apply to
    /// inline elements).
    fn removes_subtree(&self, block: bool) -> bool {
        let flag = |slot| {
            matches!(
                self.get(slot),
                Some(
                    Field::Transparent(true)
                        | Field::Clipped(true)
                        | Field::OutOfFlow(true)
                        | Field::ZeroWidth(true)
                        | Field::ZeroHeight(true)
                        | Field::OverflowHidden(true)
                )
            )
        };
        let px = |slot| match self.get(slot) {
            Some(Field::Left(v) | Field::Top(v) | Field::TextIndent(v)) => Some(*v),
            _ => None,
        };
        let far = |slot| px(slot).is_some_and(|v| v <= OFF_SCREEN_PX);
        let boxed = flag(4)
            || match self.display() {
                Some(Display::Inline) => false,
                Some(_) => true,
                None => block,
            };
        self.display() == Some(Display::None)
            || flag(3) // opacity 0
            || flag(7) // clipped
            || (flag(4) && (far(5) || far(6))) // absolute and off-screen
            || (boxed && (flag(8) || flag(9)) && flag(10)) // zero-size box hiding overflow
            || (boxed && far(11) && flag(10)) // text indented out of a box hiding overflow
    }
}

/// Inherited state that decides whether text is seen.
#[derive(Clone, Copy)]
struct Inherited {
    invisible: bool,
    zero_font: bool,
    color: Option<Rgba>,
    /// The colour under the text; `None` when unknown.
    background: Option<Rgba>,
}

impl Inherited {
    fn child(self, cascade: &Cascade, complete: bool) -> Inherited {
        let invisible = match cascade.get(1) {
            Some(Field::Hidden(hidden)) => *hidden,
            _ => self.invisible,
        };
        let zero_font = match cascade.get(2) {
            Some(Field::FontSize(FontSize::Zero)) => true,
            Some(Field::FontSize(FontSize::Absolute)) => false,
            // A size relative to zero, or none given: inherited, when every
            // sheet that could set a size was read.
            _ => self.zero_font && complete,
        };
        let color = match cascade.get(12) {
            Some(Field::Color(color)) => Some(*color),
            _ => self.color,
        };
        let background = match cascade.get(13) {
            Some(Field::Background(Background::Color(color))) if color.a >= 0.5 => Some(*color),
            Some(Field::Background(Background::Unknown)) => None,
            _ => self.background,
        };
        Inherited {
            invisible,
            zero_font,
            color,
            background,
        }
    }

    fn text_seen(&self) -> bool {
        let blends = match (self.color, self.background) {
            (Some(color), _) if color.a < 0.1 => true,
            (Some(color), Some(background)) => color.blends_into(background),
            _ => false,
        };
        !self.invisible && !self.zero_font && !blends
    }
}

#[derive(Default)]
struct Plan {
    remove: Vec<NodeId>,
    flex_containers: Vec<NodeId>,
    order: HashMap<NodeId, i32>,
    before: Vec<(NodeId, String)>,
    after: Vec<(NodeId, String)>,
    glyphs: Vec<(NodeId, String)>,
}

/// What applying the rules to `document` would change; `None` past `deadline`.
fn plan(
    document: &Html,
    rules: &Rules,
    complete: bool,
    deadline: Instant,
    applied: &mut Applied,
) -> Option<Plan> {
    let mut plan = Plan::default();
    let root = Inherited {
        invisible: false,
        zero_font: false,
        color: None,
        background: complete.then_some(Rgba::WHITE),
    };
    let mut stack: Vec<Inherited> = vec![root];
    let mut removed_depth = 0usize;
    let mut candidates = Vec::new();
    let mut tests = 0usize;
    let mut order = 0u32;
    let mut glyph_names: HashMap<String, char> = HashMap::new();
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => {
                    if removed_depth > 0 {
                        removed_depth += 1;
                        continue;
                    }
                    let parent = *stack.last().unwrap_or(&root);
                    let mut cascade = Cascade::default();
                    let mut before = Cascade::default();
                    let mut after = Cascade::default();
                    hints(element, &mut cascade);
                    if tests < MAX_MATCH_TESTS && !rules.rules.is_empty() {
                        rules.candidates(element, &mut candidates);
                        let element_ref = ElementRef::wrap(node).expect("an element node");
                        for &index in &candidates {
                            tests += 1;
                            // One clock read per test: a test costs far more (see is_cheap).
                            if Instant::now() >= deadline {
                                return None;
                            }
                            let rule = &rules.rules[index as usize];
                            if !rule.selector.matches(&element_ref) {
                                continue;
                            }
                            let target = match rule.pseudo {
                                Pseudo::None => &mut cascade,
                                Pseudo::Before => &mut before,
                                Pseudo::After => &mut after,
                            };
                            for declaration in rule.declarations.iter() {
                                target.declare(declaration, SHEET, rule.specificity, index);
                            }
                        }
                        if tests >= MAX_MATCH_TESTS {
                            applied.truncated =
                                Some(format!("over {MAX_MATCH_TESTS} CSS selector tests"));
                        }
                    }
                    if let Some(style) = element.attr("style") {
                        for declaration in css::parse_inline(style) {
                            order += 1;
                            cascade.declare(&declaration, INLINE, 0, order);
                        }
                    }
                    if cascade.removes_subtree(is_block_box(element.name())) {
                        plan.remove.push(node.id());
                        removed_depth = 1;
                        continue;
                    }
                    let state = parent.child(&cascade, complete);
                    if cascade.display() == Some(Display::Flexible) {
                        plan.flex_containers.push(node.id());
                    }
                    if let Some(Field::Order(n)) = cascade.get(15)
                        && *n != 0
                    {
                        plan.order.insert(node.id(), *n);
                    }
                    for (pseudo, out) in [(&before, &mut plan.before), (&after, &mut plan.after)] {
                        if let Some(Field::Content(Some(text))) = pseudo.get(14)
                            && !text.trim().is_empty()
                            && !pseudo.removes_subtree(false)
                            && state.child(pseudo, complete).text_seen()
                        {
                            out.push((node.id(), text.clone()));
                        }
                    }
                    if element.name() == "img"
                        && let Some(text) = glyph(node, &mut glyph_names)
                    {
                        plan.glyphs.push((node.id(), text));
                    }
                    stack.push(state);
                }
                Node::Text(text) if removed_depth == 0 => {
                    let seen = stack.last().is_none_or(Inherited::text_seen);
                    if !seen && !text.trim().is_empty() {
                        plan.remove.push(node.id());
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if !matches!(node.value(), Node::Element(_)) {
                    continue;
                }
                if removed_depth > 0 {
                    removed_depth -= 1;
                    continue;
                }
                stack.pop();
            }
        }
    }
    Some(plan)
}

/// HTML's own presentational hints: the `hidden` attribute, `<font color>`, `bgcolor`.
fn hints(element: &scraper::node::Element, cascade: &mut Cascade) {
    let hint = |field| Declaration {
        field,
        important: false,
    };
    if element.attr("hidden").is_some() {
        cascade.declare(&hint(Field::Display(Display::None)), HINT, 0, 0);
    }
    let colour = |attr: &str| {
        css::parse_inline(&format!("color:{attr}"))
            .into_iter()
            .find_map(|d| match d.field {
                Field::Color(c) => Some(c),
                _ => None,
            })
    };
    if element.name() == "font"
        && let Some(color) = element.attr("color").and_then(colour)
    {
        cascade.declare(&hint(Field::Color(color)), HINT, 0, 0);
    }
    if let Some(color) = element.attr("bgcolor").and_then(colour) {
        cascade.declare(
            &hint(Field::Background(Background::Color(color))),
            HINT,
            0,
            0,
        );
    }
}

/// The text an image stands for when it is drawn in place of one character:
/// inline between characters of a text run, not a link, no picture's size.
/// Its one-character `alt`, else the name `names` gives its `src`.
fn glyph(node: ego_tree::NodeRef<'_, Node>, names: &mut HashMap<String, char>) -> Option<String> {
    let Node::Element(img) = node.value() else {
        return None;
    };
    let size = |name| {
        img.attr(name)
            .and_then(|v| v.trim_end_matches("px").trim().parse::<u32>().ok())
    };
    if size("width").is_some_and(|w| w > MAX_GLYPH_PX)
        || size("height").is_some_and(|h| h > MAX_GLYPH_PX)
    {
        return None;
    }
    if node
        .ancestors()
        .any(|a| matches!(a.value(), Node::Element(e) if e.name() == "a"))
    {
        return None;
    }
    let text_of = |sibling: Option<ego_tree::NodeRef<'_, Node>>| match sibling.map(|s| s.value()) {
        Some(Node::Text(text)) => Some(text.to_string()),
        Some(Node::Element(e)) if e.name() == "img" => Some(String::from(GLYPH_PLACEHOLDER)),
        _ => None,
    };
    let before = text_of(node.prev_sibling());
    let after = text_of(node.next_sibling());
    let joins = |c: Option<char>| c.is_some_and(|c| !c.is_whitespace());
    let cjk = |c: Option<char>| c.is_some_and(|c| c as u32 >= 0x2E80);
    let last = before.as_deref().and_then(|t| t.chars().next_back());
    let first = after.as_deref().and_then(|t| t.chars().next());
    let inline = (joins(last) || before.is_none()) && joins(first) && (cjk(last) || cjk(first));
    if !inline {
        return None;
    }
    let alt = img.attr("alt").unwrap_or("").trim();
    if alt.chars().count() == 1 {
        return Some(alt.to_string());
    }
    // Lazy-loading pages keep the real picture in a data attribute.
    let src = ["data-src", "data-original", "src"]
        .into_iter()
        .find_map(|name| img.attr(name).map(str::trim).filter(|v| !v.is_empty()))
        .unwrap_or("");
    let next = names.len();
    let name = match names.get(src) {
        Some(&name) => name,
        None if !src.is_empty() && next < MAX_NAMED_GLYPHS => {
            let name =
                char::from_u32(FIRST_NAMED_GLYPH as u32 + next as u32).unwrap_or(GLYPH_PLACEHOLDER);
            names.insert(src.to_string(), name);
            name
        }
        None => GLYPH_PLACEHOLDER,
    };
    Some(String::from(name))
}

fn text_node(text: &str) -> Node {
    Node::Text(scraper::node::Text { text: text.into() })
}

fn rewrite(document: &mut Html, plan: Plan, applied: &mut Applied) {
    let tree = &mut document.tree;
    for container in plan.flex_containers {
        let Some(node) = tree.get(container) else {
            continue;
        };
        let mut items: Vec<(i32, usize, NodeId)> = node
            .children()
            .enumerate()
            .map(|(at, child)| {
                (
                    plan.order.get(&child.id()).copied().unwrap_or(0),
                    at,
                    child.id(),
                )
            })
            .collect();
        if items.iter().all(|(order, _, _)| *order == 0) {
            continue;
        }
        items.sort_unstable();
        let Some(mut parent) = tree.get_mut(container) else {
            continue;
        };
        for (_, _, child) in items {
            parent.append_id(child);
        }
        applied.reordered += 1;
    }
    for (id, text) in plan.before {
        if let Some(mut node) = tree.get_mut(id) {
            node.prepend(text_node(&text));
            applied.generated += 1;
        }
    }
    for (id, text) in plan.after {
        if let Some(mut node) = tree.get_mut(id) {
            node.append(text_node(&text));
            applied.generated += 1;
        }
    }
    for (id, text) in plan.glyphs {
        if let Some(mut node) = tree.get_mut(id) {
            node.insert_before(text_node(&text));
            node.detach();
            applied.glyphs += 1;
        }
    }
    let removed: HashSet<NodeId> = plan.remove.into_iter().collect();
    for id in &removed {
        if let Some(mut node) = tree.get_mut(*id) {
            node.detach();
        }
    }
    applied.hidden = removed.len();
}

#[cfg(test)]
#[path = "style_test.rs"]
mod tests;
