//! Charset detection and paragraph normalization shared by the TXT and EPUB paths.

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use copyhound_core::{Error, Result};
use encoding_rs::{Encoding, GB18030, GBK, UTF_8};

/// A decoded upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text, BOM removed.
    pub text: String,
    /// The encoding it was decoded with (`UTF-8`, `gb18030`, ...).
    pub encoding: &'static str,
}

/// Share of replacement characters above which a decode is judged wrong.
const MAX_REPLACEMENT_RATIO: f64 = 0.01;

/// Decodes a text upload: a BOM wins, then valid UTF-8, then a detector guess
/// (GBK and GB2312 are decoded as their superset GB18030). Binary data and text
/// that decodes to mostly garbage are refused.
pub fn decode_text(bytes: &[u8]) -> Result<Decoded> {
    if bytes.contains(&0) && Encoding::for_bom(bytes).is_none() {
        return Err(Error::invalid(
            "the file looks binary (it contains NUL bytes); upload a UTF-8 or GBK text file",
        ));
    }
    let encoding = match Encoding::for_bom(bytes) {
        Some((encoding, _)) => encoding,
        None if std::str::from_utf8(bytes).is_ok() => UTF_8,
        None => {
            let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
            detector.feed(bytes, true);
            let guess = detector.guess(None, Utf8Detection::Allow);
            if guess == GBK { GB18030 } else { guess }
        }
    };
    let (text, used, had_errors) = encoding.decode(bytes);
    if had_errors {
        let total = text.chars().count().max(1);
        let replaced = text.chars().filter(|c| *c == '\u{fffd}').count();
        if replaced as f64 / total as f64 > MAX_REPLACEMENT_RATIO {
            return Err(Error::invalid(format!(
                "cannot decode the file: {replaced} of {total} characters are invalid as {}; upload UTF-8 or GBK text",
                used.name()
            )));
        }
    }
    Ok(Decoded {
        text: text.into_owned(),
        encoding: used.name(),
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
