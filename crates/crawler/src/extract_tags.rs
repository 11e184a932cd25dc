//! What tags and short texts mean to extraction: line breaks, headings,
//! pagination markers and "next page" anchors.

use std::sync::LazyLock;

use regex::Regex;

/// Returns (N, M) of a "第N/M页" pagination marker.
pub(super) fn part_marker(text: &str) -> Option<(u32, u32)> {
    static MARKER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"第\s*(\d{1,3})\s*/\s*(\d{1,3})\s*[页頁]").expect("the marker regex is valid")
    });
    let captures = MARKER.captures(text)?;
    let part = captures[1].parse().ok()?;
    let of = captures[2].parse().ok()?;
    (part >= 1 && part <= of).then_some((part, of))
}

/// Returns the number an anchor text names (`3`, `[3]`, `【3】`).
pub(super) fn page_number(text: &str) -> Option<u32> {
    let inner = text
        .trim()
        .trim_start_matches(['[', '【', '('])
        .trim_end_matches([']', '】', ')']);
    if inner.is_empty() || inner.len() > 3 || !inner.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    inner.parse().ok()
}

pub(super) fn is_next_page_anchor(text: &str, element: &scraper::node::Element) -> bool {
    let text = text.to_lowercase();
    if text.contains('章') || text.contains("chapter") || text.chars().count() > 20 {
        return false;
    }
    let rel_next = element
        .attr("rel")
        .is_some_and(|rel| rel.split_whitespace().any(|token| token == "next"));
    rel_next
        || text.contains("下一页")
        || text.contains("下一頁")
        || text == "下页"
        || text.contains("next page")
        || text == "next »"
}

pub(super) fn is_heading_like(name: &str, element: &scraper::node::Element) -> bool {
    if matches!(name, "h1" | "h2" | "h3") {
        return true;
    }
    let titled = |value: &str| value.to_ascii_lowercase().contains("title");
    matches!(name, "div" | "span" | "p")
        && (element.attr("class").is_some_and(titled) || element.id().is_some_and(titled))
}
