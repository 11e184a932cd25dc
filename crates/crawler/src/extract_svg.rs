//! Text drawn as inline SVG: `<text>` and `<tspan>` pieces put in reading order.
//!
//! Sites draw chapters as SVG so that scrapers that skip `<svg>` see nothing,
//! and the harder ones write the pieces of a line in shuffled source order,
//! each placed by its `x`/`y` attributes. What a reader sees is horizontal
//! text read line by line, so every piece gets its position (its own `x`/`y`,
//! else the enclosing `<text>`'s, else just after the previous piece), pieces
//! are grouped in lines by `y` (within half the font size) and read by `x`.
//! Each `<svg>` is replaced in the tree by one text node holding its lines
//! joined (a paragraph wrapped over lines reads as one), so the extractor
//! scores and renders it like any other text. Pieces inside `<defs>`,
//! `<title>`, `<desc>`, `<style>` and `<script>` are not drawn and are dropped.
//!
//! Bounded: at most [`MAX_SVG_PIECES`] pieces per page are placed; past that
//! the rest of the page's SVG text is read in source order.

use ego_tree::NodeId;
use ego_tree::iter::Edge;
use scraper::{Html, Node};

/// Positioned pieces sorted per page; past this, pieces keep source order.
pub const MAX_SVG_PIECES: usize = 200_000;
/// Font size assumed when neither the `<svg>` nor the `<text>` declares one.
const DEFAULT_FONT_SIZE: f32 = 16.0;
/// Advance given to a piece without its own `x`, after the previous piece.
const FOLLOWING_PIECE_STEP: f32 = 1e-3;

/// One run of characters and where it is drawn.
struct Piece {
    x: f32,
    y: f32,
    order: usize,
    line: usize,
    text: String,
}

/// What an open element sets for the pieces inside it.
struct Frame {
    x: Option<f32>,
    y: Option<f32>,
    font_size: Option<f32>,
    /// Inside `<defs>`, `<title>` and the like: not drawn.
    hidden: bool,
}

/// Replaces every `<svg>` element holding text by one text node of its text
/// in reading order; returns how many were replaced.
pub(crate) fn inline_svg_text(document: &mut Html) -> usize {
    let svg_ids: Vec<NodeId> = outermost_svgs(document);
    let mut budget = MAX_SVG_PIECES;
    let mut replaced = 0;
    for svg_id in svg_ids {
        let text = svg_reading_text(document, svg_id, &mut budget);
        let Some(mut node) = document.tree.get_mut(svg_id) else {
            continue;
        };
        if !text.is_empty() {
            node.insert_before(Node::Text(scraper::node::Text {
                text: text.as_str().into(),
            }));
            replaced += 1;
        }
        node.detach();
    }
    replaced
}

/// Returns the `<svg>` elements not nested in another `<svg>`.
fn outermost_svgs(document: &Html) -> Vec<NodeId> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(node) => {
                if is_element(node.value(), "svg") {
                    if depth == 0 {
                        found.push(node.id());
                    }
                    depth += 1;
                }
            }
            Edge::Close(node) => {
                if is_element(node.value(), "svg") {
                    depth = depth.saturating_sub(1);
                }
            }
        }
    }
    found
}

fn is_element(node: &Node, name: &str) -> bool {
    matches!(node, Node::Element(element) if element.name().eq_ignore_ascii_case(name))
}

