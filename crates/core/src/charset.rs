//! Charset decoding of fetched bodies. Pirate sites lie about their charset as
//! often as they state it (a page declared `gb2312` is usually GBK), so the
//! declared charset is checked against the bytes and detection takes over when
//! it does not fit.
//!
//! Order: operator override, byte order mark, HTTP `Content-Type` charset,
//! `<meta charset>` / `http-equiv` in the first 4 KiB, then chardetng. GB2312
//! and GBK are decoded as GB18030 (a superset); Big5 is WHATWG Big5 (with
//! HKSCS). Numeric character references are left to the HTML parser.
//!
//! UTF-8 with a few invalid bytes (a truncated body, one corrupt byte) stays
//! UTF-8, decoded lossily: a detector never picks UTF-8 for invalid bytes, and
//! would turn the whole page into windows-1252 mojibake that matches nothing.
//! `crate::utf8` tells such damage from text in another encoding. The
//! detector reads at most [`MAX_DETECTION_BYTES`], cut at a line end.
//!
//! Uploaded text files (no header, no markup) go through the same rules by
//! [`decode_unlabelled`], which also says what was replaced so the upload can
//! report it or refuse garbage: one decoder for crawled pages and uploads.

use crate::utf8::damaged_utf8;
use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, GB18030, UTF_8};

/// How far into the body `<meta>` charset declarations are looked for.
const META_SCAN_BYTES: usize = 4096;
/// Most bytes the charset detector reads.
pub const MAX_DETECTION_BYTES: usize = 1 << 20;

/// A decoded body and the charset it was decoded with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// Lowercase WHATWG name of the encoding used (`gb18030`, `big5`, `utf-8`).
    pub charset: String,
}

/// Decodes `bytes` to text, choosing the charset as described in the module docs.
///
/// A declared charset (header or meta) that does not decode the bytes cleanly is
/// second-guessed by detection; invalid sequences that remain become U+FFFD.
pub fn decode_body(
    bytes: &[u8],
    header_content_type: Option<&str>,
    override_charset: Option<&str>,
) -> Decoded {
    if let Some(encoding) = override_charset.and_then(encoding_for_label) {
        return decode_with(encoding, bytes);
    }
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        return decode_with(encoding, &bytes[bom_len..]);
    }
    let declared = header_content_type
        .and_then(charset_param)
        .and_then(encoding_for_label)
        .or_else(|| meta_charset(bytes));
    match declared {
        Some(encoding) => decode_declared(encoding, bytes),
        None => {
            let decoding = decode_unlabelled(bytes);
            Decoded {
                text: decoding.text,
                charset: charset_name(decoding.encoding),
            }
        }
    }
}

/// Text decoded without a declared charset, and what decoding had to replace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoding {
    /// The text, byte order mark removed.
    pub text: String,
    /// The encoding used.
    pub encoding: &'static Encoding,
    /// Invalid bytes of an otherwise UTF-8 text, replaced with U+FFFD.
    pub damaged_utf8_bytes: Option<usize>,
    /// Whether the chosen encoding met invalid sequences (replaced with U+FFFD).
    pub had_errors: bool,
}

/// Decodes bytes with no declared charset: a byte order mark wins, then valid
/// UTF-8, then UTF-8 with a few invalid bytes (lossily), then the detector.
pub fn decode_unlabelled(bytes: &[u8]) -> Decoding {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        return Decoding {
            text: text.into_owned(),
            encoding,
            damaged_utf8_bytes: None,
            had_errors,
        };
    }
    // Valid UTF-8 is what detection would choose anyway; checking it is ~50x cheaper.
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Decoding {
            text: text.to_string(),
            encoding: UTF_8,
            damaged_utf8_bytes: None,
            had_errors: false,
        };
    }
    if let Some(damage) = damaged_utf8(bytes) {
        return Decoding {
            text: String::from_utf8_lossy(bytes).into_owned(),
            encoding: UTF_8,
            damaged_utf8_bytes: Some(damage.invalid_bytes),
            had_errors: true,
        };
    }
    let encoding = detect(bytes);
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    Decoding {
        text: text.into_owned(),
        encoding,
        damaged_utf8_bytes: None,
        had_errors,
    }
}

/// Decodes `bytes` lossily as UTF-8 when they are UTF-8 apart from a few invalid sequences.
fn decode_damaged_utf8(bytes: &[u8]) -> Option<Decoded> {
    let damage = damaged_utf8(bytes)?;
    tracing::debug!(
        invalid_bytes = damage.invalid_bytes,
        "body is utf-8 with invalid bytes; they were replaced with u+fffd"
    );
    Some(decode_with(UTF_8, bytes))
}

