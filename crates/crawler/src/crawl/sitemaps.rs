//! Sitemaps: the pages a site lists for crawlers, found in robots.txt
//! (`Sitemap:` lines) or at `/sitemap.xml`. Large sites link a chapter from
//! nowhere a few hops from the home page can reach; their sitemap lists it.
//! Sitemap indexes are followed one level down, gzip is read, and a plain text
//! list of URLs is a sitemap too (the protocol allows it). Everything is
//! bounded: sitemaps per run, bytes per sitemap once decompressed, URLs kept.
//! Discovery never fails a crawl; a sitemap that cannot be had is skipped.

use std::collections::HashSet;
use std::io::Read;
use std::time::Duration;

use copyhound_core::ports::{Fetcher, Resource};
use tracing::debug;
use url::Url;

use crate::pacer::{HostPacer, fetch_paced};
use crate::site::UrlRules;
use crate::urls::{normalize_url, origin_key};

/// Sitemaps (and robots.txt files) fetched per run.
pub const MAX_SITEMAPS_PER_RUN: usize = 20;
/// Bytes of one sitemap read once decompressed (the protocol's limit is 50 MB).
pub const MAX_SITEMAP_BYTES: usize = 16 << 20;
/// URLs taken from one sitemap (the protocol's limit is 50,000).
pub const MAX_URLS_PER_SITEMAP: usize = 50_000;

/// What a sitemap lists.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Listing {
    /// Child sitemaps (a sitemap index).
    pub sitemaps: Vec<String>,
    /// Pages.
    pub pages: Vec<String>,
}

/// The pages the sitemaps of the seeds' sites list, allowed by `rules`, at most `limit`.
pub(crate) async fn discover(
    fetcher: &dyn Fetcher,
    pacer: &HostPacer,
    interval: Duration,
    seeds: &[String],
    rules: &UrlRules,
    limit: usize,
) -> Vec<String> {
    let mut origins = Vec::new();
    let mut seen_origins = HashSet::new();
    for seed in seeds {
        if let Ok(url) = Url::parse(seed)
            && seen_origins.insert(origin_key(&url))
        {
            origins.push(url);
        }
    }
    let mut budget = MAX_SITEMAPS_PER_RUN;
    let mut pending: Vec<(String, u8)> = Vec::new();
    for origin in &origins {
        let Ok(robots) = origin.join("/robots.txt") else {
            continue;
        };
        let declared = match fetch(fetcher, pacer, interval, robots.as_str(), &mut budget).await {
            Some(text) => robots_sitemaps(&text, &robots),
            None => Vec::new(),
        };
        if declared.is_empty() {
            if let Ok(default) = origin.join("/sitemap.xml") {
                pending.push((default.to_string(), 0));
            }
        } else {
            pending.extend(declared.into_iter().map(|url| (url, 0)));
        }
    }
    let mut fetched = HashSet::new();
    let mut pages = Vec::new();
    let mut seen_pages = HashSet::new();
    while let Some((sitemap, depth)) = pending.pop() {
        if pages.len() >= limit || budget == 0 {
            break;
        }
        if !fetched.insert(sitemap.clone()) || !same_site(&sitemap, &origins) {
            continue;
        }
        let Some(text) = fetch(fetcher, pacer, interval, &sitemap, &mut budget).await else {
            continue;
        };
        let listing = parse(&text);
        if depth == 0 {
            pending.extend(listing.sitemaps.into_iter().rev().map(|url| (url, 1)));
        }
        for page in listing.pages {
            if pages.len() >= limit {
                break;
            }
            if let Ok(page) = normalize_url(&page)
                && rules.allows(&page)
                && seen_pages.insert(page.clone())
            {
                pages.push(page);
            }
        }
    }
    pages
}

fn same_site(url: &str, origins: &[Url]) -> bool {
    Url::parse(url).is_ok_and(|url| {
        origins
            .iter()
            .any(|origin| origin_key(origin) == origin_key(&url))
    })
}

/// Fetches a sitemap or robots.txt as text, decompressing gzip; `None` when
/// it cannot be had.
async fn fetch(
    fetcher: &dyn Fetcher,
    pacer: &HostPacer,
    interval: Duration,
    url: &str,
    budget: &mut usize,
) -> Option<String> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let fetched = match fetch_paced(fetcher, pacer, interval, url, Resource::Sitemap).await {
        Ok(fetched) if (200..300).contains(&fetched.status) => fetched,
        Ok(fetched) => {
            debug!(url, status = fetched.status, "sitemap not fetched");
            return None;
        }
        Err(error) => {
            debug!(url, error = %error, "sitemap not fetched");
            return None;
        }
    };
    Some(decode(&fetched.body))
}

