//! Upload decoding (the crawler's charset rules, plus what an upload refuses)
//! and paragraph normalization shared by the TXT and EPUB paths.

use copyhound_core::charset;
use copyhound_core::{Error, Result};
use encoding_rs::Encoding;

use super::limits::{MAX_FILE_BYTES, too_large};

/// A decoded upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text, BOM removed.
    pub text: String,
    /// The encoding it was decoded with (`UTF-8`, `gb18030`, ...).
    pub encoding: &'static str,
    /// What was replaced while decoding, for the publisher to check.
    pub warnings: Vec<String>,
}

/// Share of replacement characters above which a decode is judged wrong.
const MAX_REPLACEMENT_RATIO: f64 = 0.01;

/// Decodes a text upload with the crawler's rules for undeclared charsets
/// (`copyhound_core::charset::decode_unlabelled`): a BOM wins, then valid
/// UTF-8, then UTF-8 with a few invalid bytes (with a warning saying how many
/// were replaced), then detection (GBK and GB2312 as their superset GB18030).
/// Binary data, text that decodes to mostly garbage and files over
/// [`MAX_FILE_BYTES`] are refused.
pub fn decode_text(bytes: &[u8]) -> Result<Decoded> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(too_large(format!(
            "the file is larger than {MAX_FILE_BYTES} bytes (limit per text upload)"
        )));
    }
    if bytes.contains(&0) && Encoding::for_bom(bytes).is_none() {
        return Err(Error::invalid(
            "the file looks binary (it contains NUL bytes); upload a UTF-8 or GBK text file",
        ));
    }
    let decoding = charset::decode_unlabelled(bytes);
    let name = decoding.encoding.name();
    let mut warnings = Vec::new();
    if let Some(invalid) = decoding.damaged_utf8_bytes {
        let (noun, verb) = if invalid == 1 {
            ("byte", "it was")
        } else {
            ("bytes", "they were")
        };
        warnings.push(format!(
            "the file is UTF-8 with {invalid} invalid {noun}; {verb} replaced with U+FFFD (\u{fffd})"
        ));
    } else if decoding.had_errors {
        let total = decoding.text.chars().count().max(1);
        let replaced = decoding.text.chars().filter(|c| *c == '\u{fffd}').count();
        if replaced as f64 / total as f64 > MAX_REPLACEMENT_RATIO {
            return Err(Error::invalid(format!(
                "cannot decode the file: {replaced} of {total} characters are invalid as {name}; upload UTF-8 or GBK text"
            )));
        }
        warnings.push(format!(
            "{replaced} characters are invalid as {name} and were replaced with U+FFFD (\u{fffd})"
        ));
    }
    Ok(Decoded {
        text: decoding.text,
        encoding: name,
        warnings,
    })
}

/// Returns the text with every line trimmed (ASCII and full-width spaces) and
/// empty lines removed: one paragraph per line.
pub fn normalize_paragraphs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let trimmed =
            line.trim_matches(|c: char| c.is_whitespace() || c == '\u{3000}' || c == '\u{feff}');
        if trimmed.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(trimmed);
    }
    out
}

#[cfg(test)]
mod tests {
    use encoding_rs::GBK;

    use super::*;

    #[test]
    fn utf8_gbk_and_bom_are_detected() {
        let text =
            "第一章 风起\n　　天色已晚，林中起了大风。少年背着柴往回走，心里想着明天的事情。";
        let utf8 = decode_text(text.as_bytes()).unwrap();
        assert_eq!(utf8.encoding, "UTF-8");
        assert_eq!(utf8.text, text);
        let (gbk_bytes, _, _) = GBK.encode(text);
        let gbk = decode_text(&gbk_bytes).unwrap();
        assert_eq!(gbk.encoding, "gb18030");
        assert_eq!(gbk.text, text);
        let mut with_bom = vec![0xef, 0xbb, 0xbf];
        with_bom.extend_from_slice(text.as_bytes());
        assert_eq!(decode_text(&with_bom).unwrap().text, text);
    }

    #[test]
    fn utf8_with_invalid_bytes_decodes_lossily_with_a_warning() {
        let text = "第一章 风起\n天色已晚，林中起了大风。少年背着柴往回走，心里想着明天的事情。";
        let mut bytes = text.as_bytes().to_vec();
        bytes.insert(text.find("林中").unwrap(), 0xff);
        let decoded = decode_text(&bytes).unwrap();
        assert_eq!(decoded.encoding, "UTF-8");
        assert_eq!(decoded.text, text.replace("林中", "\u{fffd}林中"));
        assert_eq!(
            decoded.warnings,
            ["the file is UTF-8 with 1 invalid byte; it was replaced with U+FFFD (\u{fffd})"]
        );
        assert!(decode_text(text.as_bytes()).unwrap().warnings.is_empty());
    }

    #[test]
    fn other_encodings_still_decode_right() {
        let text = "話說差人拘了陸笏臣到了縣前，便去稟報。棣華扶了母親過來，伏侍坐下。";
        let (big5, _, _) = encoding_rs::BIG5.encode(text);
        let decoded = decode_text(&big5).unwrap();
        assert_eq!((decoded.encoding, decoded.text.as_str()), ("Big5", text));
        let mut utf16 = vec![0xff, 0xfe];
        for unit in text.encode_utf16() {
            utf16.extend_from_slice(&unit.to_le_bytes());
        }
        let decoded = decode_text(&utf16).unwrap();
        assert_eq!(
            (decoded.encoding, decoded.text.as_str()),
            ("UTF-16LE", text)
        );
        let latin = b"Chapter 1\nLe caf\xe9 \xe9tait cr\xe8me, la cr\xe8me br\xfbl\xe9e aussi.";
        let decoded = decode_text(latin).unwrap();
        assert_eq!(decoded.encoding, "windows-1252");
        assert!(
            decoded.text.contains("café était crème"),
            "{}",
            decoded.text
        );
    }

    #[test]
    fn binary_is_refused() {
        let error = decode_text(&[0x50, 0x4b, 0x03, 0x04, 0, 0, 0xff]).unwrap_err();
        assert!(error.message().contains("binary"), "{error}");
    }

    #[test]
    fn paragraphs_are_trimmed_and_empty_lines_dropped() {
        assert_eq!(
            normalize_paragraphs("　　甲\r\n\n  乙  \n\u{3000}\n丙"),
            "甲\n乙\n丙"
        );
    }
}
