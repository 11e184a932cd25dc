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

/// Characters that end a sentence (`.` only before a space or the end).
const SENTENCE_ENDS: [char; 9] = ['。', '！', '？', '!', '?', '.', '；', ';', '\n'];
/// Closing quotes and brackets that belong to the sentence they follow.
const CLOSERS: [char; 11] = ['”', '’', '"', '\'', '」', '』', '）', ')', '》', '】', '…'];
/// How far into a run an excerpt may move its start to begin with a sentence.
const MAX_LEAD_CHARS: usize = 80;

/// Whether a sentence ends at `chars[index]`.
fn ends_sentence(chars: &[char], index: usize) -> bool {
    match chars[index] {
        '.' => chars.get(index + 1).is_none_or(|next| next.is_whitespace()),
        other => SENTENCE_ENDS.contains(&other),
    }
}

/// Returns the index after the sentence end at `index`: past its closing
/// quotes and the spaces that follow.
fn after_sentence_end(chars: &[char], index: usize) -> usize {
    let mut next = index + 1;
    while next < chars.len() && (CLOSERS.contains(&chars[next]) || chars[next].is_whitespace()) {
        next += 1;
    }
    next
}

/// Whether a word runs across `chars[index - 1]` and `chars[index]` (Latin
/// letters and digits; a CJK character is a word of its own).
fn inside_word(chars: &[char], index: usize) -> bool {
    index > 0
        && index < chars.len()
        && chars[index - 1].is_alphanumeric()
        && chars[index].is_alphanumeric()
        && chars[index - 1].is_ascii()
        && chars[index].is_ascii()
}

/// Returns where an excerpt of the run `start..end` begins: at `start` when a
/// sentence begins there, else at the first sentence start within
/// [`MAX_LEAD_CHARS`] of it, else at the next word start.
fn excerpt_start(chars: &[char], start: usize, end: usize) -> usize {
    let sentence_begins = start == 0
        || ends_sentence(chars, start - 1)
        || (CLOSERS.contains(&chars[start - 1]) || chars[start - 1].is_whitespace())
            && (0..start)
                .rev()
                .find(|&index| !(CLOSERS.contains(&chars[index]) || chars[index].is_whitespace()))
                .is_none_or(|index| ends_sentence(chars, index));
    if sentence_begins {
        return start;
    }
    let lead_end = end.min(start + MAX_LEAD_CHARS);
    if let Some(index) = (start..lead_end).find(|&index| ends_sentence(chars, index)) {
        let next = after_sentence_end(chars, index);
        if next < end {
            return next;
        }
    }
    if inside_word(chars, start)
        && let Some(space) = (start..lead_end).find(|&index| chars[index].is_whitespace())
    {
        return after_sentence_end(chars, space).min(end);
    }
    start
}

/// Returns where an excerpt from `start` that must stop by `limit` ends: after
/// the last sentence end past a third of it, else at the last word break,
/// else at `limit`.
fn excerpt_end(chars: &[char], start: usize, limit: usize) -> usize {
    let floor = start + (limit - start) / 3;
    if let Some(index) = (floor..limit)
        .rev()
        .find(|&index| ends_sentence(chars, index))
    {
        // Keep the closing quotes with their sentence, within the limit.
        let mut next = index + 1;
        while next < limit && CLOSERS.contains(&chars[next]) {
            next += 1;
        }
        return next;
    }
    if inside_word(chars, limit)
        && let Some(space) = (floor..limit)
            .rev()
            .find(|&index| chars[index].is_whitespace())
    {
        return space;
    }
    limit
}

/// Returns the excerpt of the run `start..end` of `chars`: at most
/// [`MAX_EXCERPT_CHARS`], beginning with a sentence (or a word) and, when
/// cut, ending with one, then `…`. A run shorter than the limit ends where
/// the copy ends.
fn cut(chars: &[char], start: u32, end: u32) -> String {
    let start = (start as usize).min(chars.len());
    let end = (end as usize).clamp(start, chars.len());
    let first = excerpt_start(chars, start, end);
    let (last, was_cut) = if end - first > MAX_EXCERPT_CHARS {
        (excerpt_end(chars, first, first + MAX_EXCERPT_CHARS), true)
    } else {
        (end, false)
    };
    let raw: String = chars[first..last].iter().collect();
    let mut excerpt = shown_text(raw.trim_end()).into_owned();
    if was_cut {
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

    /// A run that starts inside a sentence is shown from the next sentence;
    /// a long one is cut after its last whole sentence, never inside a word.
    #[test]
    fn excerpts_begin_and_end_at_sentence_boundaries() {
        let chapter: Vec<char> =
            "他说完了。天色已晚，林中起了大风。少年背着柴往回走！“回来了？”母亲问。"
                .chars()
                .collect();
        // The run starts on 完 (inside the first sentence).
        assert_eq!(
            cut(&chapter, 2, chapter.len() as u32),
            "天色已晚，林中起了大风。少年背着柴往回走！“回来了？”母亲问。"
        );
        // A run that starts a sentence keeps its start.
        assert_eq!(cut(&chapter, 5, 17), "天色已晚，林中起了大风。");
        // A long run is cut after a whole sentence, with its closing quote.
        let long: String = "这是一个很长的句子，用来测试。".repeat(30);
        let long_chars: Vec<char> = long.chars().collect();
        let excerpt = cut(&long_chars, 3, long_chars.len() as u32);
        assert!(excerpt.starts_with("这是一个"), "{excerpt}");
        assert!(excerpt.ends_with("用来测试。…"), "{excerpt}");
        assert!(excerpt.chars().count() <= MAX_EXCERPT_CHARS + 1);
        let quoted: Vec<char> = "甲说：“走吧。”乙说：“好的。”".repeat(20).chars().collect();
        let excerpt = cut(&quoted, 0, quoted.len() as u32);
        assert!(excerpt.ends_with("。”…"), "{excerpt}");
        // English: from the next sentence, never inside a word.
        let english: Vec<char> =
            "It was late. The wind rose in the woods, and the boy walked home. "
                .repeat(10)
                .chars()
                .collect();
        let excerpt = cut(&english, 4, english.len() as u32);
        assert!(excerpt.starts_with("The wind"), "{excerpt}");
        assert!(
            excerpt.ends_with("home.…") || excerpt.ends_with("late.…"),
            "{excerpt}"
        );
        let no_stop: Vec<char> = "alpha beta gamma ".repeat(40).chars().collect();
        let excerpt = cut(&no_stop, 2, no_stop.len() as u32);
        assert!(excerpt.starts_with("beta"), "{excerpt}");
        let body = excerpt.trim_end_matches('…');
        assert!(
            ["alpha", "beta", "gamma"]
                .iter()
                .any(|word| body.ends_with(word)),
            "{excerpt}"
        );
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
