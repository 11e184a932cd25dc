//! Phonetic view of Han text.
//!
//! Homophone substitution (同音字) is the cheapest evasion of character
//! fingerprints, and pinyin is shared by simplified, traditional and variant
//! forms. The DNA uses the first letter of each character's pinyin; the
//! verifier uses whole toneless syllables (about 400 classes: far more precise
//! than 20 initials) optionally folded by the usual near-homophone confusions
//! (z/zh, c/ch, s/sh, n/l, r/l, f/h, -n/-ng). Polyphones take the pinyin
//! crate's first (most common) reading, without context: deterministic, and
//! the same on both sides of a comparison.

use pinyin::ToPinyin;

use crate::hash::FixedMap;

const TABLE_START: u32 = 0x3400;
const TABLE_END: u32 = 0xA000;

/// Offset that keeps syllable tokens apart from character tokens.
pub(crate) const SYLLABLE_TOKEN_BASE: u32 = 0x0011_0000;

/// Syllable tables, built once.
#[derive(Debug)]
pub(crate) struct Phonetic {
    /// Per char in the table range: syllable id + 1, or 0 without pinyin.
    table: Vec<u16>,
    by_name: FixedMap<&'static str, u16>,
    /// Syllable id -> near-homophone class id.
    fuzzy: Vec<u16>,
    /// Syllable id -> first letter (`b'a'..=b'z'`).
    letter: Vec<u8>,
}

/// Folds the usual near-homophone confusions of a toneless syllable.
fn fuzzy_form(s: &str) -> String {
    let (initial, rest) = if let Some(r) = s.strip_prefix("zh") {
        ("z", r)
    } else if let Some(r) = s.strip_prefix("ch") {
        ("c", r)
    } else if let Some(r) = s.strip_prefix("sh") {
        ("s", r)
    } else if let Some(r) = s.strip_prefix('n').or_else(|| s.strip_prefix('r')) {
        ("l", r)
    } else if let Some(r) = s.strip_prefix('f') {
        ("h", r)
    } else {
        ("", s)
    };
    let rest = rest
        .strip_suffix('g')
        .filter(|r| r.ends_with("an") || r.ends_with("en") || r.ends_with("in"))
        .unwrap_or(rest);
    format!("{initial}{rest}")
}

impl Phonetic {
    pub(crate) fn new() -> Self {
        let mut raw: Vec<Option<&'static str>> =
            Vec::with_capacity((TABLE_END - TABLE_START) as usize);
        for u in TABLE_START..TABLE_END {
            raw.push(
                char::from_u32(u)
                    .and_then(|c| c.to_pinyin())
                    .map(|p| p.plain()),
            );
        }
        let mut names: Vec<&'static str> = raw.iter().flatten().copied().collect();
        names.sort_unstable();
        names.dedup();
        let by_name: FixedMap<&'static str, u16> = names
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i as u16))
            .collect();
        let table = raw
            .iter()
            .map(|r| r.and_then(|n| by_name.get(n)).map_or(0, |&id| id + 1))
            .collect();
        let mut fuzzy_names: Vec<String> = names.iter().map(|n| fuzzy_form(n)).collect();
        let fuzzy_of_name = fuzzy_names.clone();
        fuzzy_names.sort_unstable();
        fuzzy_names.dedup();
        let fuzzy = fuzzy_of_name
            .iter()
            .map(|f| fuzzy_names.binary_search(f).map_or(0, |i| i as u16))
            .collect();
        let letter = names
            .iter()
            .map(|n| n.bytes().next().unwrap_or(b'a'))
            .collect();
        Self {
            table,
            by_name,
            fuzzy,
            letter,
        }
    }

    /// Toneless syllable id of a Han char, if it has a reading.
    #[inline]
    pub(crate) fn syllable(&self, c: char) -> Option<u16> {
        let u = u32::from(c);
        if (TABLE_START..TABLE_END).contains(&u) {
            match self.table[(u - TABLE_START) as usize] {
                0 => None,
                id => Some(id - 1),
            }
        } else if u >= 0x20000 {
            c.to_pinyin()
                .and_then(|p| self.by_name.get(p.plain()).copied())
        } else {
            None
        }
    }

    /// First pinyin letter (`b'a'..=b'z'`) of a Han char.
    #[inline]
    pub(crate) fn initial(&self, c: char) -> Option<u8> {
        self.syllable(c).map(|s| self.letter[s as usize])
    }

    /// Syllable id of a pinyin string (toneless, lowercase).
    pub(crate) fn syllable_of_name(&self, name: &str) -> Option<u16> {
        self.by_name.get(name).copied()
    }

    /// Verifier token of a normalized char: the (optionally fuzzy) syllable
    /// for Han chars with a reading, the char itself otherwise.
    #[inline]
    pub(crate) fn token(&self, c: char, fuzzy: bool) -> u32 {
        match self.syllable(c) {
            Some(s) if fuzzy => SYLLABLE_TOKEN_BASE + u32::from(self.fuzzy[s as usize]),
            Some(s) => SYLLABLE_TOKEN_BASE + u32::from(s),
            None => u32::from(c),
        }
    }

    /// Verifier token of a syllable id.
    #[inline]
    pub(crate) fn syllable_token(&self, s: u16, fuzzy: bool) -> u32 {
        if fuzzy {
            SYLLABLE_TOKEN_BASE + u32::from(self.fuzzy[s as usize])
        } else {
            SYLLABLE_TOKEN_BASE + u32::from(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homophones_share_syllables() {
        let p = Phonetic::new();
        assert!(p.by_name.len() > 350);
        assert_eq!(p.syllable('他'), p.syllable('她'));
        assert_eq!(p.syllable('是'), p.syllable('事'));
        assert_ne!(p.syllable('是'), p.syllable('四'));
        assert_eq!(p.token('是', true), p.token('四', true));
        assert_eq!(p.token('风', true), p.token('很', true));
        assert_eq!(p.initial('中'), Some(b'z'));
        assert_eq!(p.initial('a'), None);
        assert_eq!(p.token('a', false), u32::from('a'));
        assert_eq!(p.syllable_of_name("men"), p.syllable('们'));
    }

    #[test]
    fn fuzzy_folding() {
        assert_eq!(fuzzy_form("zhang"), "zan");
        assert_eq!(fuzzy_form("ning"), "lin");
        assert_eq!(fuzzy_form("fang"), "han");
        assert_eq!(fuzzy_form("ang"), "an");
        assert_eq!(fuzzy_form("ma"), "ma");
    }
}
