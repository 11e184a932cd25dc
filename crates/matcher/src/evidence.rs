//! Side-by-side excerpts for reviewers and takedown notices: the longest copied
//! runs, each cut to a readable length, from the registered chapter and the page.

use copyhound_core::model::{CopiedSpan, EvidenceExcerpt};

/// Excerpts kept per match.
const MAX_EXCERPTS: usize = 5;
/// Characters per excerpt.
const MAX_EXCERPT_CHARS: usize = 240;

/// Returns excerpts of the longest spans, in chapter order.
pub(crate) fn excerpts(
    chapter_text: &str,
    page_text: &str,
    spans: &[CopiedSpan],
) -> Vec<EvidenceExcerpt> {
    let mut longest: Vec<&CopiedSpan> = spans.iter().collect();
    longest
        .sort_by_key(|span| std::cmp::Reverse(span.chapter_end.saturating_sub(span.chapter_start)));
    longest.truncate(MAX_EXCERPTS);
    longest.sort_by_key(|span| span.chapter_start);
    let chapter_chars: Vec<char> = chapter_text.chars().collect();
    let page_chars: Vec<char> = page_text.chars().collect();
    longest
        .into_iter()
        .map(|span| EvidenceExcerpt {
            span: *span,
            chapter_excerpt: cut(&chapter_chars, span.chapter_start, span.chapter_end),
            page_excerpt: cut(&page_chars, span.page_start, span.page_end),
        })
        .collect()
}

fn cut(chars: &[char], start: u32, end: u32) -> String {
    let start = (start as usize).min(chars.len());
    let end = (end as usize).clamp(start, chars.len());
    let mut excerpt: String = chars[start..end].iter().take(MAX_EXCERPT_CHARS).collect();
    if end - start > MAX_EXCERPT_CHARS {
        excerpt.push('…');
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(chapter: (u32, u32), page: (u32, u32)) -> CopiedSpan {
        CopiedSpan {
            chapter_start: chapter.0,
            chapter_end: chapter.1,
            page_start: page.0,
            page_end: page.1,
        }
    }

    #[test]
    fn excerpts_follow_the_spans_on_both_sides() {
        let chapter = "甲乙丙丁戊己庚辛";
        let page = "广告甲乙丙丁水印戊己";
        let found = excerpts(
            chapter,
            page,
            &[span((0, 4), (2, 6)), span((4, 6), (8, 10))],
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].chapter_excerpt, "甲乙丙丁");
        assert_eq!(found[0].page_excerpt, "甲乙丙丁");
        assert_eq!(found[1].page_excerpt, "戊己");
    }

    #[test]
    fn out_of_range_spans_are_clamped_not_panics() {
        let found = excerpts("短", "短", &[span((0, 99), (5, 2))]);
        assert_eq!(found[0].chapter_excerpt, "短");
        assert_eq!(found[0].page_excerpt, "");
    }
}