/// Returns the text of one `<svg>` in reading order: lines top to bottom,
/// pieces left to right, lines joined without separator.
fn svg_reading_text(document: &Html, svg_id: NodeId, budget: &mut usize) -> String {
    let Some(svg) = document.tree.get(svg_id) else {
        return String::new();
    };
    let svg_font_size = font_size_of(svg.value());
    let mut pieces: Vec<Piece> = Vec::new();
    let mut positions: Vec<Frame> = Vec::new();
    let mut last_x = 0.0f32;
    let mut piece_x_taken = false;
    let mut font_size = svg_font_size.unwrap_or(DEFAULT_FONT_SIZE);
    for edge in svg.traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => {
                    let name = element.name();
                    let hidden = matches!(
                        name.to_ascii_lowercase().as_str(),
                        "defs" | "title" | "desc" | "style" | "script" | "metadata"
                    ) || positions.last().is_some_and(|frame| frame.hidden);
                    let x = first_number(element.attr("x"));
                    let y = first_number(element.attr("y"));
                    if x.is_some() {
                        piece_x_taken = false;
                    }
                    positions.push(Frame {
                        x,
                        y,
                        font_size: font_size_of(node.value()),
                        hidden,
                    });
                }
                Node::Text(text) => {
                    if positions.last().is_some_and(|frame| frame.hidden) || text.trim().is_empty()
                    {
                        continue;
                    }
                    let own_x = positions.iter().rev().find_map(|frame| frame.x);
                    let y = positions
                        .iter()
                        .rev()
                        .find_map(|frame| frame.y)
                        .unwrap_or(0.0);
                    if let Some(size) = positions.iter().rev().find_map(|frame| frame.font_size) {
                        font_size = size;
                    }
                    let x = match own_x {
                        Some(x) if !piece_x_taken => x,
                        _ => last_x + FOLLOWING_PIECE_STEP,
                    };
                    piece_x_taken = true;
                    last_x = x;
                    pieces.push(Piece {
                        x,
                        y,
                        order: pieces.len(),
                        line: 0,
                        text: text.to_string(),
                    });
                }
                _ => {}
            },
            Edge::Close(node) => {
                if matches!(node.value(), Node::Element(_)) {
                    positions.pop();
                }
            }
        }
    }
    if pieces.len() <= *budget {
        *budget -= pieces.len();
        order_pieces(&mut pieces, font_size * 0.5);
    } else {
        *budget = 0;
    }
    pieces
        .iter()
        .map(|piece| piece.text.trim_matches('\n'))
        .collect()
}

/// Sorts pieces into reading order: by line (y within `tolerance` of the
/// line's first piece), then by x, then by source order.
fn order_pieces(pieces: &mut [Piece], tolerance: f32) {
    pieces.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.order.cmp(&b.order)));
    let mut line_y = f32::NEG_INFINITY;
    let mut line = 0usize;
    for piece in pieces.iter_mut() {
        if piece.y - line_y > tolerance {
            line_y = piece.y;
            line += 1;
        }
        piece.line = line;
    }
    pieces.sort_by(|a, b| {
        a.line
            .cmp(&b.line)
            .then(a.x.total_cmp(&b.x))
            .then(a.order.cmp(&b.order))
    });
}

/// Returns the first number of a coordinate list (`"10"`, `"10 20 30"`, `"10px"`).
fn first_number(value: Option<&str>) -> Option<f32> {
    let first = value?
        .split(|c: char| c.is_whitespace() || c == ',')
        .find(|token| !token.is_empty())?;
    let digits = first.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    digits
        .parse::<f32>()
        .ok()
        .filter(|number| number.is_finite())
}

fn font_size_of(node: &Node) -> Option<f32> {
    let Node::Element(element) = node else {
        return None;
    };
    first_number(element.attr("font-size")).filter(|size| *size > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg_text(html: &str) -> String {
        let mut document = Html::parse_document(html);
        inline_svg_text(&mut document);
        document.root_element().text().collect()
    }

    #[test]
    fn reads_lines_of_text_in_source_order() {
        let html = r#"<div><svg font-size="20"><text x="0" y="26">第一行，</text><text x="0" y="58">第二行。</text></svg></div>"#;
        assert_eq!(svg_text(html), "第一行，第二行。");
    }

    #[test]
    fn puts_shuffled_positioned_pieces_in_reading_order() {
        let html = r#"<svg width="610" font-size="20"><text x="360" y="26">和行</text><text x="120" y="26">规范农民</text><text x="0" y="26">第一条 </text><text x="80" y="26">为了</text><text x="200" y="26">专业合作社</text><text x="40" y="59">农村</text><text x="0" y="58">推进</text></svg>"#;
        assert_eq!(svg_text(html), "第一条 为了规范农民专业合作社和行推进农村");
    }

    #[test]
    fn places_tspans_by_their_own_x_under_the_text_y() {
        let html = r#"<svg><text y="58"><tspan x="100">之二</tspan><tspan x="0">之一</tspan></text><text y="26"><tspan x="0">甲</tspan><tspan>乙</tspan><tspan x="40">丙</tspan></text></svg>"#;
        assert_eq!(svg_text(html), "甲乙丙之一之二");
    }

    #[test]
    fn drops_undrawn_text_and_keeps_text_outside_svg() {
        let html = r#"<p>前<svg><title>图标</title><defs><text id="t">模板</text></defs><text x="0" y="10">中</text></svg>后</p>"#;
        assert_eq!(svg_text(html), "前中后");
    }

    #[test]
    fn reads_coordinate_lists_and_units() {
        assert_eq!(first_number(Some("10 20 30")), Some(10.0));
        assert_eq!(first_number(Some("12.5px")), Some(12.5));
        assert_eq!(first_number(Some("abc")), None);
        assert_eq!(first_number(None), None);
    }
}
