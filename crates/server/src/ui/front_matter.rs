//! The title and author a TXT file may name in its first lines, which the
//! upload preview fills its form with. The form is deliberately small:
//!
//! ```text
//! 书名：风起青萍
//! 作者：佚名
//!
//! 第一章 风起
//! ```
//!
//! The file's first lines (after any blank ones), up to a blank line, each
//! read `key: value` or `key：value` (full-width colon), with keys `title`,
//! `标题` or `书名` (the title) and `author` or `作者` (the author); English
//! keys in any case. When any line of that block is something else, or no
//! blank line follows it, the file has no front matter and its text is split
//! as it is. Front matter is metadata, not text of the work: it is left out
//! of the chapters.

/// Most lines a front matter block holds.
const MAX_FRONT_MATTER_LINES: usize = 8;
/// Longest value kept, characters (the title limit).
const MAX_VALUE_CHARS: usize = 500;

/// What a TXT file's front matter names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct FrontMatter {
    /// The work's title.
    pub title: Option<String>,
    /// The work's author.
    pub author: Option<String>,
}

/// The field a front matter key names.
enum Field {
    Title,
    Author,
}

/// Returns the field and value of a front matter line, or `None`.
fn field_of(line: &str) -> Option<(Field, String)> {
    let (key, value) = line.split_once([':', '：'])?;
    let field = match key.trim().to_lowercase().as_str() {
        "title" | "标题" | "书名" => Field::Title,
        "author" | "作者" => Field::Author,
        _ => return None,
    };
    let value = value.trim_matches(is_blank);
    if value.is_empty() || value.chars().count() > MAX_VALUE_CHARS {
        return None;
    }
    Some((field, value.to_string()))
}

fn is_blank(character: char) -> bool {
    character.is_whitespace() || character == '\u{3000}' || character == '\u{feff}'
}

/// Splits `text` into its front matter and the text after it, with the
/// number of lines before that text; a text without front matter is
/// returned whole with an empty [`FrontMatter`].
pub(super) fn split(text: &str) -> (FrontMatter, usize, &str) {
    let mut found = FrontMatter::default();
    let mut offset = 0;
    let mut lines = 0;
    for (read, line) in text.split_inclusive('\n').enumerate() {
        let content = line.trim_matches(is_blank);
        offset += line.len();
        if content.is_empty() {
            if lines == 0 {
                continue;
            }
            return (found, read + 1, &text[offset..]);
        }
        lines += 1;
        let Some((field, value)) = field_of(content) else {
            break;
        };
        if lines > MAX_FRONT_MATTER_LINES {
            break;
        }
        match field {
            Field::Title => found.title = Some(value),
            Field::Author => found.author = Some(value),
        }
    }
    (FrontMatter::default(), 0, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_key_lines_before_a_blank_line_are_front_matter() {
        let text = "\u{feff}书名：风起青萍\r\n作者: 佚名\r\n\r\n第一章 风起\n天色已晚。\n";
        let (found, lines, rest) = split(text);
        assert_eq!(found.title.as_deref(), Some("风起青萍"));
        assert_eq!(found.author.as_deref(), Some("佚名"));
        assert_eq!((lines, rest), (3, "第一章 风起\n天色已晚。\n"));
        let (found, lines, rest) = split("\n\nTITLE: The Wind\n\nChapter 1\n");
        assert_eq!(found.title.as_deref(), Some("The Wind"));
        assert_eq!((lines, rest), (4, "Chapter 1\n"));
        let (found, _, _) = split("标题：甲\n\n");
        assert_eq!(found.title.as_deref(), Some("甲"));
    }

    #[test]
    fn anything_else_leaves_the_text_whole() {
        for text in [
            "第一章 风起\n天色已晚。\n",
            // Another key, or a line of text, in the block.
            "书名：风起青萍\n出版社：某某\n\n第一章\n正文\n",
            "书名：风起青萍\n天色已晚，林中起了大风。\n\n第一章\n",
            // No blank line after it.
            "title: The Wind",
            "title: The Wind\nChapter 1\nIt was late.\n",
            // An empty value.
            "title:\n\nChapter 1\n",
            "",
        ] {
            let (found, lines, rest) = split(text);
            assert_eq!(found, FrontMatter::default(), "{text:?}");
            assert_eq!((lines, rest), (0, text));
        }
        let long = "title: a\n".repeat(MAX_FRONT_MATTER_LINES + 1) + "\nChapter 1\n";
        assert_eq!(split(&long).2, long);
    }
}
