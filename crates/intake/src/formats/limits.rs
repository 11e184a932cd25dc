//! Budgets of the upload parsers. Every hostile shape of an upload (a zip bomb,
//! a DOM bomb, ten thousand chapters, one endless line) runs into one of these
//! before it can grow memory: the parsers stream, count as they go and stop with
//! a `TooLarge` error that names the limit. The HTTP layer refuses bodies over
//! `server.max_upload_bytes` before any parser runs.

use copyhound_core::{Error, ErrorKind};

/// Largest file a parser accepts, bytes.
pub const MAX_FILE_BYTES: usize = 64 << 20;
/// Most entries (files) of an EPUB archive.
pub const MAX_ZIP_ENTRIES: usize = 20_000;
/// Largest compressed size of one EPUB entry that is read, bytes.
pub const MAX_ENTRY_COMPRESSED_BYTES: u64 = 16 << 20;
/// Largest decompressed size of one EPUB entry that is read, bytes.
pub const MAX_ENTRY_BYTES: u64 = 16 << 20;
/// Most bytes the read entries of one EPUB may decompress to together.
pub const MAX_DECOMPRESSED_BYTES: u64 = 256 << 20;
/// Most elements of one XML or XHTML document (container, package, chapter).
pub const MAX_XML_ELEMENTS: usize = 250_000;
/// Deepest element nesting of one XML or XHTML document.
pub const MAX_XML_DEPTH: usize = 512;
/// Most chapters of one work, on every registration path.
pub const MAX_CHAPTERS: usize = 50_000;
/// Most heading lines of a TXT file: the chapters plus a table of contents.
pub const MAX_TXT_HEADINGS: usize = 2 * MAX_CHAPTERS;
/// Most characters of one chapter.
pub const MAX_CHAPTER_CHARS: usize = 4_000_000;
/// Most characters of one upload or registration, all chapters together.
pub const MAX_TEXT_CHARS: usize = 32_000_000;
/// Longest work title, characters.
pub const MAX_TITLE_CHARS: usize = 500;
/// Longest author, characters.
pub const MAX_AUTHOR_CHARS: usize = 200;
/// Longest chapter title, characters.
pub const MAX_CHAPTER_TITLE_CHARS: usize = 500;
/// Longest licensed host as given (a URL is reduced to its host), bytes.
pub const MAX_HOST_INPUT_BYTES: usize = 2048;

/// Returns a `TooLarge` error.
pub(crate) fn too_large(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::TooLarge, message)
}

/// Characters an upload may still add, shared by its chapters.
#[derive(Debug)]
pub(crate) struct TextBudget {
    left: usize,
}

impl TextBudget {
    /// Returns the budget of one upload.
    pub(crate) fn for_upload() -> Self {
        Self {
            left: MAX_TEXT_CHARS,
        }
    }

    /// Spends `chars` characters, or fails naming the limit.
    pub(crate) fn spend(&mut self, chars: usize) -> Result<(), Error> {
        match self.left.checked_sub(chars) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(too_large(format!(
                "the text has more than {MAX_TEXT_CHARS} characters (limit per work)"
            ))),
        }
    }
}

/// Refuses a chapter longer than [`MAX_CHAPTER_CHARS`]; `what` names it.
pub(crate) fn check_chapter_chars(what: &str, chars: usize) -> Result<(), Error> {
    if chars > MAX_CHAPTER_CHARS {
        return Err(too_large(format!(
            "{what} has more than {MAX_CHAPTER_CHARS} characters (limit per chapter)"
        )));
    }
    Ok(())
}

/// Deserializes a sequence of at most `max` elements, refusing the next one
/// as it arrives: a body of a million tiny chapters fails after `max + 1` of
/// them instead of after a million (40 times its size on the heap). The
/// refusal, `refusal()`, becomes the deserializer's error.
pub fn deserialize_at_most<'de, D, T>(
    deserializer: D,
    max: usize,
    refusal: fn() -> String,
) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct AtMost<T> {
        max: usize,
        refusal: fn() -> String,
        element: std::marker::PhantomData<T>,
    }

    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for AtMost<T> {
        type Value = Vec<T>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(formatter, "an array of at most {} elements", self.max)
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            // Never trust the announced length for the allocation.
            let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
            while let Some(element) = seq.next_element()? {
                if elements.len() == self.max {
                    return Err(serde::de::Error::custom((self.refusal)()));
                }
                elements.push(element);
            }
            Ok(elements)
        }
    }

    deserializer.deserialize_seq(AtMost {
        max,
        refusal,
        element: std::marker::PhantomData,
    })
}
