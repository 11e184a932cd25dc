//! Style sheets read into the few declarations that decide what a reader sees.
//!
//! cssparser tokenizes (comments, escapes, nested blocks, error recovery as
//! browsers do); every declaration that cannot change visibility, order or
//! generated text is dropped here, so template sheets of thousands of layout
//! rules cost one tokenizer pass and no selector matching.

use cssparser::{
    AtRuleParser, CowRcStr, DeclarationParser, ParseError, Parser, ParserState,
    QualifiedRuleParser, RuleBodyItemParser, RuleBodyParser, StyleSheetParser, Token,
};

/// Nesting of functions read inside one value (`rgb(...)`, `calc(...)`).
const MAX_VALUE_DEPTH: usize = 3;
/// Tokens read per declaration value.
const MAX_VALUE_TOKENS: usize = 64;
/// Characters of generated content (`content: "..."`) kept per rule.
pub const MAX_CONTENT_CHARS: usize = 256;
/// `@media` / `@supports` blocks nested in each other that are read.
const MAX_AT_RULE_DEPTH: usize = 4;

/// A colour, alpha 0..=1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: f32,
}

impl Rgba {
    pub const WHITE: Rgba = Rgba {
        r: 255,
        g: 255,
        b: 255,
        a: 1.0,
    };