/// The body as text: gunzipped when it is gzip (by its magic bytes), cut at
/// [`MAX_SITEMAP_BYTES`].
fn decode(body: &[u8]) -> String {
    let mut bytes = Vec::new();
    if body.starts_with(&[0x1f, 0x8b]) {
        let decoder = flate2::read::GzDecoder::new(body);
        if decoder
            .take(MAX_SITEMAP_BYTES as u64)
            .read_to_end(&mut bytes)
            .is_err()
        {
            debug!("sitemap: corrupt gzip, reading what decompressed");
        }
    } else {
        bytes.extend_from_slice(&body[..body.len().min(MAX_SITEMAP_BYTES)]);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `Sitemap:` lines of a robots.txt, resolved against its URL.
fn robots_sitemaps(robots: &str, base: &Url) -> Vec<String> {
    robots
        .lines()
        .filter_map(|line| {
            let line = line.split('#').next().unwrap_or_default().trim();
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case("sitemap")
                .then(|| base.join(value.trim()).ok())
                .flatten()
        })
        .map(|url| url.to_string())
        .take(MAX_SITEMAPS_PER_RUN)
        .collect()
}

/// Reads a sitemap: an XML `<urlset>` or `<sitemapindex>` (its `<loc>`
/// elements, namespace prefixes and CDATA allowed), or a text file of URLs.
pub(crate) fn parse(text: &str) -> Listing {
    let mut listing = Listing::default();
    let head = &text[..text.len().min(4096)].to_ascii_lowercase();
    if !head.trim_start().starts_with('<') {
        listing.pages = text
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with("http://") || line.starts_with("https://"))
            .take(MAX_URLS_PER_SITEMAP)
            .map(str::to_string)
            .collect();
        return listing;
    }
    let index = head.contains("sitemapindex");
    let locs = locs(text);
    if index {
        listing.sitemaps = locs;
    } else {
        listing.pages = locs;
    }
    listing
}

/// The texts of the `<loc>` elements, in order.
fn locs(xml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = xml;
    while out.len() < MAX_URLS_PER_SITEMAP {
        let Some(open) = find_tag(rest, "loc") else {
            break;
        };
        let after_open = &rest[open..];
        let Some(gt) = after_open.find('>') else {
            break;
        };
        let body = &after_open[gt + 1..];
        let Some(close) = body.find("</") else { break };
        let raw = body[..close].trim();
        let raw = raw
            .strip_prefix("<![CDATA[")
            .and_then(|inner| inner.strip_suffix("]]>"))
            .unwrap_or(raw);
        let url = unescape(raw.trim());
        if !url.is_empty() {
            out.push(url);
        }
        rest = &body[close..];
    }
    out
}

/// Byte offset of the next `<loc>` or `<prefix:loc>` start tag.
fn find_tag(xml: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = xml[from..].find('<') {
        let start = from + at;
        let tag = &xml[start + 1..];
        let local = tag
            .split(|c: char| c == '>' || c.is_whitespace() || c == '/')
            .next()
            .unwrap_or_default();
        let local = local.rsplit(':').next().unwrap_or_default();
        if local.eq_ignore_ascii_case(name) {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_urlsets_indexes_and_text_lists() {
        let urlset = r#"<?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <url><loc> http://a.example/1.html?x=1&amp;y=2 </loc><lastmod>2019-01-01</lastmod></url>
              <url><ns:loc><![CDATA[http://a.example/2.html]]></ns:loc></url>
            </urlset>"#;
        assert_eq!(
            parse(urlset).pages,
            ["http://a.example/1.html?x=1&y=2", "http://a.example/2.html"]
        );
        let index = r#"<sitemapindex><sitemap><loc>http://a.example/s1.xml.gz</loc></sitemap></sitemapindex>"#;
        assert_eq!(
            parse(index),
            Listing {
                sitemaps: vec!["http://a.example/s1.xml.gz".into()],
                pages: vec![],
            }
        );
        assert_eq!(
            parse("http://a.example/3.html\n# not a url\nhttps://a.example/4.html\n").pages,
            ["http://a.example/3.html", "https://a.example/4.html"]
        );
        assert_eq!(
            parse("<urlset><url><loc>unterminated").pages,
            Vec::<String>::new()
        );
    }

    #[test]
    fn robots_lines_and_gzip() {
        let base = Url::parse("http://a.example/robots.txt").unwrap();
        assert_eq!(
            robots_sitemaps(
                "User-agent: *\nDisallow: /x\nSITEMAP: /sm.xml # main\nsitemap:http://a.example/b.xml",
                &base
            ),
            ["http://a.example/sm.xml", "http://a.example/b.xml"]
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, b"http://a.example/1.html\n").unwrap();
        assert_eq!(decode(&gz.finish().unwrap()), "http://a.example/1.html\n");
        // A gzip bomb stops at the byte budget.
        let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![b'a'; 1 << 20];
        for _ in 0..(MAX_SITEMAP_BYTES >> 20) + 4 {
            std::io::Write::write_all(&mut bomb, &zeros).unwrap();
        }
        assert_eq!(decode(&bomb.finish().unwrap()).len(), MAX_SITEMAP_BYTES);
    }
}
