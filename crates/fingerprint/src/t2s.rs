//! Traditional -> simplified conversion with an offset map.
//!
//! Copies on traditional-script sites (and Taiwan / Hong Kong regional forms)
//! must fingerprint like the simplified original. OpenCC converts phrases, not
//! characters, so runs of Han text are converted as a whole; runs without a
//! single convertible character (almost all simplified text) are skipped,
//! which keeps the common case nearly free.

use ferrous_opencc::OpenCC;
use ferrous_opencc::config::BuiltinConfig;

use crate::FingerprintError;

/// First code point covered by the candidate bitmap (CJK Extension A).
const BITMAP_START: u32 = 0x3400;
/// One past the last code point covered (end of CJK Unified Ideographs).
const BITMAP_END: u32 = 0xA000;

/// Converter chain plus a bitmap of the characters it would change.
pub(crate) struct T2s {
    chain: Vec<OpenCC>,
    candidates: Vec<u64>,
}

impl std::fmt::Debug for T2s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("T2s")
            .field("converters", &self.chain.len())
            .finish()
    }
}

impl T2s {
    /// Standard T2s. It already folds most Taiwan / Hong Kong forms (裡, 綫,
    /// 爲, 峯). The Hk2s / Tw2s variant-reverse tables were tried and dropped:
    /// applied to simplified text they rewrite 么 -> 幺 and 抬 -> 擡.
    pub(crate) fn new() -> Result<Self, FingerprintError> {
        let chain = vec![
            OpenCC::from_config(BuiltinConfig::T2s)
                .map_err(|e| FingerprintError::Dictionary(format!("opencc: {e}")))?,
        ];
        let mut me = Self {
            chain,
            candidates: vec![0; ((BITMAP_END - BITMAP_START) / 64) as usize],
        };
        // Convert every character of the covered blocks once, each on its own
        // line, and remember which ones change.
        let all: String = (BITMAP_START..BITMAP_END)
            .filter_map(char::from_u32)
            .flat_map(|c| [c, '\n'])
            .collect();
        let converted = me.convert_raw(&all);
        for (orig, conv) in all.split('\n').zip(converted.split('\n')) {
            if orig != conv
                && let Some(c) = orig.chars().next()
            {
                let i = (u32::from(c) - BITMAP_START) as usize;
                me.candidates[i / 64] |= 1 << (i % 64);
            }
        }
        Ok(me)
    }

    fn convert_raw(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for cc in &self.chain {
            out = cc.convert(&out);
        }
        out
    }

    /// Whether `c` may be changed by the conversion (characters outside the
    /// bitmap, e.g. Extension B, are sent through the converter to be safe).
    #[inline]
    pub(crate) fn is_candidate(&self, c: char) -> bool {
        let u = u32::from(c);
        if (BITMAP_START..BITMAP_END).contains(&u) {
            let i = (u - BITMAP_START) as usize;
            self.candidates[i / 64] & (1 << (i % 64)) != 0
        } else {
            u >= 0x20000
        }
    }

    /// Appends the conversion of a run of Han characters to `out_c` /
    /// `out_o`, keeping offsets aligned. Only the neighbourhood of
    /// convertible characters (phrase context of `CONTEXT` chars each side)
    /// goes through OpenCC; when a phrase rule changes the length, offsets
    /// are mapped proportionally over that piece.
    pub(crate) fn convert_run(
        &self,
        chars: &[char],
        offsets: &[u32],
        out_c: &mut Vec<char>,
        out_o: &mut Vec<u32>,
    ) {
        const CONTEXT: usize = 4;
        let n = chars.len();
        let mut copied = 0;
        let mut i = 0;
        while i < n {
            if !self.is_candidate(chars[i]) {
                i += 1;
                continue;
            }
            let start = i.saturating_sub(CONTEXT).max(copied);
            let mut end = (i + CONTEXT + 1).min(n);
            // Extend over following candidates whose context overlaps.
            let mut j = i + 1;
            while j < end {
                if self.is_candidate(chars[j]) {
                    end = (j + CONTEXT + 1).min(n);
                }
                j += 1;
            }
            out_c.extend_from_slice(&chars[copied..start]);
            out_o.extend_from_slice(&offsets[copied..start]);
            self.convert_piece(&chars[start..end], &offsets[start..end], out_c, out_o);
            copied = end;
            i = end;
        }
        out_c.extend_from_slice(&chars[copied..]);
        out_o.extend_from_slice(&offsets[copied..]);
    }

    fn convert_piece(
        &self,
        chars: &[char],
        offsets: &[u32],
        out_c: &mut Vec<char>,
        out_o: &mut Vec<u32>,
    ) {
        let s: String = chars.iter().collect();
        let converted = self.convert_raw(&s);
        let start = out_c.len();
        out_c.extend(converted.chars());
        let n_out = out_c.len() - start;
        let n_in = chars.len();
        if n_out == n_in {
            out_o.extend_from_slice(offsets);
        } else {
            out_o.extend((0..n_out).map(|j| offsets[(j * n_in / n_out).min(n_in - 1)]));
        }
    }
}

/// Whether `c` is a Han ideograph (unified, extensions or compatibility).
#[inline]
pub(crate) fn is_han(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x323AF | 0xF900..=0xFAFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(t: &T2s, s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        let offs: Vec<u32> = (0..chars.len() as u32).collect();
        let (mut c, mut o) = (Vec::new(), Vec::new());
        t.convert_run(&chars, &offs, &mut c, &mut o);
        assert_eq!(c.len(), o.len());
        c.into_iter().collect()
    }

    #[test]
    fn converts_traditional_and_regional_forms() {
        let t = T2s::new().expect("builtin dictionaries load");
        assert_eq!(conv(&t, "滿園春色關不住"), "满园春色关不住");
        assert_eq!(conv(&t, "這裡"), "这里");
        assert_eq!(conv(&t, "他們說話"), "他们说话");
        assert_eq!(conv(&t, "简体字不变"), "简体字不变");
        assert!(t.is_candidate('關'));
        assert!(!t.is_candidate('关'));
    }
}