/// Returns the encoding for a charset label, with GB2312/GBK mapped to GB18030.
pub fn encoding_for_label(label: &str) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(label.trim().as_bytes())?;
    if encoding == encoding_rs::GBK {
        return Some(GB18030);
    }
    // A page cannot really be UTF-16 after an ASCII-compatible meta; WHATWG says UTF-8.
    if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        return Some(UTF_8);
    }
    Some(encoding)
}

/// Returns the `charset` parameter of a `Content-Type` value.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']))
    })
}

/// Returns the charset declared by a `<meta>` tag in the first 4 KiB, if any.
pub fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_SCAN_BYTES)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(offset) = find(&lower[from..], b"<meta") {
        let start = from + offset;
        let end = find(&lower[start..], b">").map_or(lower.len(), |close| start + close);
        if let Some(encoding) = charset_in_tag(&lower[start..end]).and_then(encoding_for_label) {
            return Some(encoding);
        }
        from = end.max(start + 5);
    }
    None
}

fn charset_in_tag(tag: &[u8]) -> Option<&str> {
    let at = find(tag, b"charset")?;
    let rest = &tag[at + 7..];
    let rest = rest
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|skip| &rest[skip..])?;
    let rest = rest.strip_prefix(b"=")?;
    let start = rest
        .iter()
        .position(|b| !matches!(b, b' ' | b'"' | b'\'' | b'\t'))?;
    let value = &rest[start..];
    let len = value
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':')))
        .unwrap_or(value.len());
    std::str::from_utf8(&value[..len])
        .ok()
        .filter(|label| !label.is_empty())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn decode_declared(declared: &'static Encoding, bytes: &[u8]) -> Decoded {
    if let Some(text) = declared.decode_without_bom_handling_and_without_replacement(bytes) {
        // Single-byte encodings decode anything; trust them only if detection agrees
        // that the page is not a multi-byte CJK page, nor damaged UTF-8.
        if !declared.is_single_byte() || bytes.is_ascii() {
            return Decoded {
                text: text.into_owned(),
                charset: charset_name(declared),
            };
        }
        if let Some(decoded) = decode_damaged_utf8(bytes) {
            return decoded;
        }
        let guessed = detect(bytes);
        if guessed.is_single_byte() || guessed == declared {
            return Decoded {
                text: text.into_owned(),
                charset: charset_name(declared),
            };
        }
        return decode_preferring(guessed, declared, bytes);
    }
    decode_damaged_utf8(bytes).unwrap_or_else(|| decode_preferring(detect(bytes), declared, bytes))
}

/// Decodes with `guessed` if it fits the bytes cleanly, else with `fallback`.
fn decode_preferring(
    guessed: &'static Encoding,
    fallback: &'static Encoding,
    bytes: &[u8],
) -> Decoded {
    match guessed.decode_without_bom_handling_and_without_replacement(bytes) {
        Some(text) if guessed != fallback => Decoded {
            text: text.into_owned(),
            charset: charset_name(guessed),
        },
        _ => decode_with(fallback, bytes),
    }
}

/// The detector's guess from the first [`MAX_DETECTION_BYTES`], cut at a line
/// end so a character split by the cut does not mislead it.
fn detect(bytes: &[u8]) -> &'static Encoding {
    let sample = match bytes.get(..MAX_DETECTION_BYTES) {
        Some(head) => head
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(head, |end| &head[..=end]),
        None => bytes,
    };
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(sample, true);
    let guessed = detector.guess(None, Utf8Detection::Allow);
    if guessed == encoding_rs::GBK {
        GB18030
    } else {
        guessed
    }
}

fn decode_with(encoding: &'static Encoding, bytes: &[u8]) -> Decoded {
    let (text, _had_errors) = encoding.decode_without_bom_handling(bytes);
    Decoded {
        text: text.into_owned(),
        charset: charset_name(encoding),
    }
}

