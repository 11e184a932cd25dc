//! Splitting a novel's TXT file into chapters by its heading lines.
//!
//! A heading is a short line matching the pattern: by default `第X章` / `第X回` /
//! `第X节` (Chinese or Arabic numerals) or `Chapter N` (Arabic or Roman). Text
//! before the first heading is front matter (title page, author's note): kept as
//! a chapter when substantial, dropped with a warning otherwise. Headings with no
//! body (a table of contents) are skipped with a warning, and numbering gaps or
//! repeats are reported so a publisher can check the preview before committing.
//! The split streams over the lines and stops at the first exceeded budget
//! (headings, characters per chapter and per work: [`super::limits`]).

use copyhound_core::{Error, Result};
use regex::Regex;

use super::ChapterDraft;
use super::limits::{MAX_CHAPTER_CHARS, MAX_CHAPTERS, MAX_TXT_HEADINGS, TextBudget, too_large};
use super::text::normalize_paragraphs;

/// Longest line that can be a heading, characters; longer lines are body text.
pub const MAX_HEADING_CHARS: usize = 60;
/// Front matter at least this long (characters) is kept as a chapter.
pub const MIN_FRONT_MATTER_CHARS: usize = 200;
/// Longest accepted custom pattern, bytes.
pub const MAX_PATTERN_LEN: usize = 512;

const DEFAULT_PATTERN: &str = concat!(
    r"^(?:第\s*(?P<zh>[0-9０-９零〇一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟]+)\s*[章回节節]",
    r"|(?i:chapter\s+(?P<en>[0-9]+|[ivxlcdm]+)\b))"
);

/// What a heading line looks like.
#[derive(Clone, Debug)]
pub struct HeadingPattern {
    regex: Regex,
}

impl Default for HeadingPattern {
    fn default() -> Self {
        Self {
            regex: Regex::new(DEFAULT_PATTERN)
                .expect("the default heading pattern is a valid regex"),
        }
    }
}

impl HeadingPattern {
    /// Returns a custom pattern, matched against each trimmed line (use `^` to anchor).
    pub fn new(pattern: &str) -> Result<Self> {
        if pattern.len() > MAX_PATTERN_LEN {
            return Err(Error::invalid(format!(
                "heading pattern is longer than {MAX_PATTERN_LEN} bytes"
            )));
        }
        let regex = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(|error| {
                Error::invalid(format!("heading pattern is not a valid regex: {error}"))
            })?;
        Ok(Self { regex })
    }

    /// Returns the pattern, or the default one when `pattern` is `None` or empty.
    pub fn from_option(pattern: Option<&str>) -> Result<Self> {
        match pattern {
            Some(text) if !text.trim().is_empty() => Self::new(text),
            _ => Ok(Self::default()),
        }
    }

    /// Returns `Some(number)` (the chapter number when the pattern captures one) if `line` is a heading.
    fn heading(&self, line: &str) -> Option<Option<u64>> {
        if line.chars().count() > MAX_HEADING_CHARS {
            return None;
        }
        let captures = self.regex.captures(line)?;
        let number = match (captures.name("zh"), captures.name("en")) {
            (Some(zh), _) => chinese_numeral_value(zh.as_str()),
            (_, Some(en)) => en
                .as_str()
                .parse()
                .ok()
                .or_else(|| roman_value(en.as_str())),
            _ => None,
        };
        Some(number)
    }
}

/// Returns the value of a Chinese (or Arabic, or full-width) numeral: `三十五` -> 35,
/// `一〇五` -> 105, `１２` -> 12; `None` if it is not one.
pub fn chinese_numeral_value(text: &str) -> Option<u64> {
    let (mut total, mut section, mut number) = (0u64, 0u64, 0u64);
    let mut previous_was_digit = false;
    for ch in text.chars() {
        let digit = match ch {
            '0'..='9' => Some(u64::from(ch) - u64::from('0')),
            '０'..='９' => Some(u64::from(ch) - u64::from('０')),
            '零' | '〇' => Some(0),
            '一' | '壹' => Some(1),
            '二' | '两' | '贰' => Some(2),
            '三' | '叁' => Some(3),
            '四' | '肆' => Some(4),
            '五' | '伍' => Some(5),
            '六' | '陆' => Some(6),
            '七' | '柒' => Some(7),
            '八' | '捌' => Some(8),
            '九' | '玖' => Some(9),
            _ => None,
        };
        if let Some(value) = digit {
            number = if previous_was_digit {
                number.checked_mul(10)?.checked_add(value)?
            } else {
                value
            };
            previous_was_digit = true;
            continue;
        }
        previous_was_digit = false;
        let unit = match ch {
            '十' | '拾' => 10,
            '百' | '佰' => 100,
            '千' | '仟' => 1000,
            '万' => {
                total = total.checked_add(section.checked_add(number)?.checked_mul(10_000)?)?;
                section = 0;
                number = 0;
                continue;
            }
            _ => return None,
        };
        section = section.checked_add(number.max(1).checked_mul(unit)?)?;
        number = 0;
    }
    total.checked_add(section)?.checked_add(number)
}

