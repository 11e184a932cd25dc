//! Boilerplate and watermark masking.
//!
//! Piracy pages wrap copied text in site chrome and splice watermarks into
//! sentences. Left in, they pull SimHash towards "another page of the same
//! site" and cut seeds in the verifier. The patterns are generic piracy-site
//! phrasing (domains, "remember our address", navigation lines); none is
//! keyed to a particular site. Matching runs on the first normalization stage
//! (NFKC, lowercase, whitespace removed, punctuation still present), so
//! spaced-out or full-width domains ("ｗｗｗ．ｘ．ｃｏｍ", "w w w . x . com")
//! look like plain ones.

use regex::Regex;

use crate::FingerprintError;
use crate::normalize::NormalizeConfig;
use crate::t2s::is_han;

/// Default top-level domains recognised in bare (prefix-less) domains.
pub const DEFAULT_TLDS: &[&str] = &[
    "com", "net", "org", "cn", "la", "me", "cc", "info", "tw", "hk", "io", "co", "xyz", "top",
    "vip", "biz", "tv", "us", "in", "so", "ws", "tk", "name", "club", "site", "online", "wang",
];

/// Default inline watermark patterns (regex syntax, matched on lowercase text
/// without whitespace).
pub const DEFAULT_INLINE_PATTERNS: &[&str] = &[
    r"(?:请|您)?(?:记住|收藏)本(?:站|书|网)?(?:首发)?(?:域名|网址|地址)[：:]?",
    r"天才一秒记住(?:本站)?(?:地址|网址|域名)?[：:]?",
    r"手机(?:用户|版)?请(?:浏览|访问|登录)[^。\n]{0,40}?阅读(?:[,，]?更(?:优质|好)的阅读体验)?[。.]?",
    r"(?:看|阅读|查看)?最新章节(?:请到|请上|就上|请访问|上)?",
    r"[（(【\[][^）)】\]\n]{1,12}(?:首发|小说网|中文网|文学网|书屋|书阁)[）)】\]]",
    r"(?:小说网|中文网|文学网|书屋)(?:首发|手机版)?",
    r"本章未完[,，]?(?:请)?点击下一页继续阅读[。.]?",
    r"(?:本章完|未完待续)",
];

/// Default whole-line patterns: a line (at most `max_boilerplate_line_chars`
/// long) that matches one of these is dropped entirely.
pub const DEFAULT_LINE_PATTERNS: &[&str] = &[
    r"上一(?:章|页)|下一(?:章|页)|章节目录|返回目录|返回书页|加入书签|投推荐票|点此举报",
    r"copyright|all ?rights ?reserved|版权所有|本站所有|转载至本站|仅供试读|网友上传",
    r"百度搜索|阅读记录|排行榜|txt下载|全文阅读",
    r"第\d+/\d+页|^作者[：:]",
];

/// Compiled patterns.
#[derive(Debug)]
pub(crate) struct Boilerplate {
    inline: Option<Regex>,
    www: Regex,
    bare: Option<Regex>,
    /// First bytes of the bare-domain TLDs.
    tld_first: [bool; 256],
    line: Option<Regex>,
    max_line_chars: usize,
}

fn join(patterns: &[String]) -> Result<Option<Regex>, FingerprintError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let joined = patterns
        .iter()
        .map(|p| format!("(?:{p})"))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&joined)
        .map(Some)
        .map_err(|e| FingerprintError::Config(format!("bad boilerplate pattern: {e}")))
}

impl Boilerplate {
    pub(crate) fn new(cfg: &NormalizeConfig) -> Result<Self, FingerprintError> {
        let tlds: Vec<String> = cfg.domain_tlds.iter().map(|t| regex::escape(t)).collect();
        let bare = if cfg.bare_domains && !tlds.is_empty() {
            join(&[format!(
                r"(?:[a-z0-9-]{{1,40}}\.){{1,3}}(?:{})",
                tlds.join("|")
            )])?
        } else {
            None
        };
        let www = Regex::new(
            r"(?:https?://[a-z0-9._~:/?#@!$&'*+,;=%-]+)|(?:(?:www|wap|m)\.[a-z0-9-]{1,40}(?:\.[a-z0-9-]{1,40}){1,3}(?:/[a-z0-9_./?=&%#-]*)?)",
        )
        .map_err(|e| FingerprintError::Config(format!("bad url pattern: {e}")))?;
        Ok(Self {
            inline: join(&cfg.inline_patterns)?,
            www,
            bare,
            tld_first: tld_first_bytes(&cfg.domain_tlds),
            line: join(&cfg.line_patterns)?,
            max_line_chars: cfg.max_boilerplate_line_chars as usize,
        })
    }

