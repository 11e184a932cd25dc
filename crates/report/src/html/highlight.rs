//! Marks the copied characters of side-by-side excerpts. An excerpt is the copied
//! run as found on each side, but the two sides rarely match byte for byte
//! (traditional characters, full-width punctuation, inserted watermarks), so the
//! characters both sides share are found with a longest common subsequence and
//! only those are highlighted: what differs stays visible to the reviewer.

use serde::Serialize;

/// Larger excerpt pairs are marked whole instead of aligned (cells of the LCS table).
const MAX_ALIGNMENT_CELLS: usize = 300 * 300;
/// What the evidence builder appends to a cut excerpt.
const ELLIPSIS: char = '…';

/// A run of an excerpt, copied (`mark`) or not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Segment {
    /// The text of the run.
    pub(crate) text: String,
    /// Whether it is shared with the other side.
    pub(crate) mark: bool,
}

/// Returns both excerpts cut into marked and unmarked runs. The `*_span_chars`
/// are the lengths of the copied run on each side, used to tell the ellipsis of
/// a cut excerpt from text.
pub(crate) fn highlight(
    chapter: &str,
    chapter_span_chars: usize,
    page: &str,
    page_span_chars: usize,
) -> (Vec<Segment>, Vec<Segment>) {
    let (chapter_body, chapter_tail) = split_ellipsis(chapter, chapter_span_chars);
    let (page_body, page_tail) = split_ellipsis(page, page_span_chars);
    let left: Vec<char> = chapter_body.chars().collect();
    let right: Vec<char> = page_body.chars().collect();
    let (left_marks, right_marks) = if left.len().saturating_mul(right.len()) > MAX_ALIGNMENT_CELLS
    {
        (vec![true; left.len()], vec![true; right.len()])
    } else {
        common_subsequence_marks(&left, &right)
    };
    let mut left_segments = segments(&left, &left_marks);
    let mut right_segments = segments(&right, &right_marks);
    for (segments, tail) in [
        (&mut left_segments, chapter_tail),
        (&mut right_segments, page_tail),
    ] {
        if let Some(tail) = tail {
            segments.push(Segment {
                text: tail.to_string(),
                mark: false,
            });
        }
    }
    (left_segments, right_segments)
}

/// Splits off a trailing ellipsis that marks a cut excerpt (not one in the text):
/// a cut excerpt is shorter than its span by more than the ellipsis.
fn split_ellipsis(excerpt: &str, span_chars: usize) -> (&str, Option<&str>) {
    match excerpt.strip_suffix(ELLIPSIS) {
        Some(body) if body.chars().count() + 1 < span_chars => (body, Some(&excerpt[body.len()..])),
        _ => (excerpt, None),
    }
}

/// Returns, for each character of both sides, whether it belongs to one longest
/// common subsequence.
fn common_subsequence_marks(left: &[char], right: &[char]) -> (Vec<bool>, Vec<bool>) {
    let columns = right.len() + 1;
    let mut lengths = vec![0u16; (left.len() + 1) * columns];
    for row in (0..left.len()).rev() {
        for column in (0..right.len()).rev() {
            lengths[row * columns + column] = if left[row] == right[column] {
                lengths[(row + 1) * columns + column + 1] + 1
            } else {
                lengths[(row + 1) * columns + column].max(lengths[row * columns + column + 1])
            };
        }
    }
    let (mut left_marks, mut right_marks) = (vec![false; left.len()], vec![false; right.len()]);
    let (mut row, mut column) = (0, 0);
    while row < left.len() && column < right.len() {
        if left[row] == right[column] {
            left_marks[row] = true;
            right_marks[column] = true;
            row += 1;
            column += 1;
        } else if lengths[(row + 1) * columns + column] >= lengths[row * columns + column + 1] {
            row += 1;
        } else {
            column += 1;
        }
    }
    (left_marks, right_marks)
}

/// Groups characters into runs of equal marking.
fn segments(characters: &[char], marks: &[bool]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (character, mark) in characters.iter().zip(marks) {
        match out.last_mut() {
            Some(last) if last.mark == *mark => last.text.push(*character),
            _ => out.push(Segment {
                text: character.to_string(),
                mark: *mark,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(segments: &[Segment]) -> String {
        segments
            .iter()
            .map(|s| {
                if s.mark {
                    format!("[{}]", s.text)
                } else {
                    s.text.clone()
                }
            })
            .collect()
    }

    #[test]
    fn identical_excerpts_are_marked_whole() {
        let (left, right) = highlight("风起云涌", 4, "风起云涌", 4);
        assert_eq!(render(&left), "[风起云涌]");
        assert_eq!(render(&right), "[风起云涌]");
    }

    #[test]
    fn inserted_and_changed_characters_stay_unmarked() {
        let (left, right) = highlight("少年立于山巅。", 7, "少年立於山巅水印!", 9);
        assert_eq!(render(&left), "[少年立]于[山巅]。");
        assert_eq!(render(&right), "[少年立]於[山巅]水印!");
    }

    #[test]
    fn the_ellipsis_of_a_cut_excerpt_is_not_copied_text() {
        let (left, _) = highlight("甲乙…", 500, "甲乙…", 500);
        assert_eq!(render(&left), "[甲乙]…");
        let (whole, _) = highlight("甲乙…", 3, "甲乙…", 3);
        assert_eq!(render(&whole), "[甲乙…]");
    }

    #[test]
    fn huge_excerpts_are_marked_without_alignment() {
        let long = "字".repeat(400);
        let (left, right) = highlight(&long, 400, &long, 400);
        assert_eq!(left.len(), 1);
        assert!(left[0].mark && right[0].mark);
    }
}