fn roman_value(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut previous = 0u64;
    for ch in text.chars().rev() {
        let value = match ch.to_ascii_lowercase() {
            'i' => 1,
            'v' => 5,
            'x' => 10,
            'l' => 50,
            'c' => 100,
            'd' => 500,
            'm' => 1000,
            _ => return None,
        };
        if value < previous {
            total = total.checked_sub(value)?;
        } else {
            total = total.checked_add(value)?;
            previous = value;
        }
    }
    Some(total)
}

struct Section {
    title: String,
    number: Option<u64>,
    line: usize,
    body: String,
    chars: usize,
}

/// Names a section in budget errors.
fn section_name(section: Option<&Section>) -> String {
    match section {
        Some(section) => format!("the chapter at line {}", section.line),
        None => "the text before the first heading".to_string(),
    }
}

/// Splits a novel into chapters at heading lines; returns the chapters and warnings.
/// A text without headings becomes one chapter (with a warning); an empty text
/// gives no chapters. More than [`MAX_TXT_HEADINGS`] headings, a chapter over
/// [`MAX_CHAPTER_CHARS`] or a text over
/// [`super::limits::MAX_TEXT_CHARS`] characters is `TooLarge`.
pub fn split_txt_chapters(
    text: &str,
    pattern: &HeadingPattern,
) -> Result<(Vec<ChapterDraft>, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut budget = TextBudget::for_upload();
    let mut front = String::new();
    let mut front_chars = 0usize;
    let mut sections: Vec<Section> = Vec::new();
    for (line_number, line) in text.lines().enumerate() {
        let trimmed =
            line.trim_matches(|c: char| c.is_whitespace() || c == '\u{3000}' || c == '\u{feff}');
        if let Some(number) = pattern.heading(trimmed) {
            if sections.len() == MAX_TXT_HEADINGS {
                return Err(too_large(format!(
                    "the text has more than {MAX_TXT_HEADINGS} chapter headings (a work has at most {MAX_CHAPTERS} chapters)"
                )));
            }
            sections.push(Section {
                title: trimmed.to_string(),
                number,
                line: line_number + 1,
                body: String::new(),
                chars: 0,
            });
            continue;
        }
        let line_chars = line.chars().count() + 1;
        budget.spend(line_chars)?;
        let (target, chars) = match sections.last_mut() {
            Some(section) => (&mut section.body, &mut section.chars),
            None => (&mut front, &mut front_chars),
        };
        *chars += line_chars;
        if *chars > MAX_CHAPTER_CHARS {
            let name = section_name(sections.last());
            let hint = if sections.is_empty() {
                "; no heading matched so far, pass a heading `pattern`"
            } else {
                ""
            };
            return Err(too_large(format!(
                "{name} has more than {} characters (limit per chapter){hint}",
                MAX_CHAPTER_CHARS
            )));
        }
        target.push_str(line);
        target.push('\n');
    }
    let front = normalize_paragraphs(&front);
    if sections.is_empty() {
        if front.is_empty() {
            warnings.push("the file holds no text".to_string());
            return Ok((Vec::new(), warnings));
        }
        warnings.push("no chapter headings found; the whole text is one chapter".to_string());
        return Ok((
            vec![ChapterDraft {
                title: "Chapter 1".to_string(),
                text: front,
            }],
            warnings,
        ));
    }
    let mut chapters = Vec::with_capacity(sections.len() + 1);
    let front_chars = front.chars().filter(|c| *c != '\n').count();
    if front_chars >= MIN_FRONT_MATTER_CHARS {
        warnings.push(format!(
            "{front_chars} characters before the first heading were kept as a front-matter chapter"
        ));
        chapters.push(ChapterDraft {
            title: "Front matter".to_string(),
            text: front,
        });
    } else if front_chars > 0 {
        warnings.push(format!(
            "{front_chars} characters before the first heading were ignored"
        ));
    }
    let mut empty_headings = 0usize;
    let mut previous_number: Option<u64> = None;
    for section in sections {
        let body = normalize_paragraphs(&section.body);
        if body.is_empty() {
            empty_headings += 1;
            continue;
        }
        if let (Some(previous), Some(number)) = (previous_number, section.number) {
            if number == previous {
                warnings.push(format!(
                    "chapter number {number} repeats at line {}",
                    section.line
                ));
            } else if number != previous.saturating_add(1) {
                warnings.push(format!(
                    "chapter numbers jump from {previous} to {number} at line {}",
                    section.line
                ));
            }
        }
        previous_number = section.number.or(previous_number);
        chapters.push(ChapterDraft {
            title: section.title,
            text: body,
        });
    }
    if empty_headings > 0 {
        warnings.push(format!(
            "{empty_headings} headings had no text (a table of contents?) and were skipped"
        ));
    }
    if chapters.len() > MAX_CHAPTERS {
        return Err(too_large(format!(
            "the text has more than {MAX_CHAPTERS} chapters (limit per work)"
        )));
    }
    Ok((chapters, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_parse() {
        for (text, value) in [
            ("一", 1),
            ("十", 10),
            ("十二", 12),
            ("二十", 20),
            ("三十五", 35),
            ("一百零八", 108),
        ] {
            assert_eq!(chinese_numeral_value(text), Some(value), "{text}");
        }
        assert_eq!(chinese_numeral_value("一〇五"), Some(105));
        assert_eq!(chinese_numeral_value("１２"), Some(12));
        assert_eq!(chinese_numeral_value("两千零一"), Some(2001));
        assert_eq!(chinese_numeral_value("一万二千"), Some(12000));
        assert_eq!(chinese_numeral_value("章"), None);
        assert_eq!(roman_value("xiv"), Some(14));
    }

    #[test]
    fn chinese_headings_split_and_front_matter_is_reported() {
        let text =
            "书名\n作者\n第一章 风起\n　　天色已晚。\n\n第二章　云涌\n少年回家。\n第3节 终\n完。";
        let (chapters, warnings) = split_txt_chapters(text, &HeadingPattern::default()).unwrap();
        let titles: Vec<&str> = chapters
            .iter()
            .map(|chapter| chapter.title.as_str())
            .collect();
        assert_eq!(titles, ["第一章 风起", "第二章　云涌", "第3节 终"]);
        assert_eq!(chapters[0].text, "天色已晚。");
        assert_eq!(
            warnings,
            ["4 characters before the first heading were ignored"]
        );
    }

    #[test]
    fn hui_and_english_headings_and_gaps() {
        let text = "第一回 甲\n文\n第三回 乙\n文\n";
        let (chapters, warnings) = split_txt_chapters(text, &HeadingPattern::default()).unwrap();
        assert_eq!(chapters.len(), 2);
        assert_eq!(warnings, ["chapter numbers jump from 1 to 3 at line 3"]);
        let english = "CHAPTER I.\nIt was.\nChapter 2: Next\nThen.\nChapter II\nRepeat.";
        let (chapters, warnings) = split_txt_chapters(english, &HeadingPattern::default()).unwrap();
        assert_eq!(chapters.len(), 3);
        assert_eq!(warnings, ["chapter number 2 repeats at line 5"]);
    }

    #[test]
    fn no_headings_gives_one_chapter_with_a_warning() {
        let (chapters, warnings) =
            split_txt_chapters("just text\nmore", &HeadingPattern::default()).unwrap();
        assert_eq!(chapters.len(), 1);
        assert_eq!(chapters[0].text, "just text\nmore");
        assert_eq!(warnings.len(), 1);
        let (none, warnings) = split_txt_chapters(" \n\n", &HeadingPattern::default()).unwrap();
        assert!(none.is_empty());
        assert_eq!(warnings, ["the file holds no text"]);
    }

    #[test]
    fn table_of_contents_headings_are_skipped_and_custom_patterns_work() {
        let text = "第一章 甲\n第二章 乙\n第一章 甲\n正文一\n第二章 乙\n正文二";
        let (chapters, warnings) = split_txt_chapters(text, &HeadingPattern::default()).unwrap();
        assert_eq!(chapters.len(), 2);
        assert!(
            warnings
                .iter()
                .any(|warning| warning.contains("2 headings had no text")),
            "{warnings:?}"
        );
        let custom = HeadingPattern::new(r"^卷[一二三]").unwrap();
        let (chapters, _) = split_txt_chapters("卷一\n甲\n卷二\n乙", &custom).unwrap();
        assert_eq!(chapters.len(), 2);
        assert!(HeadingPattern::new("(").is_err());
    }

    #[test]
    fn budgets_refuse_heading_floods_and_endless_chapters() {
        let flood = "第1章\n甲\n".repeat(MAX_TXT_HEADINGS + 1);
        let error = split_txt_chapters(&flood, &HeadingPattern::default()).unwrap_err();
        assert_eq!(error.kind(), copyhound_core::ErrorKind::TooLarge);
        assert!(error.message().contains("chapter headings"), "{error}");
        let endless = format!("第1章\n{}", "字".repeat(MAX_CHAPTER_CHARS));
        let error = split_txt_chapters(&endless, &HeadingPattern::default()).unwrap_err();
        assert!(
            error
                .message()
                .contains("the chapter at line 1 has more than"),
            "{error}"
        );
        let headless = "字".repeat(MAX_CHAPTER_CHARS + 1);
        let error = split_txt_chapters(&headless, &HeadingPattern::default()).unwrap_err();
        assert!(
            error.message().contains("pass a heading `pattern`"),
            "{error}"
        );
    }
}
