//! Translates character offsets in the crawler's main text into offsets in the
//! benchmark's visible text. The main text is made of the visible text's own
//! lines (minus page chrome), so each main-text line is found in the visible text
//! from where the previous one ended. A line read through the page's CSS differs
//! from its markup text (decoys dropped, chunks put in order, images as
//! placeholders): it is placed on the nearby visible line sharing most of its
//! characters, proportionally. A line found neither way is left unmapped.

use std::collections::HashMap;

/// Visible lines after the cursor searched for a line that differs.
const FUZZY_WINDOW_LINES: usize = 64;
/// Share of a main line's characters a visible line must hold to stand for it.
const FUZZY_MIN_SHARE: f64 = 0.6;

/// Maps main-text character offsets to visible-text character offsets.
#[derive(Debug)]
pub struct OffsetMap {
    /// Per main-text character, the visible range it stands for.
    targets: Vec<Option<(u32, u32)>>,
}

impl OffsetMap {
    /// Aligns `main` onto `visible`.
    pub fn new(main: &str, visible: &str) -> Self {
        let visible_chars: Vec<char> = visible.chars().collect();
        let mut visible_lines = Vec::new();
        let mut line_start = 0usize;
        for (at, c) in visible_chars.iter().enumerate() {
            if *c == '\n' {
                visible_lines.push((line_start, at));
                line_start = at + 1;
            }
        }
        visible_lines.push((line_start, visible_chars.len()));
        let mut targets = Vec::with_capacity(main.chars().count());
        let mut cursor = 0usize;
        let mut first_line = true;
        for line in main.split('\n') {
            if !first_line {
                // The line break itself maps to the position after the previous line.
                targets.push(Some((cursor as u32, cursor as u32 + 1)));
            }
            first_line = false;
            let line_chars: Vec<char> = line.chars().collect();
            match find_chars(&visible_chars, &line_chars, cursor) {
                Some(start) => {
                    targets.extend((0..line_chars.len()).map(|offset| {
                        Some(((start + offset) as u32, (start + offset + 1) as u32))
                    }));
                    cursor = start + line_chars.len();
                }
                None => match closest_line(&visible_chars, &visible_lines, &line_chars, cursor) {
                    Some((start, end)) => {
                        let (len, width) = (line_chars.len(), end - start);
                        targets.extend((0..len).map(|offset| {
                            let at = |i: usize| (start + i * width / len) as u32;
                            Some((at(offset), at(offset + 1)))
                        }));
                        cursor = end;
                    }
                    None => targets.extend(std::iter::repeat_n(None, line_chars.len())),
                },
            }
        }
        Self { targets }
    }

    /// Maps `[start, end)` of the main text; `None` when neither end can be placed.
    pub fn map_span(&self, start: u32, end: u32) -> Option<(u32, u32)> {
        let (start, end) = (start as usize, (end as usize).min(self.targets.len()));
        if start >= end {
            return None;
        }
        let first = self.targets[start..end].iter().flatten().next()?;
        let last = self.targets[start..end].iter().rev().flatten().next()?;
        Some((first.0, last.1.max(first.0)))
    }
}

/// The visible line at or after `cursor` that holds most of `line`'s characters.
fn closest_line(
    visible: &[char],
    lines: &[(usize, usize)],
    line: &[char],
    cursor: usize,
) -> Option<(usize, usize)> {
    if line.is_empty() {
        return None;
    }
    let mut wanted: HashMap<char, usize> = HashMap::new();
    for c in line {
        *wanted.entry(*c).or_default() += 1;
    }
    let first = lines.partition_point(|(_, end)| *end < cursor);
    let mut best: Option<(f64, (usize, usize))> = None;
    for &(start, end) in lines.iter().skip(first).take(FUZZY_WINDOW_LINES) {
        let mut left = wanted.clone();
        let mut shared = 0usize;
        for c in &visible[start.max(cursor).min(end)..end] {
            if let Some(count) = left.get_mut(c)
                && *count > 0
            {
                *count -= 1;
                shared += 1;
            }
        }
        let share = shared as f64 / line.len() as f64;
        if share >= FUZZY_MIN_SHARE && best.is_none_or(|(held, _)| share > held) {
            best = Some((share, (start.max(cursor).min(end), end)));
        }
    }
    best.map(|(_, region)| region)
}

fn find_chars(haystack: &[char], needle: &[char], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from.min(haystack.len()));
    }
    if needle.len() > haystack.len() {
        return None;
    }
    (from..=haystack.len() - needle.len())
        .find(|&start| haystack[start..start + needle.len()] == *needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_found_in_order_and_skips_chrome() {
        let visible = "导航 首页\n第一段文字\n广告\n第二段";
        let main = "第一段文字\n第二段";
        let map = OffsetMap::new(main, visible);
        assert_eq!(map.map_span(0, 5), Some((6, 11)));
        assert_eq!(map.map_span(6, 9), Some((15, 18)));
        assert_eq!(map.map_span(0, 9), Some((6, 18)));
        assert_eq!(map.map_span(3, 3), None);
    }

    #[test]
    fn lines_read_through_css_land_on_their_markup_line() {
        // Decoys in the markup, dropped from the main text; chunks in another order.
        let visible = "导航\n清缚晨弩s早起\n天下所未到余游幕\n尾";
        let main = "清晨早起\n余游幕天下所未到\n尾";
        let map = OffsetMap::new(main, visible);
        assert_eq!(map.map_span(0, 4), Some((3, 10)));
        assert_eq!(map.map_span(5, 13), Some((11, 19)));
        assert_eq!(map.map_span(14, 15), Some((20, 21)));
    }

    #[test]
    fn unknown_lines_stay_unmapped() {
        let map = OffsetMap::new("不在\n正文", "正文");
        assert_eq!(map.map_span(0, 2), None);
        assert_eq!(map.map_span(3, 5), Some((0, 2)));
    }
}
