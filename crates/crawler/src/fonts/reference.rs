//! Reference outlines: the glyphs of fonts whose code points are honest.
//!
//! Sites draw text with subsets of ordinary typefaces, so the outline a site
//! font draws for a code point is, key for key, the outline a reference copy
//! of that typeface draws for the real character. The index holds the keys of
//! the characters text is made of (CJK unified ideographs, CJK and full-width
//! punctuation, ASCII) of every reference font, first font and first
//! character winning a shared key. By default the reference fonts are the CJK
//! fonts installed under the fontconfig directories ([`DEFAULT_FONT_DIRS`]);
//! `crawler.reference_fonts` (a `:`-separated list of files or directories,
//! set with [`use_reference_fonts`]) replaces them. The index is built once
//! per process, on first use.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tracing::{info, warn};

use super::outline::{GlyphShape, glyph_shape, parse_face, to_sfnt};

/// Where fonts are looked for when no list is configured.
pub const DEFAULT_FONT_DIRS: &[&str] = &["/usr/share/fonts", "/usr/local/share/fonts"];
/// The configured reference fonts; unset: [`DEFAULT_FONT_DIRS`].
static CONFIGURED: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Names the reference fonts (`crawler.reference_fonts`: files or directories,
/// `:`-separated; empty keeps the installed fonts). Takes effect when called
/// before the index is first built; the first call wins.
pub fn use_reference_fonts(list: &str) {
    if !list.trim().is_empty() {
        let _ = CONFIGURED.set(
            list.split(':')
                .filter(|part| !part.trim().is_empty())
                .map(PathBuf::from)
                .collect(),
        );
    }
}
/// Font files read into the index.
pub const MAX_REFERENCE_FILES: usize = 16;
/// Bytes of one reference font file.
pub const MAX_REFERENCE_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Keys held by the index (about 16 bytes each).
pub const MAX_REFERENCE_KEYS: usize = 400_000;
/// Faces read from one collection file.
const MAX_FACES_PER_FILE: u32 = 4;
/// Files examined while walking the font directories.
const MAX_FILES_WALKED: usize = 5_000;

/// The code point ranges indexed: what text is made of.
const INDEXED_RANGES: &[(u32, u32)] = &[
    (0x4E00, 0x9FFF), // CJK unified ideographs
    (0x3400, 0x4DBF), // extension A
    (0x3000, 0x303F), // CJK symbols and punctuation
    (0xFF00, 0xFFEF), // full-width forms
    (0x2000, 0x206F), // general punctuation
    (0x0021, 0x007E), // ASCII
    (0x00A0, 0x00FF), // Latin-1
];

/// Outline keys of reference characters.
#[derive(Debug, Default)]
pub struct ReferenceIndex {
    by_key: HashMap<u64, char>,
    /// Every character of keys that several characters draw alike.
    shared: HashMap<u64, Vec<char>>,
    fonts: Vec<String>,
}

impl ReferenceIndex {
    /// Builds the index from font files' bytes (TTF, OTF, TTC, WOFF, WOFF2),
    /// named for the logs.
    pub fn from_fonts<'a>(fonts: impl IntoIterator<Item = (String, &'a [u8])>) -> ReferenceIndex {
        let mut index = ReferenceIndex::default();
        for (name, bytes) in fonts {
            match index.add_font(bytes) {
                Ok(0) => {}
                Ok(_) => index.fonts.push(name),
                Err(reason) => warn!(font = %name, %reason, "reference font not read"),
            }
        }
        index
    }

    /// Returns the character whose reference outline has `key`.
    pub fn character(&self, key: u64) -> Option<char> {
        self.by_key.get(&key).copied()
    }

    /// Returns whether `character` itself draws the outline `key` (which
    /// other characters may draw too).
    pub fn draws(&self, key: u64, character: char) -> bool {
        self.by_key.get(&key) == Some(&character)
            || self
                .shared
                .get(&key)
                .is_some_and(|characters| characters.contains(&character))
    }

    /// Returns the number of keys held.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Returns whether no key is held (no reference font was found).
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Returns the names of the fonts that gave keys.
    pub fn fonts(&self) -> &[String] {
        &self.fonts
    }

    fn insert(&mut self, key: u64, character: char) {
        match self.by_key.get(&key) {
            None => {
                self.by_key.insert(key, character);
            }
            Some(&first) if first != character => {
                let shared = self.shared.entry(key).or_insert_with(|| vec![first]);
                if !shared.contains(&character) && shared.len() < 16 {
                    shared.push(character);
                }
            }
            Some(_) => {}
        }
    }

    fn add_font(&mut self, bytes: &[u8]) -> Result<usize, super::FontError> {
        let sfnt = to_sfnt(bytes)?;
        let faces = ttf_parser::fonts_in_collection(&sfnt)
            .unwrap_or(1)
            .min(MAX_FACES_PER_FILE);
        let mut added = 0;
        for face_index in 0..faces {
            let Ok(face) = parse_face(&sfnt, face_index) else {
                continue;
            };
            // Only fonts that draw CJK text are references for it.
            if face.glyph_index('的').is_none() || face.glyph_index('一').is_none() {
                continue;
            }
            for &(first, last) in INDEXED_RANGES {
                for code_point in first..=last {
                    if self.by_key.len() >= MAX_REFERENCE_KEYS {
                        return Ok(added);
                    }
                    let Some(character) = char::from_u32(code_point) else {
                        continue;
                    };
                    let Some(glyph) = face.glyph_index(character) else {
                        continue;
                    };
                    if let GlyphShape::Outline(key) = glyph_shape(&face, glyph) {
                        self.insert(key, character);
                        added += 1;
                    }
                }
            }
        }
        Ok(added)
    }
}

