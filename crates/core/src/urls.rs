//! URL normalization: one spelling per page, so a page has one id
//! ([`crate::ids::PageId::for_url`]) however a link spells it.
//!
//! Rules: only `http` and `https`; host lowercased and default port dropped (the
//! `url` crate does both); dot segments resolved; the fragment removed; an empty
//! query (`?`) removed. The query keeps its order: sorting could merge pages that
//! a site tells apart by parameter order, and keeping it is stable anyway. URLs
//! carrying credentials (`user:pass@`) are refused, so the crawler never sends
//! them, and error messages never echo a URL that might hold them.

use crate::{Error, Result};
use url::Url;

/// Longest URL the crawler follows, in bytes; longer links are crawler traps.
pub const MAX_URL_LEN: usize = 2048;

/// Returns the normalized form of an absolute http(s) URL.
pub fn normalize_url(raw: &str) -> Result<String> {
    let parsed =
        Url::parse(raw.trim()).map_err(|err| Error::invalid(format!("invalid url: {err}")))?;
    normalize_parsed(parsed)
}

/// Resolves `href` against `base` and normalizes it; `None` for links the
/// crawler never follows (javascript:, mailto:, fragments only, other schemes,
/// unparsable or over-long URLs).
pub fn resolve_link(base: &Url, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') || href.len() > MAX_URL_LEN {
        return None;
    }
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    if lower.starts_with("javascript:") || lower.starts_with("mailto:") || lower.starts_with("tel:")
    {
        return None;
    }
    let joined = base.join(href).ok()?;
    normalize_parsed(joined).ok()
}

/// `url` without its fragment when it is on the same site as `page` (scheme
/// http(s), host and port): what a page may have the crawler fetch for it
/// (its style sheets, its fonts).
pub fn same_site_url(mut url: Url, page: &Url) -> Option<String> {
    let same_site = matches!(url.scheme(), "http" | "https")
        && url.host_str() == page.host_str()
        && url.port_or_known_default() == page.port_or_known_default();
    url.set_fragment(None);
    same_site.then(|| url.to_string())
}

/// Returns the origin key of a URL (`scheme://host:port`), the unit of
/// robots.txt and of per-host politeness.
pub fn origin_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or_default();
    format!("{}://{}:{}", url.scheme(), host, port)
}

fn normalize_parsed(mut parsed: Url) -> Result<String> {
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid(format!(
            "unsupported url scheme `{}`",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(Error::invalid("url has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Error::invalid("url carries credentials (user:password@)"));
    }
    parsed.set_fragment(None);
    if parsed.query() == Some("") {
        parsed.set_query(None);
    }
    let normalized = String::from(parsed);
    if normalized.len() > MAX_URL_LEN {
        return Err(Error::invalid(format!(
            "url is longer than {MAX_URL_LEN} bytes"
        )));
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_is_canonical() {
        assert_eq!(
            normalize_url("HTTP://Example.COM:80/a/../b.html#frag").unwrap(),
            "http://example.com/b.html"
        );
        assert_eq!(
            normalize_url("https://example.com:443").unwrap(),
            "https://example.com/"
        );
        assert_eq!(
            normalize_url("http://example.com:8080/x?").unwrap(),
            "http://example.com:8080/x"
        );
        assert_eq!(
            normalize_url("http://example.com/x?b=1&a=2").unwrap(),
            "http://example.com/x?b=1&a=2"
        );
        assert!(normalize_url("ftp://example.com/").is_err());
        let with_credentials = normalize_url("http://user:hunter2@example.com/").unwrap_err();
        assert!(with_credentials.message().contains("credentials"));
        assert!(!with_credentials.message().contains("hunter2"));
        assert!(normalize_url("http:alice@example.com/").is_err());
        assert!(normalize_url("not a url").is_err());
    }

    #[test]
    fn links_resolve_against_the_page() {
        let base = Url::parse("http://127.0.0.1:8001/read/33098_11.html").unwrap();
        assert_eq!(
            resolve_link(&base, "33098_11_2.html").unwrap(),
            "http://127.0.0.1:8001/read/33098_11_2.html"
        );
        assert_eq!(
            resolve_link(&base, "../index.html#top").unwrap(),
            "http://127.0.0.1:8001/index.html"
        );
        assert_eq!(resolve_link(&base, "javascript:void(0)"), None);
        assert_eq!(resolve_link(&base, "#top"), None);
        assert_eq!(resolve_link(&base, "mailto:a@b.c"), None);
        assert_eq!(origin_key(&base), "http://127.0.0.1:8001");
    }
}
