//! Telling UTF-8 with a few damaged bytes from text in another encoding. Both
//! text decoders (uploads and crawled pages) ask this before a charset
//! detector: a detector never picks UTF-8 for bytes that are not valid UTF-8, so
//! one stray byte would turn a UTF-8 novel into windows-1252 mojibake. Text in
//! GBK, Big5 or a single-byte charset almost never forms valid multi-byte UTF-8
//! sequences, so "many valid multi-byte characters per invalid sequence" tells
//! the two apart; such bytes decode lossily as UTF-8 (U+FFFD per invalid
//! sequence) and callers report how many bytes were replaced.

/// Valid multi-byte characters needed per invalid sequence before bytes count as
/// damaged UTF-8 (GBK read as UTF-8 gives about one valid character per ten invalid).
pub const MIN_VALID_CHARS_PER_INVALID_SEQUENCE: usize = 8;

/// What a UTF-8 validation pass found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Utf8Damage {
    /// Bytes that belong to no valid sequence (each maximal invalid subpart
    /// becomes one U+FFFD when decoded lossily).
    pub invalid_bytes: usize,
    /// Maximal invalid subparts: the U+FFFD a lossy decode inserts.
    pub invalid_sequences: usize,
    /// Valid characters of two to four bytes.
    pub valid_multibyte_chars: usize,
}

impl Utf8Damage {
    /// Returns whether the bytes are UTF-8 apart from a few invalid sequences
    /// (valid UTF-8 is not damaged).
    pub fn is_damaged_utf8(&self) -> bool {
        self.invalid_sequences > 0
            && self.valid_multibyte_chars
                >= self
                    .invalid_sequences
                    .saturating_mul(MIN_VALID_CHARS_PER_INVALID_SEQUENCE)
    }
}

/// Returns the invalid and valid multi-byte sequences of `bytes` read as UTF-8.
pub fn utf8_damage(bytes: &[u8]) -> Utf8Damage {
    let mut damage = Utf8Damage::default();
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                damage.valid_multibyte_chars += count_multibyte(valid.as_bytes());
                return damage;
            }
            Err(error) => {
                let valid_up_to = error.valid_up_to();
                damage.valid_multibyte_chars += count_multibyte(&rest[..valid_up_to]);
                let invalid = error.error_len().unwrap_or(rest.len() - valid_up_to);
                damage.invalid_sequences += 1;
                damage.invalid_bytes += invalid;
                rest = &rest[valid_up_to + invalid..];
            }
        }
    }
}

/// Returns the damage when `bytes` are UTF-8 apart from a few invalid
/// sequences; `None` when they are valid UTF-8 or likelier another encoding.
pub fn damaged_utf8(bytes: &[u8]) -> Option<Utf8Damage> {
    let damage = utf8_damage(bytes);
    damage.is_damaged_utf8().then_some(damage)
}

/// Counts lead bytes of multi-byte characters in valid UTF-8.
fn count_multibyte(valid: &[u8]) -> usize {
    valid.iter().filter(|byte| **byte >= 0xc0).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stray_byte_in_utf8_is_damage() {
        let mut bytes = "天色已晚，林中起了大风。少年背着柴往回走。"
            .as_bytes()
            .to_vec();
        bytes.insert(6, 0xff);
        bytes.extend_from_slice(&[0xe4, 0xb8]);
        let damage = damaged_utf8(&bytes).expect("damaged utf-8");
        assert_eq!(damage.invalid_sequences, 2);
        assert_eq!(damage.invalid_bytes, 3);
        assert_eq!(damage.valid_multibyte_chars, 21);
        assert_eq!(
            String::from_utf8_lossy(&bytes).matches('\u{fffd}').count(),
            damage.invalid_sequences
        );
    }

    #[test]
    fn valid_utf8_and_other_encodings_are_not_damage() {
        assert_eq!(damaged_utf8("天色已晚".as_bytes()), None);
        assert_eq!(damaged_utf8(b"plain ascii"), None);
        // GBK and Big5 Chinese, and Latin-1 French, are not UTF-8 at all.
        let gbk: &[u8] = &[
            0xcc, 0xec, 0xc9, 0xab, 0xd2, 0xd1, 0xcd, 0xed, 0xa3, 0xac, 0xc1, 0xd6, 0xd6, 0xd0,
        ];
        assert_eq!(damaged_utf8(&gbk.repeat(20)), None);
        let big5: &[u8] = &[0xa4, 0xd1, 0xa6, 0xe2, 0xa4, 0x77, 0xb1, 0xdf];
        assert_eq!(damaged_utf8(&big5.repeat(20)), None);
        assert_eq!(damaged_utf8(b"caf\xe9 cr\xe8me br\xfbl\xe9e"), None);
    }
}