fn charset_name(encoding: &'static Encoding) -> String {
    encoding.name().to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gbk(text: &str) -> Vec<u8> {
        GB18030.encode(text).0.into_owned()
    }

    #[test]
    fn meta_declarations_are_found() {
        let page = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\" />";
        assert_eq!(meta_charset(page), Some(GB18030));
        assert_eq!(
            meta_charset(b"<meta charset='big5'>"),
            Some(encoding_rs::BIG5)
        );
        assert_eq!(meta_charset(b"<meta name=x><p>charset=gbk</p>"), None);
        assert_eq!(charset_param("text/html; Charset=\"UTF-8\""), Some("UTF-8"));
    }

    #[test]
    fn gbk_declared_as_gb2312_decodes() {
        let mut page = b"<meta charset=\"gb2312\"><p>".to_vec();
        page.extend(gbk("女娲忽然醒来了。镕"));
        let decoded = decode_body(&page, Some("text/html"), None);
        assert_eq!(decoded.charset, "gb18030");
        assert!(decoded.text.contains("女娲忽然醒来了。镕"));
    }

    #[test]
    fn a_lying_declaration_is_second_guessed() {
        let mut page = b"<meta charset=\"utf-8\"><p>".to_vec();
        page.extend(gbk(
            &"叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(5)
        ));
        let decoded = decode_body(&page, None, None);
        assert_eq!(decoded.charset, "gb18030");
        assert!(decoded.text.contains("灯烛辉煌"));
        let mut latin = b"<meta charset=\"iso-8859-1\"><p>".to_vec();
        latin.extend(gbk(
            &"叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(5)
        ));
        assert!(decode_body(&latin, None, None).text.contains("灯烛辉煌"));
    }

    #[test]
    fn header_bom_override_and_detection() {
        let big5 = encoding_rs::BIG5
            .encode("話說差人拘了陸笏臣到了縣前，便去稟報")
            .0
            .into_owned();
        let decoded = decode_body(&big5, Some("text/html; charset=big5"), None);
        assert_eq!(
            (decoded.charset.as_str(), decoded.text.as_str()),
            ("big5", "話說差人拘了陸笏臣到了縣前，便去稟報")
        );
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend("<meta charset=gbk>中文".as_bytes());
        assert_eq!(decode_body(&bom, None, None).text, "<meta charset=gbk>中文");
        assert_eq!(decode_body(&gbk("中文"), None, Some("gbk")).text, "中文");
        let undeclared = gbk(&"棣华扶了母亲过来，伏侍坐下。忽见墙上贴的五彩画张旁边".repeat(4));
        assert!(
            decode_body(&undeclared, None, None)
                .text
                .starts_with("棣华扶了母亲")
        );
    }

    #[test]
    fn utf8_with_a_bad_byte_stays_utf8() {
        let text = "<p>叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。</p>";
        let mut page = text.as_bytes().to_vec();
        page.insert(text.find("灯烛").unwrap(), 0xff);
        let expected = text.replace("灯烛", "\u{fffd}灯烛");
        for (header, meta) in [
            (None, ""),
            (Some("text/html; charset=utf-8"), ""),
            (None, "<meta charset=\"iso-8859-1\">"),
        ] {
            let mut body = meta.as_bytes().to_vec();
            body.extend_from_slice(&page);
            let decoded = decode_body(&body, header, None);
            assert_eq!(decoded.charset, "utf-8", "{header:?} {meta}");
            assert_eq!(decoded.text, format!("{meta}{expected}"));
        }
        // A page cut inside its last character is still UTF-8.
        let cut = &text.as_bytes()[..text.len() - 5];
        assert_eq!(decode_body(cut, None, None).charset, "utf-8");
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A seeded xorshift: no fuzzing crate in this one, the same cases every run.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let headers = [
            None,
            Some("text/html; charset=utf-8"),
            Some("text/html; charset=gbk"),
            Some("text/html; charset=iso-8859-1"),
            Some("text/html; charset=utf-16"),
            Some("text/html; charset=\"x\""),
        ];
        for case in 0..3000 {
            let len = (next() % 600) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if case % 3 == 0 {
                // Mostly text with a few odd bytes, where the charset guesses are close calls.
                let text = "<meta charset=gb2312>天色已晚，林中起了大风。".repeat(1 + case % 5);
                let at = (next() as usize) % (text.len() + 1);
                bytes = [
                    &text.as_bytes()[..at],
                    &bytes[..len.min(3)],
                    &text.as_bytes()[at..],
                ]
                .concat();
            }
            let header = headers[case % headers.len()];
            let decoded = decode_body(&bytes, header, None);
            assert!(decoded.text.chars().count() <= bytes.len(), "{bytes:?}");
            assert!(!decoded.charset.is_empty());
        }
    }
}
