//! Highlighting copied spans. Spans are character offsets into the chapter and
//! page texts; a text is cut into alternating plain and copied segments that the
//! API returns and the UI wraps in `<mark>`.

use serde::Serialize;

/// A run of text, copied or not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Segment {
    /// The text.
    pub text: String,
    /// Whether the run is part of a copied span.
    pub copied: bool,
}

/// Returns `text` cut at the given `[start, end)` character ranges (overlapping
/// or unsorted ranges are merged; ranges past the end are clipped).
pub fn segments(text: &str, ranges: impl IntoIterator<Item = (u32, u32)>) -> Vec<Segment> {
    let text = &*copyhound_core::model::shown_text(text);
    let char_count = text.chars().count();
    let mut ranges: Vec<(usize, usize)> = ranges
        .into_iter()
        .map(|(start, end)| (start as usize, (end as usize).min(char_count)))
        .filter(|(start, end)| start < end)
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let byte_offsets: Vec<usize> = text
        .char_indices()
        .map(|(offset, _)| offset)
        .chain([text.len()])
        .collect();
    let byte_at = |chars: usize| byte_offsets[chars.min(char_count)];
    let mut out = Vec::with_capacity(merged.len() * 2 + 1);
    let mut cursor = 0usize;
    for (start, end) in merged {
        if start > cursor {
            out.push(Segment {
                text: text[byte_at(cursor)..byte_at(start)].to_string(),
                copied: false,
            });
        }
        out.push(Segment {
            text: text[byte_at(start)..byte_at(end)].to_string(),
            copied: true,
        });
        cursor = end;
    }
    if cursor < char_count {
        out.push(Segment {
            text: text[byte_at(cursor)..].to_string(),
            copied: false,
        });
    }
    out
}

/// Returns the share of `text` characters inside copied segments, in [0, 1].
pub fn copied_share(parts: &[Segment]) -> f64 {
    let total: usize = parts.iter().map(|part| part.text.chars().count()).sum();
    let copied: usize = parts
        .iter()
        .filter(|part| part.copied)
        .map(|part| part.text.chars().count())
        .sum();
    if total == 0 {
        0.0
    } else {
        copied as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cut_text_by_characters_and_merge() {
        let parts = segments("天色已晚林中起风", [(4, 6), (0, 2), (1, 3), (7, 99)]);
        let rendered: Vec<(String, bool)> = parts
            .iter()
            .map(|part| (part.text.clone(), part.copied))
            .collect();
        assert_eq!(
            rendered,
            [
                ("天色已".to_string(), true),
                ("晚".to_string(), false),
                ("林中".to_string(), true),
                ("起".to_string(), false),
                ("风".to_string(), true)
            ]
        );
        assert_eq!(
            segments("abc", []),
            [Segment {
                text: "abc".into(),
                copied: false
            }]
        );
        assert!(segments("", [(0, 5)]).is_empty());
        assert!((copied_share(&parts) - 6.0 / 8.0).abs() < 1e-9);
    }
}
