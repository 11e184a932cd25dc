//! Side-by-side excerpts for reviewers and takedown notices: the longest copied
//! runs, each cut to a readable length, from the registered chapter and the page.

use copyhound_core::model::{CopiedSpan, EvidenceExcerpt, shown_text};

/// Excerpts kept per match.
const MAX_EXCERPTS: usize = 5;
/// Characters per excerpt.
const MAX_EXCERPT_CHARS: usize = 240;

/// Gaps longer than this (chars, either side) are never bridged.
const MAX_REWRITE_GAP: u32 = 1_500;
/// Gap lengths this close (chars) always count as alike.
const GAP_SLACK: u32 = 20;

/// Joins consecutive copied runs into regions where the page text between two
/// runs stands in for the chapter text between them: both sides moved forward
/// by a similar amount, as in a rewrite (洗稿) that keeps scattered verbatim
/// runs. An injected ad (a page gap with no chapter gap) or a dropped passage
/// (the reverse) keeps the runs apart, and so does any reordering.
pub(crate) fn regions(spans: &[CopiedSpan]) -> Vec<CopiedSpan> {
    let mut ordered: Vec<CopiedSpan> = spans.to_vec();
    ordered.sort_by_key(|span| (span.page_start, span.chapter_start));
    let mut joined: Vec<CopiedSpan> = Vec::with_capacity(ordered.len());
    for span in ordered {
        if let Some(last) = joined.last_mut()
            && span.chapter_start >= last.chapter_end
            && span.page_start >= last.page_end
        {
            let chapter_gap = span.chapter_start - last.chapter_end;
            let page_gap = span.page_start - last.page_end;
            let (short, long) = (chapter_gap.min(page_gap), chapter_gap.max(page_gap));
            if long <= MAX_REWRITE_GAP && long - short <= GAP_SLACK.max(long / 2) {
                last.chapter_end = span.chapter_end;
                last.page_end = span.page_end;
                continue;
            }
        }
        joined.push(span);
    }
    joined
}

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
    let raw: String = chars[start..end].iter().take(MAX_EXCERPT_CHARS).collect();
    let mut excerpt = shown_text(&raw).into_owned();
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
    fn pictures_of_characters_show_as_the_replacement_character() {
        let found = excerpts("甲乙丙", "甲\u{F0003}丙", &[span((0, 3), (0, 3))]);
        assert_eq!(found[0].page_excerpt, "甲\u{FFFC}丙");
    }

    #[test]
    fn out_of_range_spans_are_clamped_not_panics() {
        let found = excerpts("短", "短", &[span((0, 99), (5, 2))]);
        assert_eq!(found[0].chapter_excerpt, "短");
        assert_eq!(found[0].page_excerpt, "");
    }

    #[test]
    fn rewritten_gaps_join_runs_but_ads_drops_and_reorders_do_not() {
        // Both sides advance alike between the runs: a rewrite, joined.
        let rewrite = [span((0, 100), (10, 110)), span((400, 500), (380, 490))];
        assert_eq!(regions(&rewrite), [span((0, 500), (10, 490))]);
        // An ad on the page, nothing skipped in the chapter.
        let ad = [span((0, 100), (0, 100)), span((100, 200), (180, 280))];
        assert_eq!(regions(&ad), ad);
        // A dropped passage: the chapter skips ahead, the page does not.
        let dropped = [span((0, 100), (0, 100)), span((400, 500), (105, 205))];
        assert_eq!(regions(&dropped), dropped);
        // Reordered paragraphs (given in page order or not).
        let shuffled = [span((400, 500), (0, 100)), span((0, 100), (120, 220))];
        assert_eq!(regions(&shuffled), shuffled);
        // Too far apart to vouch for the text between.
        let far = [
            span((0, 100), (0, 100)),
            span((3_100, 3_200), (3_100, 3_200)),
        ];
        assert_eq!(regions(&far), far);
        // Small edits keep adjacent runs together; input order does not matter.
        let close = [span((60, 120), (65, 130)), span((0, 50), (0, 52))];
        assert_eq!(regions(&close), [span((0, 120), (0, 130))]);
    }
}
