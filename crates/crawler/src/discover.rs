//! Discovery: the sites a watched site points at. Piracy sites link to each
//! other (friend links, mirror lists) and print their own and their mirrors'
//! domains in the text ("请记住本书首发域名：…", "手机版阅读网址：…"), so
//! every crawled page is read for other origins; each becomes a candidate
//! that `copyhound_intake::suggestions` records for the site's publisher.
//! A candidate is then checked cheaply ([`Discoverer::verify`]): robots.txt
//! and one page, nothing more, until an admin accepts it.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use chrono::Utc;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{ReasonKind, Verification};
use copyhound_core::ports::{FetchRequest, Fetcher, PageRequest, Ports, Resource};
use copyhound_core::{ErrorKind, Result};
use copyhound_intake::suggestions::{Candidate, MAX_CANDIDATES_PER_RUN, host_of, origin_of};
use regex::Regex;
use unicode_normalization::UnicodeNormalization;
use url::Url;

use crate::pacer::HostPacer;
use crate::urls::resolve_link;

/// The candidates of one run, one per origin, at most [`MAX_CANDIDATES_PER_RUN`].
#[derive(Debug, Default)]
pub struct Found {
    by_origin: BTreeMap<String, Candidate>,
}

impl Found {
    /// Keeps `candidate` unless its origin is kept already or the run is full.
    fn add(&mut self, candidate: Candidate) {
        let keep = match self.by_origin.get(&candidate.origin) {
            // An announcement outweighs a link: keep the stronger reason.
            Some(kept) => kept.kind == ReasonKind::Link && candidate.kind != ReasonKind::Link,
            None => self.by_origin.len() < MAX_CANDIDATES_PER_RUN,
        };
        if keep {
            self.by_origin.insert(candidate.origin.clone(), candidate);
        }
    }

    /// Takes the candidates out.
    pub fn take(&mut self) -> Vec<Candidate> {
        std::mem::take(&mut self.by_origin).into_values().collect()
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.by_origin.is_empty()
    }
}

/// A host split into its registrable part (the last two labels of a name;
/// `m.example.com` → `example.com`) and its port: an operator's subdomains
/// are one site, not a discovery. Addresses are compared whole.
fn site_key(host: &str) -> (&str, &str) {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') || name.ends_with(']') => (name, port),
        _ => (host, ""),
    };
    if name.parse::<std::net::IpAddr>().is_ok() || name.starts_with('[') {
        return (name, port);
    }
    let mut dots = name.rmatch_indices('.');
    match (dots.next(), dots.next()) {
        (Some(_), Some((second, _))) => (name.get(second + 1..).unwrap_or(name), port),
        _ => (name, port),
    }
}

/// Whether `origin` belongs to one of `own` (hosts of the site itself).
fn is_own(own: &[String], origin: &str) -> bool {
    let key = site_key(host_of(origin));
    own.iter().any(|own| site_key(own) == key)
}

/// Reads one page for other sites: the links that leave the site and the
/// domains its text announces.
pub fn read_page(
    found: &mut Found,
    own_hosts: &[String],
    page_url: &str,
    base: &Url,
    hrefs: &[String],
    text: &str,
) {
    for href in hrefs {
        let Some(link) = resolve_link(base, href) else {
            continue;
        };
        let Some(origin) = Url::parse(&link).ok().as_ref().and_then(origin_of) else {
            continue;
        };
        if !is_own(own_hosts, &origin) {
            found.add(Candidate {
                origin,
                kind: ReasonKind::Link,
                from: page_url.to_string(),
                detail: link.chars().take(200).collect(),
                search_url: None,
            });
        }
    }
    for (domain, context) in announced_domains(text) {
        let origin = format!("http://{domain}");
        if !is_own(own_hosts, &origin) {
            found.add(Candidate {
                origin,
                kind: ReasonKind::Announced,
                from: page_url.to_string(),
                detail: context,
                search_url: None,
            });
        }
    }
}

/// Words that introduce a site's address in Chinese reading sites' text.
static ANNOUNCED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(域名|网址|网站|地址|官网|访问|首发|最新章节|手机版|书友|收藏|记住)[^a-z0-9\n]{0,12}((?:https?://)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,12})(?::(\d{2,5}))?",
    )
    .expect("the announcement pattern is valid")
});

