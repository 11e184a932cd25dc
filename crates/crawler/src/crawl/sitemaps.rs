//! Sitemaps: the pages a site lists for crawlers, found in robots.txt
//! (`Sitemap:` lines) or at `/sitemap.xml`. Large sites link a chapter from
//! nowhere a few hops from the home page can reach; their sitemap lists it.
//! Sitemap indexes are followed one level down, gzip is read, and a plain text
//! list of URLs is a sitemap too (the protocol allows it). Everything is
//! bounded: sitemaps per run, bytes per sitemap once decompressed, URLs kept,
//! and the time a parse takes. The XML is read by a streaming reader in one
//! pass, off the async threads: a hand-written scanner that searched again from
//! every `<` took 51 s on 200k of them and starved the server. Malformed
//! XML keeps what came before the error. Discovery never fails a crawl; a
//! sitemap that cannot be had is skipped.

use std::collections::HashSet;
use std::io::Read;
use std::time::{Duration, Instant};

use copyhound_core::ports::{Fetcher, Resource};
use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, Event};
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
/// Time one sitemap's parse may take (off the async threads); past it the
/// URLs read so far are kept. A 16 MB sitemap reads in well under a second.
pub const SITEMAP_PARSE_BUDGET: Duration = Duration::from_secs(2);
/// Bytes of one `<loc>`: longer ones are dropped (URLs past 2048 bytes are anyway).
const MAX_LOC_BYTES: usize = 4096;
/// XML events read between two looks at the clock.
const EVENTS_PER_CLOCK_CHECK: usize = 256;

/// What a sitemap lists.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Listing {
    /// Child sitemaps (a sitemap index).
    pub sitemaps: Vec<String>,
    /// Pages.
    pub pages: Vec<String>,
}

/// The pages the sitemaps of the seeds' sites list, allowed by `rules`, at most `limit`.
/// Reads each seed host's robots.txt on a turn of its own, for a run that
/// reads no sitemaps (a targeted run): otherwise the fetcher would read it
/// just before the first page, in that page's turn, and the host would get
/// two requests at once. A robots.txt the fetcher holds already costs the
/// turn and no request.
pub(crate) async fn read_robots(
    fetcher: &dyn Fetcher,
    pacer: &HostPacer,
    interval: Duration,
    seeds: &[String],
) {
    let mut seen_origins = HashSet::new();
    for seed in seeds {
        let Ok(url) = Url::parse(seed) else { continue };
        if !seen_origins.insert(origin_key(&url)) {
            continue;
        }
        if let Ok(robots) = url.join("/robots.txt")
            && let Err(error) =
                fetch_paced(fetcher, pacer, interval, robots.as_str(), Resource::Sitemap).await
        {
            debug!(url = %robots, error = %error, "robots.txt not read");
        }
    }
}

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
        let listing = match tokio::task::spawn_blocking(move || {
            parse_within(&text, Instant::now() + SITEMAP_PARSE_BUDGET)
        })
        .await
        {
            Ok((listing, report)) => {
                if report.ended != Ended::Complete {
                    debug!(url = %sitemap, events = report.events, ended = ?report.ended, "sitemap read in part");
                }
                listing
            }
            Err(error) => {
                debug!(url = %sitemap, error = %error, "sitemap parse task failed");
                continue;
            }
        };
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

/// How reading one sitemap ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// At the end of the document.
    Complete,
    /// At [`MAX_URLS_PER_SITEMAP`] URLs.
    Full,
    /// At the first XML error: what came before it is kept.
    Malformed,
    /// At the deadline: what came before it is kept.
    OutOfTime,
}

/// How a sitemap was read: for the logs, and for tests to count the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReadReport {
    /// XML events read (a linear reader reads at most one per input byte).
    pub events: usize,
    /// Why reading stopped.
    pub ended: Ended,
}

