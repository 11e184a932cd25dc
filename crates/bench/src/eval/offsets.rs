//! Translates character offsets in the crawler's main text into offsets in the
//! benchmark's visible text. The main text is made of the visible text's own
//! lines (minus page chrome), so each main-text line is found in the visible text
//! from where the previous one ended; a line that cannot be found is left unmapped.

/// Maps main-text character offsets to visible-text character offsets.
#[derive(Debug)]
pub struct OffsetMap {
    targets: Vec<Option<u32>>,
}

impl OffsetMap {
    /// Aligns `main` onto `visible`.
    pub fn new(main: &str, visible: &str) -> Self {
        let visible_chars: Vec<char> = visible.chars().collect();
        let mut targets = Vec::with_capacity(main.chars().count());
        let mut cursor = 0usize;
        let mut first_line = true;
        for line in main.split('\n') {
            if !first_line {
                // The line break itself maps to the position after the previous line.
                targets.push(Some(cursor as u32));
            }
            first_line = false;
            let line_chars: Vec<char> = line.chars().collect();
            match find_chars(&visible_chars, &line_chars, cursor) {
                Some(start) => {
                    targets
                        .extend((0..line_chars.len()).map(|offset| Some((start + offset) as u32)));
                    cursor = start + line_chars.len();
                }
                None => targets.extend(std::iter::repeat_n(None, line_chars.len())),
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
        Some((*first, last + 1))
    }
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
    fn unknown_lines_stay_unmapped() {
        let map = OffsetMap::new("不在\n正文", "正文");
        assert_eq!(map.map_span(0, 2), None);
        assert_eq!(map.map_span(3, 5), Some((0, 2)));
    }
}