/// Last labels that are file names, not domains (`chapter.html`).
const FILE_SUFFIXES: &[&str] = &[
    "html", "htm", "shtml", "php", "asp", "aspx", "jsp", "js", "css", "jpg", "jpeg", "png", "gif",
    "webp", "svg", "txt", "json", "xml", "zip", "rar", "apk", "exe",
];

/// Domains a text announces after an address word, with the words around
/// them; full-width letters and "点" for the dot are read as pirates write them.
pub fn announced_domains(text: &str) -> Vec<(String, String)> {
    let normalized: String = text.nfkc().collect::<String>();
    let normalized = normalized
        .replace(['点', '。'], ".")
        .replace("ｃｏｍ", "com");
    let mut domains: Vec<(String, String)> = Vec::new();
    for found in ANNOUNCED.captures_iter(&normalized) {
        let Some(domain) = found.get(2) else { continue };
        let domain = domain
            .as_str()
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .trim_start_matches("HTTP://")
            .trim_start_matches("HTTPS://")
            .to_ascii_lowercase();
        let last = domain.rsplit('.').next().unwrap_or_default();
        if FILE_SUFFIXES.contains(&last) || last.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        let with_port = match found.get(3) {
            Some(port) => format!("{domain}:{}", port.as_str()),
            None => domain,
        };
        let context: String = found
            .get(0)
            .map_or("", |all| all.as_str())
            .chars()
            .take(80)
            .collect();
        if !domains.iter().any(|(kept, _)| kept == &with_port) {
            domains.push((with_port, context));
        }
    }
    domains
}

/// Checks suggested sites: robots.txt and one page each, at the quiet pace.
#[derive(Clone, Debug)]
pub struct Discoverer {
    enabled: bool,
    ports: Ports,
    fetcher: Arc<dyn Fetcher>,
    pacer: Arc<HostPacer>,
}

/// Pause before each of a check's two requests (robots.txt, the page) to a
/// host, on the same turns as crawls of that host.
const VERIFY_INTERVAL: Duration = Duration::from_secs(5);

impl Discoverer {
    /// Returns a discoverer fetching through `fetcher` (which reads robots.txt
    /// before any page), pacing hosts on the queue.
    pub fn new(ports: Ports, fetcher: Arc<dyn Fetcher>, enabled: bool) -> Self {
        let pacer = Arc::new(HostPacer::shared(ports.queue.clone(), "rate"));
        Self {
            enabled,
            ports,
            fetcher,
            pacer,
        }
    }

