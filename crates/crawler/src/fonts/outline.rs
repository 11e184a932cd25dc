//! Font files to faces, and glyphs to outline keys.
//!
//! A glyph's key hashes its outline with the coordinates scaled to a
//! 1000-unit em and snapped to a grid of [`GRID_UNITS`], so the same drawing
//! keys alike in a subset, in a WOFF or WOFF2 wrapper (whose `glyf` transform
//! is lossless) and at another units-per-em.

use ttf_parser::{Face, GlyphId, OutlineBuilder};

/// Decompressed size a WOFF or WOFF2 file may declare.
pub const MAX_SFNT_BYTES: usize = 32 * 1024 * 1024;
/// Units of the 1000-unit em to which outline coordinates are snapped.
const GRID_UNITS: f32 = 4.0;
/// Outline commands hashed per glyph; bigger glyphs are not text.
const MAX_OUTLINE_COMMANDS: usize = 4096;

/// Why a font file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FontError {
    /// The file is over a bound (bytes or declared decompressed size).
    TooLarge(usize),
    /// The WOFF or WOFF2 wrapper could not be decompressed.
    Wrapper(String),
    /// The font tables could not be parsed.
    Parse(String),
}

impl std::fmt::Display for FontError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FontError::TooLarge(bytes) => {
                write!(formatter, "font over a size bound ({bytes} bytes)")
            }
            FontError::Wrapper(reason) => write!(formatter, "font wrapper not decoded: {reason}"),
            FontError::Parse(reason) => write!(formatter, "font not parsed: {reason}"),
        }
    }
}

impl std::error::Error for FontError {}

/// Returns the sfnt (TrueType/OpenType) bytes of a WOFF2, WOFF, TTF, OTF or TTC file.
pub fn to_sfnt(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, FontError> {
    let signature = bytes.get(..4).unwrap_or_default();
    let wrapped = signature == b"wOF2" || signature == b"wOFF";
    if !wrapped {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    // Both headers give totalSfntSize at offset 16: refuse bombs before inflating.
    let declared = bytes
        .get(16..20)
        .map(|raw| u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) as usize)
        .ok_or_else(|| FontError::Wrapper("truncated header".to_string()))?;
    if declared > MAX_SFNT_BYTES {
        return Err(FontError::TooLarge(declared));
    }
    let decoded = if signature == b"wOF2" {
        wuff::decompress_woff2(bytes)
    } else {
        wuff::decompress_woff1(bytes)
    };
    decoded
        .map(std::borrow::Cow::Owned)
        .map_err(|error| FontError::Wrapper(format!("{error:?}")))
}

/// Parses face `index` of sfnt bytes.
pub fn parse_face(sfnt: &[u8], index: u32) -> Result<Face<'_>, FontError> {
    Face::parse(sfnt, index).map_err(|error| FontError::Parse(error.to_string()))
}

/// What one glyph draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlyphShape {
    /// No contours and (almost) no advance: the character is not drawn at all.
    Blank,
    /// No contours but an advance: a space.
    Space,
    /// An outline, by its key.
    Outline(u64),
}

/// Returns what glyph `glyph` of `face` draws.
pub fn glyph_shape(face: &Face<'_>, glyph: GlyphId) -> GlyphShape {
    let units_per_em = f32::from(face.units_per_em().max(16));
    let scale = 1000.0 / units_per_em;
    let mut hasher = OutlineHasher::new(scale);
    let drawn = face.outline_glyph(glyph, &mut hasher).is_some() && hasher.commands > 0;
    if drawn && hasher.commands <= MAX_OUTLINE_COMMANDS {
        return GlyphShape::Outline(hasher.finish());
    }
    if drawn {
        // Too big to be a character: keyed by its command count only, which
        // matches no reference character of ordinary size.
        return GlyphShape::Outline(hasher.commands as u64);
    }
    let advance = face.glyph_hor_advance(glyph).map_or(0.0, f32::from) * scale;
    if advance <= BLANK_ADVANCE_UNITS {
        GlyphShape::Blank
    } else {
        GlyphShape::Space
    }
}

/// Advance (of a 1000-unit em) up to which an empty glyph draws nothing.
const BLANK_ADVANCE_UNITS: f32 = 50.0;

/// FNV-1a over the snapped outline commands: stable across builds and runs.
struct OutlineHasher {
    scale: f32,
    state: u64,
    commands: usize,
}

impl OutlineHasher {
    fn new(scale: f32) -> OutlineHasher {
        OutlineHasher {
            scale,
            state: 0xcbf2_9ce4_8422_2325,
            commands: 0,
        }
    }

    fn byte(&mut self, byte: u8) {
        self.state ^= u64::from(byte);
        self.state = self.state.wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn command(&mut self, tag: u8, points: &[f32]) {
        self.commands += 1;
        if self.commands > MAX_OUTLINE_COMMANDS {
            return;
        }
        self.byte(tag);
        for value in points {
            let snapped = (value * self.scale / GRID_UNITS).round() as i32;
            for byte in snapped.to_le_bytes() {
                self.byte(byte);
            }
        }
    }

    fn finish(&self) -> u64 {
        self.state
    }
}

impl OutlineBuilder for OutlineHasher {
    fn move_to(&mut self, x: f32, y: f32) {
        self.command(b'M', &[x, y]);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        self.command(b'L', &[x, y]);
    }
    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        self.command(b'Q', &[x1, y1, x, y]);
    }
    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        self.command(b'C', &[x1, y1, x2, y2, x, y]);
    }
    fn close(&mut self) {
        self.command(b'Z', &[]);
    }
}