/// Returns the process-wide index of the configured or installed reference fonts.
pub fn system_reference() -> Arc<ReferenceIndex> {
    static INDEX: OnceLock<Arc<ReferenceIndex>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let started = std::time::Instant::now();
            let roots: Vec<PathBuf> = CONFIGURED
                .get()
                .cloned()
                .unwrap_or_else(|| DEFAULT_FONT_DIRS.iter().map(PathBuf::from).collect());
            let index = index_files(&font_files(&roots));
            info!(
                fonts = ?index.fonts(),
                keys = index.len(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "reference fonts indexed"
            );
            Arc::new(index)
        })
        .clone()
}

/// Reads and indexes font files, skipping those over the size bound.
pub fn index_files(files: &[PathBuf]) -> ReferenceIndex {
    let mut loaded: Vec<(String, Vec<u8>)> = Vec::new();
    for file in files.iter().take(MAX_REFERENCE_FILES) {
        let small =
            std::fs::metadata(file).is_ok_and(|meta| meta.len() <= MAX_REFERENCE_FILE_BYTES);
        if !small {
            continue;
        }
        match std::fs::read(file) {
            Ok(bytes) => loaded.push((file.display().to_string(), bytes)),
            Err(error) => warn!(font = %file.display(), %error, "reference font not read"),
        }
    }
    ReferenceIndex::from_fonts(
        loaded
            .iter()
            .map(|(name, bytes)| (name.clone(), bytes.as_slice())),
    )
}

/// Returns the font files under `roots` (files, or directories walked), sorted
/// so the index does not depend on directory order; likely CJK fonts first.
pub fn font_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending: Vec<PathBuf> = roots.to_vec();
    let mut walked = 0usize;
    while let Some(path) = pending.pop() {
        walked += 1;
        if walked > MAX_FILES_WALKED {
            break;
        }
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                if let Ok(entries) = std::fs::read_dir(&path) {
                    pending
                        .extend(entries.filter_map(|entry| entry.ok().map(|entry| entry.path())));
                }
            }
            Ok(meta) if meta.is_file() && is_font_file(&path) => files.push(path),
            _ => {}
        }
    }
    files.sort_by_key(|path| (!looks_cjk(path), path.clone()));
    files
}

fn is_font_file(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            matches!(
                extension.to_ascii_lowercase().as_str(),
                "ttf" | "otf" | "ttc" | "otc" | "woff" | "woff2"
            )
        })
}

/// Names of CJK font files, read first so the file bound does not starve them.
fn looks_cjk(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    [
        "cjk", "wqy", "noto", "han", "droid", "arphic", "ukai", "uming", "hei", "song", "kai",
        "ming",
    ]
    .iter()
    .any(|hint| name.contains(hint))
}