    /// Runs `verify_suggestion`: fetches the suggestion's page (robots.txt
    /// first, by the fetcher) and stores what it found.
    pub async fn verify(&self, publisher_id: &PublisherId, suggestion_id: &str) -> Result<()> {
        let suggestion = match self
            .ports
            .sites
            .get_suggestion(publisher_id, suggestion_id)
            .await
        {
            Ok(found) => found,
            // Deleted with its publisher: nothing to check.
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        if !suggestion.status.is_open() || !self.enabled {
            return Ok(());
        }
        // The linked page when a watched site linked into this one, else its home.
        let url = suggestion
            .reasons
            .iter()
            .filter(|reason| reason.kind == ReasonKind::Link)
            .map(|reason| reason.detail.as_str())
            .find(|link| {
                Url::parse(link)
                    .ok()
                    .as_ref()
                    .and_then(origin_of)
                    .is_some_and(|origin| origin == suggestion.origin)
            })
            .map_or_else(|| format!("{}/", suggestion.origin), str::to_string);
        let parsed = Url::parse(&url)
            .map_err(|_| copyhound_core::Error::invalid(format!("bad url `{url}`")))?;
        // robots.txt on a turn of its own, then the page on the next.
        if let Ok(robots) = parsed.join("/robots.txt") {
            let _ = crate::pacer::fetch_paced(
                self.fetcher.as_ref(),
                &self.pacer,
                VERIFY_INTERVAL,
                robots.as_str(),
                Resource::Sitemap,
            )
            .await;
        }
        self.pacer
            .wait(&crate::urls::origin_key(&parsed), VERIFY_INTERVAL)
            .await;
        let request = FetchRequest {
            url: url.clone(),
            etag: None,
            last_modified: None,
            resource: Resource::Page,
        };
        let mut verification = Verification {
            at: Utc::now(),
            url,
            status: None,
            error: None,
            title: None,
            han_chars: 0,
            carries: Vec::new(),
        };
        match self.fetcher.fetch(&request).await {
            Ok(page) => {
                verification.status = Some(page.status);
                let decoded =
                    crate::charset::decode_body(&page.body, page.content_type.as_deref(), None);
                let extracted =
                    crate::extract::extract_with_limit(&decoded.text, &Default::default(), 200);
                verification.title = Some(extracted.title.chars().take(200).collect())
                    .filter(|title: &String| !title.is_empty());
                let page_text = format!("{}\n{}", extracted.title, extracted.text);
                verification.han_chars = page_text
                    .chars()
                    .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
                    .count() as u64;
                verification.carries = self.titles_named(publisher_id, &page_text).await?;
            }
            Err(error) => verification.error = Some(error.to_string()),
        }
        copyhound_intake::suggestions::save_verification(
            self.ports.sites.as_ref(),
            publisher_id,
            suggestion_id,
            verification,
        )
        .await?;
        Ok(())
    }

    /// The publisher's works whose titles (two characters or more) `text` names.
    async fn titles_named(
        &self,
        publisher_id: &PublisherId,
        text: &str,
    ) -> Result<Vec<copyhound_core::ids::WorkId>> {
        let mut named = Vec::new();
        let mut page = PageRequest {
            after: None,
            limit: 500,
        };
        loop {
            let listed = self.ports.works.list_works(publisher_id, &page).await?;
            for work in &listed.items {
                let title = work.title.trim();
                if title.chars().count() >= 2 && text.contains(title) {
                    named.push(work.id.clone());
                }
            }
            match listed.next {
                Some(after) => page.after = Some(after),
                None => return Ok(named),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_off_the_site_are_candidates_and_its_own_subdomains_are_not() {
        let mut found = Found::default();
        let base = Url::parse("http://www.pirate.example/book/1/").unwrap();
        let hrefs: Vec<String> = [
            "/book/2/",
            "http://m.pirate.example/book/1/",
            "https://www.friend.example/",
            "http://mirror.example:8080/x.html",
            "mailto:a@b.example",
            "javascript:void(0)",
        ]
        .map(String::from)
        .to_vec();
        read_page(
            &mut found,
            &["www.pirate.example".to_string()],
            "http://www.pirate.example/book/1/",
            &base,
            &hrefs,
            "",
        );
        let origins: Vec<String> = found.take().into_iter().map(|c| c.origin).collect();
        assert_eq!(
            origins,
            ["http://mirror.example:8080", "https://www.friend.example"]
        );
    }

    #[test]
    fn announced_domains_are_read_as_pirates_write_them() {
        let text = "第一章 开始\n请记住本书首发域名：ｗｗｗ．ｘｂｉｑｕｇｅ．ｃｃ。手机版阅读网址：m.xbiquge点cc\n\
                    最新网址：http://new-site.example:8081 下一章：chapter2.html 更新时间 2024.01";
        let domains: Vec<String> = announced_domains(text)
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        assert_eq!(
            domains,
            ["www.xbiquge.cc", "m.xbiquge.cc", "new-site.example:8081"],
        );
        assert!(announced_domains("叔宝众人出了酒店，行至街上。").is_empty());
    }

    #[test]
    fn a_run_keeps_one_candidate_per_origin_and_stops_at_its_cap() {
        let mut found = Found::default();
        let base = Url::parse("http://a.example/").unwrap();
        let hrefs: Vec<String> = (0..MAX_CANDIDATES_PER_RUN + 50)
            .map(|n| format!("http://site{n}.example/"))
            .collect();
        read_page(
            &mut found,
            &["a.example".into()],
            "http://a.example/",
            &base,
            &hrefs,
            "",
        );
        read_page(
            &mut found,
            &["a.example".into()],
            "http://a.example/",
            &base,
            &hrefs,
            "",
        );
        assert_eq!(found.take().len(), MAX_CANDIDATES_PER_RUN);
    }
}
