//! Site web fonts that hide text: what each code point really draws.
//!
//! Piracy and reprint sites write their text in code points that their own web
//! font draws as other characters: Private Use Area code points drawn as
//! common characters (one font per site, or a new random font per page),
//! ordinary characters whose glyphs were permuted, and decoy characters the
//! font draws as nothing (no contours, no advance) interleaved with the text.
//! A browser shows the text; the markup holds a cipher.
//!
//! [`decode_font`] reads such a font (WOFF2, WOFF, TTF, OTF; see [`outline`])
//! and keys the outline of every glyph its cmap reaches; a key found among the
//! reference outlines ([`reference`]) names the character drawn. The result,
//! a [`FontMap`], rewrites text: code points drawn as another character become
//! it, blank glyphs are dropped, private-use code points whose outline is
//! unknown become [`crate::style::GLYPH_PLACEHOLDER`]. Code points drawn as
//! themselves (a normal site font) are left alone, and a font that changes
//! fewer than [`MIN_CHANGED_CODE_POINTS`] code points changes nothing.
//!
//! Bounded: [`MAX_FONT_BYTES`] of font file, [`MAX_SFNT_BYTES`] decompressed,
//! [`MAX_CMAP_ENTRIES`] code points examined, [`FONT_TIME_BUDGET`] per font.
//! Where fonts apply in a page is [`apply`]'s business.

pub mod apply;
pub mod outline;
pub mod reference;

#[cfg(test)]
pub(crate) mod testfont;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::time::{Duration, Instant};

pub use outline::{FontError, MAX_SFNT_BYTES};
use outline::{GlyphShape, glyph_shape, parse_face, to_sfnt};
pub use reference::{ReferenceIndex, system_reference, use_reference_fonts};

use crate::style::GLYPH_PLACEHOLDER;

/// Bytes of one web font file read.
pub const MAX_FONT_BYTES: usize = 8 * 1024 * 1024;
/// Code points of one font's cmap examined.
pub const MAX_CMAP_ENTRIES: usize = 70_000;
/// Time one font may take to decode; past it, what was mapped is kept.
pub const FONT_TIME_BUDGET: Duration = Duration::from_millis(500);
/// A font changes text only when it draws at least this many code points as
/// other characters or as nothing.
pub const MIN_CHANGED_CODE_POINTS: usize = 8;

/// What a font draws for one code point, where that differs from the code point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    /// Another character.
    Character(char),
    /// Nothing: the code point is a decoy.
    Nothing,
    /// A private-use code point whose outline no reference knows.
    Unknown,
}

/// How a web font rewrites the code points it covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FontMap {
    changed: HashMap<char, Drawn>,
    covered: usize,
    /// Code points drawn as themselves.
    pub honest: usize,
    /// Set when a bound stopped the font short.
    pub truncated: bool,
}

impl FontMap {
    /// Returns whether the font changes text (see [`MIN_CHANGED_CODE_POINTS`]).
    pub fn is_decoding(&self) -> bool {
        self.changed.len() >= MIN_CHANGED_CODE_POINTS
    }

    /// Returns what the font draws for `character`, when not itself.
    pub fn drawn(&self, character: char) -> Option<Drawn> {
        self.changed.get(&character).copied()
    }

    /// Returns how many code points the font draws as something else.
    pub fn changed(&self) -> usize {
        self.changed.len()
    }

    /// Returns how many code points the font's cmap covers (as examined).
    pub fn covered(&self) -> usize {
        self.covered
    }

    /// Returns `text` as the font draws it (unchanged unless [`Self::is_decoding`]).
    pub fn rewrite(&self, text: &str) -> String {
        if !self.is_decoding() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        for character in text.chars() {
            match self.drawn(character) {
                None => out.push(character),
                Some(Drawn::Character(drawn)) => out.push(drawn),
                Some(Drawn::Nothing) => {}
                Some(Drawn::Unknown) => out.push(GLYPH_PLACEHOLDER),
            }
        }
        out
    }
}