/// Reads a sitemap: an XML `<urlset>` or `<sitemapindex>` (its `<loc>`
/// elements, namespace prefixes, CDATA and entities allowed), or a text file
/// of URLs. One streaming pass; malformed XML, or the `deadline`, ends it with
/// what was read so far.
pub(crate) fn parse_within(text: &str, deadline: Instant) -> (Listing, ReadReport) {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('<') {
        return read_xml(body, deadline);
    }
    let pages = body
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("http://") || line.starts_with("https://"))
        .take(MAX_URLS_PER_SITEMAP)
        .map(str::to_string)
        .collect();
    let listing = Listing {
        pages,
        ..Listing::default()
    };
    let report = ReadReport {
        events: 0,
        ended: Ended::Complete,
    };
    (listing, report)
}

/// The `<loc>` texts of an XML sitemap, read by a streaming reader that
/// forgives what real sitemaps get wrong (bare `&`, mismatched end tags).
fn read_xml(xml: &str, deadline: Instant) -> (Listing, ReadReport) {
    let mut reader = Reader::from_str(xml);
    let config = reader.config_mut();
    config.allow_dangling_amp = true;
    config.allow_unmatched_ends = true;
    config.check_end_names = false;
    let mut locs = Vec::new();
    // The root element says whether the `<loc>`s are pages or sitemaps.
    let mut index = None;
    // The text of the `<loc>` being read.
    let mut loc: Option<String> = None;
    let mut events = 0usize;
    let ended = loop {
        if events.is_multiple_of(EVENTS_PER_CLOCK_CHECK) && Instant::now() >= deadline {
            break Ended::OutOfTime;
        }
        events += 1;
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(error) => {
                debug!(at = reader.error_position(), error = %error, "sitemap: malformed xml");
                break Ended::Malformed;
            }
        };
        match event {
            Event::Start(tag) => {
                let name = tag.local_name();
                index.get_or_insert_with(|| name.as_ref().eq_ignore_ascii_case(b"sitemapindex"));
                if name.as_ref().eq_ignore_ascii_case(b"loc") {
                    loc = Some(String::new());
                }
            }
            Event::End(tag) if tag.local_name().as_ref().eq_ignore_ascii_case(b"loc") => {
                if let Some(url) = loc.take().filter(|url| url.len() <= MAX_LOC_BYTES) {
                    let url = url.trim();
                    if !url.is_empty() {
                        locs.push(url.to_string());
                    }
                }
                if locs.len() >= MAX_URLS_PER_SITEMAP {
                    break Ended::Full;
                }
            }
            Event::Text(text) if loc.is_some() => {
                append(&mut loc, &text.decode().unwrap_or_default());
            }
            Event::CData(data) if loc.is_some() => {
                append(&mut loc, &data.decode().unwrap_or_default());
            }
            Event::GeneralRef(reference) => {
                if let Some(url) = &mut loc {
                    push_reference(url, &reference);
                }
            }
            Event::Eof => break Ended::Complete,
            _ => {}
        }
    };
    let listing = if index == Some(true) {
        Listing {
            sitemaps: locs,
            pages: Vec::new(),
        }
    } else {
        Listing {
            sitemaps: Vec::new(),
            pages: locs,
        }
    };
    (listing, ReadReport { events, ended })
}

/// Adds text to the `<loc>` being read, if any; one over [`MAX_LOC_BYTES`]
/// stops growing (it is dropped).
fn append(loc: &mut Option<String>, text: &str) {
    if let Some(url) = loc
        && url.len() <= MAX_LOC_BYTES
    {
        url.push_str(text);
    }
}

/// Adds `&name;` as the character it stands for: a character reference or
/// one of XML's five entities; any other is kept as written.
fn push_reference(url: &mut String, reference: &BytesRef<'_>) {
    if let Ok(Some(char)) = reference.resolve_char_ref() {
        url.push(char);
        return;
    }
    let name = reference.decode().unwrap_or_default();
    match resolve_predefined_entity(&name) {
        Some(text) => url.push_str(text),
        None => {
            url.push('&');
            url.push_str(&name);
            url.push(';');
        }
    }
}

#[cfg(test)]
#[path = "sitemaps_test.rs"]
mod tests;