    /// Whether text in `self` cannot be told apart from `background`.
    pub fn blends_into(self, background: Rgba) -> bool {
        if self.a < 0.1 {
            return true;
        }
        let close = |x: u8, y: u8| x.abs_diff(y) <= 12;
        close(self.r, background.r) && close(self.g, background.g) && close(self.b, background.b)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Display {
    None,
    /// flex, inline-flex, grid, inline-grid: children follow `order`.
    Flexible,
    Inline,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FontSize {
    Zero,
    /// Relative to the parent's size (`em`, `%`, `smaller`), not zero.
    Relative,
    /// An absolute, non-zero size (`px`, `pt`, `rem`, keywords).
    Absolute,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Background {
    Color(Rgba),
    /// An image or gradient: the colour under the text is unknown.
    Unknown,
}

/// One declaration that matters to visibility, with its property as the variant.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Display(Display),
    /// `visibility`: true when hidden or collapsed.
    Hidden(bool),
    FontSize(FontSize),
    /// `opacity` is (close to) zero.
    Transparent(bool),
    /// `position: absolute | fixed`.
    OutOfFlow(bool),
    /// `left` / `top` in px, when a length.
    Left(f32),
    Top(f32),
    /// `clip: rect(0 0 0 0)`, `clip-path: inset(50%)`, `transform: scale(0)` or a far translation.
    Clipped(bool),
    /// `width: 0` / `height: 0` / `max-width: 0`, `max-height: 0`.
    ZeroWidth(bool),
    ZeroHeight(bool),
    OverflowHidden(bool),
    /// `text-indent` in px, when a length.
    TextIndent(f32),
    Color(Rgba),
    Background(Background),
    /// `content` of a `::before` / `::after`; `None` for `none`/`normal`.
    Content(Option<String>),
    Order(i32),
}

/// Number of distinct [`Field`] kinds: slots of a cascade.
pub const SLOTS: usize = 16;

impl Field {
    pub fn slot(&self) -> usize {
        match self {
            Field::Display(_) => 0,
            Field::Hidden(_) => 1,
            Field::FontSize(_) => 2,
            Field::Transparent(_) => 3,
            Field::OutOfFlow(_) => 4,
            Field::Left(_) => 5,
            Field::Top(_) => 6,
            Field::Clipped(_) => 7,
            Field::ZeroWidth(_) => 8,
            Field::ZeroHeight(_) => 9,
            Field::OverflowHidden(_) => 10,
            Field::TextIndent(_) => 11,
            Field::Color(_) => 12,
            Field::Background(_) => 13,
            Field::Content(_) => 14,
            Field::Order(_) => 15,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub field: Field,
    pub important: bool,
}

/// A style rule as written: its selector list (unsplit) and what it declares.
#[derive(Debug)]
pub struct RawRule {
    pub selectors: String,
    pub declarations: Vec<Declaration>,
}

/// Reads the style rules of a sheet that declare something relevant.
/// `@media` blocks that apply to a desktop screen are read, others skipped.
pub fn parse_sheet(css: &str, out: &mut Vec<RawRule>, max_rules: usize) {
    let mut parser = Parser::new(css);
    let mut rules = SheetParser {
        out,
        max_rules,
        depth: 0,
    };
    // Past `max_rules` the rest is only tokenized (the CSS is byte-bounded).
    StyleSheetParser::new(&mut parser, &mut rules).for_each(drop);
}

/// Reads a `style="..."` attribute.
pub fn parse_inline(style: &str) -> Vec<Declaration> {
    let mut parser = Parser::new(style);
    declarations(&mut parser)
}

fn declarations<'i>(input: &mut Parser<'i>) -> Vec<Declaration> {
    let mut reader = DeclarationReader;
    RuleBodyParser::new(input, &mut reader)
        .filter_map(|item| item.ok().flatten())
        .collect()
}

struct SheetParser<'a> {
    out: &'a mut Vec<RawRule>,
    max_rules: usize,
    depth: usize,
}

impl<'i> QualifiedRuleParser<'i> for SheetParser<'_> {
    type Prelude = String;
    type QualifiedRule = ();
    type Error = ();

    fn parse_prelude(&mut self, input: &mut Parser<'i>) -> Result<String, ParseError<()>> {
        let start = input.position();
        while input.next_including_whitespace_and_comments().is_ok() {}
        Ok(input.slice_from(start).trim().to_string())
    }

    fn parse_block(
        &mut self,
        selectors: String,
        _start: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<(), ParseError<()>> {
        let declarations = declarations(input);
        if !declarations.is_empty() && self.out.len() < self.max_rules {
            self.out.push(RawRule {
                selectors,
                declarations,
            });
        }
        Ok(())
    }
}

impl<'i> AtRuleParser<'i> for SheetParser<'_> {
    /// Whether the block applies to a desktop screen.
    type Prelude = bool;
    type AtRule = ();
    type Error = ();

    fn parse_prelude(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
    ) -> Result<bool, ParseError<()>> {
        let start = input.position();
        while input.next_including_whitespace_and_comments().is_ok() {}
        let query = input.slice_from(start).to_ascii_lowercase();
        let applies = match &*name.to_ascii_lowercase() {
            // Print, mobile-only and small-screen blocks are not what a reader
            // at a screen sees.
            "media" => {
                !query.contains("print")
                    && !query.contains("max-width")
                    && !query.contains("max-device-width")
                    && !query.contains("speech")
                    && !query.contains("not ")
            }
            "supports" | "layer" | "scope" | "container" => true,
            _ => false,
        };
        Ok(applies)
    }

    fn rule_without_block(&mut self, _: bool, _: &ParserState) -> Result<(), ()> {
        Ok(())
    }

    fn parse_block(
        &mut self,
        applies: bool,
        _start: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<(), ParseError<()>> {
        if applies && self.depth < MAX_AT_RULE_DEPTH {
            self.depth += 1;
            let mut nested = SheetParser {
                out: &mut *self.out,
                max_rules: self.max_rules,
                depth: self.depth,
            };
            StyleSheetParser::new(input, &mut nested).for_each(drop);
            self.depth -= 1;
        }
        Ok(())
    }
}

/// Reads declarations; `None` for the ones that cannot matter.
struct DeclarationReader;

impl<'i> DeclarationParser<'i> for DeclarationReader {
    type Declaration = Option<Declaration>;
    type Error = ();

    fn parse_value(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
        _start: &ParserState,
    ) -> Result<Option<Declaration>, ParseError<()>> {
        let property = name.to_ascii_lowercase();
        if !RELEVANT.contains(&property.as_str()) {
            while input.next().is_ok() {}
            return Ok(None);
        }
        let mut values = Vec::new();
        read_values(input, &mut values, 0);
        let important = values.ends_with(&[V::Bang, V::Ident("important".into())]);
        if important {
            values.truncate(values.len() - 2);
        }
        Ok(field(&property, &values).map(|field| Declaration { field, important }))
    }
}

impl<'i> AtRuleParser<'i> for DeclarationReader {
    type Prelude = ();
    type AtRule = Option<Declaration>;
    type Error = ();
}

impl<'i> QualifiedRuleParser<'i> for DeclarationReader {
    type Prelude = ();
    type QualifiedRule = Option<Declaration>;
    type Error = ();
}

impl<'i> RuleBodyItemParser<'i, Option<Declaration>, ()> for DeclarationReader {
    fn parse_declarations(&self) -> bool {
        true
    }
    fn parse_qualified(&self) -> bool {
        false
    }
}

const RELEVANT: &[&str] = &[
    "display",
    "visibility",
    "font-size",
    "font",
    "opacity",
    "position",
    "left",
    "top",
    "clip",
    "clip-path",
    "transform",
    "width",
    "height",
    "max-width",
    "max-height",
    "overflow",
    "overflow-x",
    "overflow-y",
    "text-indent",
    "color",
    "background",
    "background-color",
    "content",
    "order",
];

/// A value token, owned and simplified.
#[derive(Clone, Debug, PartialEq)]
enum V {
    Ident(String),
    Number(f32),
    Dimension(f32, String),
    Percentage(f32),
    Str(String),
    Hash(String),
    Function(String, Vec<V>),
    Url,
    Bang,
    Comma,
    Other,
}

fn read_values<'i>(input: &mut Parser<'i>, out: &mut Vec<V>, depth: usize) {
    while out.len() < MAX_VALUE_TOKENS {
        let Ok(token) = input.next() else { return };
        let value = match token {
            Token::Ident(name) => V::Ident(name.to_ascii_lowercase()),
            Token::Number { value, .. } => V::Number(*value),
            Token::Dimension { value, unit, .. } => V::Dimension(*value, unit.to_ascii_lowercase()),
            Token::Percentage { unit_value, .. } => V::Percentage(*unit_value * 100.0),
            Token::QuotedString(text) => V::Str(text.chars().take(MAX_CONTENT_CHARS).collect()),
            Token::Hash(hex) | Token::IDHash(hex) => V::Hash(hex.to_string()),
            Token::UnquotedUrl(_) => V::Url,
            Token::Delim('!') => V::Bang,
            Token::Comma => V::Comma,
            Token::Function(name) => {
                let name = name.to_ascii_lowercase();
                if name == "url" {
                    let _ = input.parse_nested_block(|nested| {
                        while nested.next().is_ok() {}
                        Ok::<(), ParseError<()>>(())
                    });
                    V::Url
                } else {
                    let mut inner = Vec::new();
                    let _ = input.parse_nested_block(|nested| {
                        if depth < MAX_VALUE_DEPTH {
                            read_values(nested, &mut inner, depth + 1);
                        }
                        while nested.next().is_ok() {}
                        Ok::<(), ParseError<()>>(())
                    });
                    V::Function(name, inner)
                }
            }
            _ => V::Other,
        };
        out.push(value);
    }
    while input.next().is_ok() {}
}

/// A length in CSS px, when `value` is one (unitless zero included).
fn px(value: &V) -> Option<f32> {
    match value {
        V::Number(n) if *n == 0.0 => Some(0.0),
        V::Dimension(n, unit) => match unit.as_str() {
            "px" => Some(*n),
            "em" | "rem" => Some(n * 16.0),
            "pt" => Some(n * 4.0 / 3.0),
            "pc" => Some(n * 16.0),
            "in" => Some(n * 96.0),
            "cm" => Some(n * 96.0 / 2.54),
            "mm" => Some(n * 96.0 / 25.4),
            "vw" | "vh" => Some(n * 10.0),
            _ => None,
        },
        _ => None,
    }
}

fn is_zero(value: &V) -> bool {
    match value {
        V::Number(n) | V::Percentage(n) | V::Dimension(n, _) => *n == 0.0,
        _ => false,
    }
}

fn field(property: &str, values: &[V]) -> Option<Field> {
    let first = values.first()?;
    let ident = |name: &str| values.iter().any(|v| *v == V::Ident(name.into()));
    Some(match property {
        "display" => Field::Display(match first {
            V::Ident(name) => match name.as_str() {
                "none" => Display::None,
                "flex" | "inline-flex" | "grid" | "inline-grid" => Display::Flexible,
                "inline" => Display::Inline,
                _ => Display::Other,
            },
            _ => return None,
        }),
        "visibility" => Field::Hidden(ident("hidden") || ident("collapse")),
        "font-size" => Field::FontSize(font_size(first)?),
        // The shorthand's size is the token before the family (or before `/`).
        "font" => Field::FontSize(
            values
                .iter()
                .find_map(|v| match v {
                    V::Number(_) | V::Dimension(..) | V::Percentage(_) => font_size(v),
                    _ => None,
                })
                .unwrap_or(FontSize::Absolute),
        ),
        "opacity" => Field::Transparent(match first {
            V::Number(n) => *n <= 0.02,
            V::Percentage(n) => *n <= 2.0,
            _ => return None,
        }),
        "position" => Field::OutOfFlow(ident("absolute") || ident("fixed")),
        "left" => Field::Left(px(first)?),
        "top" => Field::Top(px(first)?),
        "clip" => Field::Clipped(match first {
            V::Function(name, args) if name == "rect" => {
                let lengths: Vec<f32> = args.iter().filter_map(px).collect();
                // rect(top right bottom left): nothing left between the edges.
                lengths.len() == 4 && (lengths[2] <= lengths[0] || lengths[1] <= lengths[3])
            }
            _ => false,
        }),
        "clip-path" => Field::Clipped(match first {
            V::Function(name, args) if name == "inset" => args.iter().any(|v| match v {
                V::Percentage(p) => *p >= 50.0,
                _ => false,
            }),
            V::Function(name, args) if name == "circle" => args.first().is_some_and(is_zero),
            _ => false,
        }),
        "transform" => Field::Clipped(values.iter().any(|v| match v {
            V::Function(name, args) => match name.as_str() {
                "scale" | "scalex" | "scaley" => args.iter().any(is_zero),
                "translate" | "translatex" | "translatey" | "translate3d" => {
                    args.iter().filter_map(px).any(|d| d.abs() >= 2000.0)
                }
                _ => false,
            },
            _ => false,
        })),
        "width" | "max-width" => Field::ZeroWidth(is_zero(first)),
        "height" | "max-height" => Field::ZeroHeight(is_zero(first)),
        "overflow" | "overflow-x" | "overflow-y" => {
            Field::OverflowHidden(ident("hidden") || ident("clip"))
        }
        "text-indent" => Field::TextIndent(px(first)?),
        "color" => Field::Color(color(first)?),
        "background-color" => Field::Background(Background::Color(color(first)?)),
        "background" => Field::Background(
            if values.iter().any(|v| {
                matches!(v, V::Url)
                    || matches!(v, V::Function(name, _) if name.contains("gradient"))
            }) {
                Background::Unknown
            } else {
                match values.iter().find_map(color) {
                    Some(colour) => Background::Color(colour),
                    None if ident("none") => Background::Color(Rgba {
                        a: 0.0,
                        ..Rgba::WHITE
                    }),
                    None => return None,
                }
            },
        ),
        "content" => Field::Content(match first {
            V::Ident(name) if name == "none" || name == "normal" => None,
            _ => {
                let text: String = values
                    .iter()
                    .filter_map(|v| match v {
                        V::Str(s) => Some(s.as_str()),
                        _ => None,
                    })
                    .collect::<String>()
                    .chars()
                    .take(MAX_CONTENT_CHARS)
                    .collect();
                Some(text)
            }
        }),
        "order" => Field::Order(match first {
            V::Number(n) if n.fract() == 0.0 => n.clamp(-1e6, 1e6) as i32,
            _ => return None,
        }),
        _ => return None,
    })
}

fn font_size(value: &V) -> Option<FontSize> {
    if is_zero(value) {
        return Some(FontSize::Zero);
    }
    Some(match value {
        V::Dimension(n, unit) if *n < 0.0 => {
            let _ = unit;
            return None;
        }
        V::Dimension(_, unit) if unit == "em" || unit == "ex" || unit == "ch" => FontSize::Relative,
        V::Percentage(_) => FontSize::Relative,
        V::Ident(name) if name == "smaller" || name == "larger" => FontSize::Relative,
        V::Ident(name) if name == "inherit" || name == "unset" => return None,
        V::Dimension(..) | V::Ident(_) => FontSize::Absolute,
        _ => return None,
    })
}

fn color(value: &V) -> Option<Rgba> {
    match value {
        V::Hash(hex) => {
            let (r, g, b, a) = cssparser::color::parse_hash_color(hex.as_bytes()).ok()?;
            Some(Rgba { r, g, b, a })
        }
        V::Ident(name) if name == "transparent" => Some(Rgba {
            a: 0.0,
            ..Rgba::WHITE
        }),
        V::Ident(name) => {
            let (r, g, b) = cssparser::color::parse_named_color(name).ok()?;
            Some(Rgba { r, g, b, a: 1.0 })
        }
        V::Function(name, args) if name == "rgb" || name == "rgba" => {
            let numbers: Vec<(f32, bool)> = args
                .iter()
                .filter_map(|v| match v {
                    V::Number(n) => Some((*n, false)),
                    V::Percentage(p) => Some((*p, true)),
                    _ => None,
                })
                .collect();
            if numbers.len() < 3 {
                return None;
            }
            let channel = |(n, percent): (f32, bool)| {
                let n = if percent { n * 2.55 } else { n };
                n.round().clamp(0.0, 255.0) as u8
            };
            let a = numbers.get(3).map_or(1.0, |&(n, percent)| {
                (if percent { n / 100.0 } else { n }).clamp(0.0, 1.0)
            });
            Some(Rgba {
                r: channel(numbers[0]),
                g: channel(numbers[1]),
                b: channel(numbers[2]),
                a,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(css: &str) -> Vec<Field> {
        parse_inline(css).into_iter().map(|d| d.field).collect()
    }

    #[test]
    fn reads_the_declarations_that_hide_text() {
        assert_eq!(
            fields("display:none!important; font-size:0px; visibility: hidden; opacity:0"),
            vec![
                Field::Display(Display::None),
                Field::FontSize(FontSize::Zero),
                Field::Hidden(true),
                Field::Transparent(true),
            ]
        );
        assert!(parse_inline("display:none !important")[0].important);
        assert_eq!(
            fields("position:absolute;left:-9999px;top:-50em"),
            vec![
                Field::OutOfFlow(true),
                Field::Left(-9999.0),
                Field::Top(-800.0)
            ]
        );
        assert_eq!(
            fields("clip:rect(0 0 0 0);clip-path:inset(50%);transform:scale(0)"),
            vec![Field::Clipped(true); 3]
        );
        assert_eq!(
            fields("color:#fff;background:#FFFFFF url(x.png)"),
            vec![
                Field::Color(Rgba::WHITE),
                Field::Background(Background::Unknown)
            ]
        );
        assert_eq!(
            fields("color: rgba(0, 0, 0, 0); background-color: white"),
            vec![
                Field::Color(Rgba {
                    r: 0,
                    g: 0,
                    b: 0,
                    a: 0.0
                }),
                Field::Background(Background::Color(Rgba::WHITE))
            ]
        );
        assert_eq!(fields("order:-3"), vec![Field::Order(-3)]);
        assert_eq!(fields("margin:0;float:left;line-height:0"), vec![]);
    }

    #[test]
    fn sheets_keep_relevant_rules_and_screen_media() {
        let mut rules = Vec::new();
        parse_sheet(
            "/* c */ .a, p > i { display : none } .b{margin:0} \
             @media print { .c{display:none} } @media screen { .d{font-size:0} } \
             @import url(x.css); .e::before{content:\"前\" \"言\"} broken { ; } .f{color:red}",
            &mut rules,
            100,
        );
        let selectors: Vec<&str> = rules.iter().map(|r| r.selectors.as_str()).collect();
        assert_eq!(selectors, [".a, p > i", ".d", ".e::before", ".f"]);
        assert_eq!(
            rules[2].declarations[0].field,
            Field::Content(Some("前言".into()))
        );
    }

    #[test]
    fn garbage_and_unbalanced_sheets_end() {
        let mut rules = Vec::new();
        parse_sheet("{{{{ .a{display:none", &mut rules, 10);
        parse_sheet(&"(".repeat(100_000), &mut rules, 10);
        parse_sheet("\u{0}\u{feff}.x{display:none}", &mut rules, 10);
        assert!(rules.len() <= 2);
    }

    #[test]
    fn blending_colours_hide_text() {
        let near_white = Rgba {
            r: 250,
            g: 250,
            b: 252,
            a: 1.0,
        };
        assert!(near_white.blends_into(Rgba::WHITE));
        assert!(
            !Rgba {
                r: 51,
                g: 51,
                b: 51,
                a: 1.0
            }
            .blends_into(Rgba::WHITE)
        );
    }
}