/// Returns whether `character` is a private-use code point.
pub fn is_private_use(character: char) -> bool {
    matches!(u32::from(character), 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// Code points of a cmap walked at most (mapped or not).
pub const MAX_CMAP_VISITS: usize = 4 * MAX_CMAP_ENTRIES;

/// Unwinds out of a cmap walk that has seen enough.
struct CmapStop;

/// The unicode code points of the font's cmap with their glyphs, and whether
/// the walk stopped early. A hostile cmap can claim every code point many
/// times over (a format 12 group of 2^32 code points, 32k overlapping format 4
/// segments) and `ttf_parser` walks it through a callback that cannot stop,
/// so the walk unwinds out at `MAX_CMAP_VISITS` or the deadline.
fn code_points_of(
    face: &ttf_parser::Face<'_>,
    deadline: Instant,
) -> (Vec<(char, ttf_parser::GlyphId)>, bool) {
    let mut code_points: Vec<(char, ttf_parser::GlyphId)> = Vec::new();
    let Some(cmap) = face.tables().cmap else {
        return (code_points, false);
    };
    let mut visited = 0usize;
    for subtable in cmap.subtables {
        if !subtable.is_unicode() {
            continue;
        }
        let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            subtable.codepoints(|code_point| {
                visited += 1;
                if visited > MAX_CMAP_VISITS
                    || code_points.len() >= MAX_CMAP_ENTRIES
                    || (visited.is_multiple_of(64) && Instant::now() > deadline)
                {
                    // `resume_unwind` skips the panic hook: no log, no report.
                    std::panic::resume_unwind(Box::new(CmapStop));
                }
                if let (Some(character), Some(glyph)) =
                    (char::from_u32(code_point), subtable.glyph_index(code_point))
                {
                    code_points.push((character, glyph));
                }
            });
        }));
        match walked {
            Ok(()) => {}
            Err(payload) if payload.is::<CmapStop>() => return (code_points, true),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    }
    (code_points, false)
}

/// Reads a web font and maps its code points to what it draws (see the module
/// docs). A font is hostile input and the parsers are third-party code: one
/// that panics on it (a `debug_assert` of `ttf_parser` does, on an offset past
/// 4 GiB) leaves the font undecoded, never the page or the crawl failed.
pub fn decode_font(bytes: &[u8], reference: &ReferenceIndex) -> Result<FontMap, FontError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(bytes, reference)))
        .unwrap_or_else(|_| Err(FontError::Parse("the font parser failed on it".into())))
}

fn decode(bytes: &[u8], reference: &ReferenceIndex) -> Result<FontMap, FontError> {
    if bytes.len() > MAX_FONT_BYTES {
        return Err(FontError::TooLarge(bytes.len()));
    }
    let deadline = Instant::now() + FONT_TIME_BUDGET;
    let sfnt = to_sfnt(bytes)?;
    let face = parse_face(&sfnt, 0)?;
    let mut map = FontMap::default();
    let (mut code_points, truncated) = code_points_of(&face, deadline);
    map.truncated = truncated;
    code_points.sort_unstable_by_key(|(character, _)| *character);
    code_points.dedup_by_key(|(character, _)| *character);
    let mut shapes: HashMap<ttf_parser::GlyphId, GlyphShape> = HashMap::new();
    for (examined, (character, glyph)) in code_points.into_iter().enumerate() {
        if examined % 256 == 0 && Instant::now() > deadline {
            map.truncated = true;
            break;
        }
        map.covered += 1;
        let shape = *shapes
            .entry(glyph)
            .or_insert_with(|| glyph_shape(&face, glyph));
        let drawn = match shape {
            GlyphShape::Blank if !character.is_whitespace() => Some(Drawn::Nothing),
            GlyphShape::Blank | GlyphShape::Space => None,
            GlyphShape::Outline(key) => match reference.character(key) {
                Some(_) if reference.draws(key, character) => None,
                Some(real) => Some(Drawn::Character(real)),
                None if is_private_use(character) => Some(Drawn::Unknown),
                None => None,
            },
        };
        match drawn {
            Some(drawn) => {
                map.changed.insert(character, drawn);
            }
            None => map.honest += 1,
        }
    }
    Ok(map)
}