    /// Marks in `mask` (one flag per char of `text`) every char covered by a
    /// watermark, URL or boilerplate line.
    pub(crate) fn mask(&self, text: &str, mask: &mut [bool]) {
        // Byte offset -> char index, built lazily in match order.
        let mut cursor = CharCursor::new(text);
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for re in [self.inline.as_ref(), Some(&self.www)]
            .into_iter()
            .flatten()
        {
            for m in re.find_iter(text) {
                ranges.push((m.start(), m.end()));
            }
        }
        if let Some(bare) = self
            .bare
            .as_ref()
            .filter(|_| may_hold_bare_domain(text, &self.tld_first))
        {
            for m in bare.find_iter(text) {
                // Only in a Han context: before it a Han char or CJK
                // punctuation, after it no Latin letter or digit. In
                // whitespace-free English text a bare "word.me" is a sentence.
                let before = text[..m.start()].chars().next_back();
                let after = text[m.end()..].chars().next();
                let ok_before =
                    before.is_some_and(|c| is_han(c) || (!c.is_ascii() && !c.is_alphanumeric()));
                let ok_after = after.is_none_or(|c| !c.is_ascii_alphanumeric());
                if ok_before && ok_after {
                    ranges.push((m.start(), m.end()));
                }
            }
        }
        if let Some(line_re) = &self.line {
            let mut start = 0;
            for line in text.split('\n') {
                let end = start + line.len();
                if !line.is_empty()
                    && line.chars().take(self.max_line_chars + 1).count() <= self.max_line_chars
                    && line_re.is_match(line)
                {
                    ranges.push((start, end));
                }
                start = end + 1;
            }
        }
        let mut points: Vec<usize> = ranges.iter().flat_map(|&(s, e)| [s, e]).collect();
        points.sort_unstable();
        points.dedup();
        let idx: Vec<usize> = points.iter().map(|&b| cursor.char_index(b)).collect();
        let lookup = |b: usize| idx[points.partition_point(|&p| p < b)];
        for (s, e) in ranges {
            let (cs, ce) = (lookup(s), lookup(e));
            let ce = ce.min(mask.len());
            for m in &mut mask[cs.min(ce)..ce] {
                *m = true;
            }
        }
    }
}

/// Whether some `.` follows a `[a-z0-9-]` and precedes the first byte of a
/// TLD, as in every bare-domain match: Chinese text rarely has one (decimals
/// like `63.5` do not count), and this scan is much cheaper than the regex.
fn may_hold_bare_domain(text: &str, tld_first: &[bool; 256]) -> bool {
    let bytes = text.as_bytes();
    text.match_indices('.').any(|(i, _)| {
        i > 0
            && matches!(bytes[i - 1], b'a'..=b'z' | b'0'..=b'9' | b'-')
            && bytes.get(i + 1).is_some_and(|&b| tld_first[usize::from(b)])
    })
}

fn tld_first_bytes(tlds: &[String]) -> [bool; 256] {
    let mut first = [false; 256];
    for t in tlds {
        if let Some(&b) = t.as_bytes().first() {
            first[usize::from(b)] = true;
        }
    }
    first
}

/// Converts increasing byte offsets to char indices in one pass overall
/// (callers pass sorted offsets).
struct CharCursor<'a> {
    text: &'a str,
    byte: usize,
    chars: usize,
}

impl<'a> CharCursor<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            byte: 0,
            chars: 0,
        }
    }

    fn char_index(&mut self, byte: usize) -> usize {
        self.chars += self.text[self.byte..byte].chars().count();
        self.byte = byte;
        self.chars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_domain_precheck_is_a_superset() {
        let tlds = tld_first_bytes(&["la".to_owned(), "com".to_owned()]);
        assert!(may_hold_bare_domain("天下xxshu.la分", &tlds));
        assert!(may_hold_bare_domain("a-.c", &tlds));
        assert!(!may_hold_bare_domain("他说……。.la", &tlds));
        assert!(!may_hold_bare_domain("ABC.la", &tlds));
        assert!(!may_hold_bare_domain("增长63.5万元", &tlds));
        assert!(!may_hold_bare_domain("a.b", &tlds));
        assert!(!may_hold_bare_domain("ends.", &tlds));
        let bare = Regex::new(r"(?:[a-z0-9-]{1,40}\.){1,3}(?:la|com)").expect("regex");
        for t in [
            "x.la",
            "-.com",
            "他.la",
            "..la",
            "a.b.c.com",
            "9.la",
            "a.lb",
            "a.co",
        ] {
            assert!(!bare.is_match(t) || may_hold_bare_domain(t, &tlds), "{t}");
        }
    }
}
