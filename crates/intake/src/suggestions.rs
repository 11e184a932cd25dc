//! Suggested sites (see [`copyhound_core::model::SiteSuggestion`]): recorded
//! from what crawls see and from book-source files, checked by the crawler,
//! accepted or dismissed by a publisher's admin. One function per door, so the
//! API, the console and the CLI cannot disagree on what a decision does.
//!
//! A suggestion is per publisher: one publisher's crawls never suggest sites
//! to another, and an origin the publisher already watches is never raised.

use std::collections::{BTreeMap, HashSet};

use chrono::Utc;
use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::model::{
    ReasonKind, Site, SiteSuggestion, SuggestionReason, SuggestionStatus, Task, TaskKind,
    Verification,
};
use copyhound_core::ports::{PageRequest, Ports, SiteStore, TaskQueue};
use copyhound_core::site::SitePolicy;
use copyhound_core::{Error, Result};
use url::Url;

use crate::sites::{SiteSettings, create_site};

/// Most open suggestions a publisher keeps; past it new origins are not recorded.
pub const MAX_OPEN_SUGGESTIONS: usize = 5_000;
/// Most candidates one crawl run records.
pub const MAX_CANDIDATES_PER_RUN: usize = 200;
/// Largest book-source file read.
pub const MAX_BOOK_SOURCE_BYTES: usize = 5 << 20;
/// Most entries read from one book-source file.
pub const MAX_BOOK_SOURCES: usize = 2_000;

/// Something seen that names another site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// `scheme://host[:port]` of the named site (see [`origin_of`]).
    pub origin: String,
    /// What kind of evidence it is.
    pub kind: ReasonKind,
    /// The page it was seen on, or the book-source file.
    pub from: String,
    /// The link or text (shortened).
    pub detail: String,
    /// The site's search URL template (`{{key}}`), from a book-source entry.
    pub search_url: Option<String>,
}

/// `scheme://host[:port]` of an http(s) URL, lower case, the port only when
/// it is not the scheme's default; `None` for other schemes or no host.
pub fn origin_of(url: &Url) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    Some(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

/// The host of an origin, the part compared between sites (`http` and `https`
/// of one host are one site).
pub fn host_of(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, rest)| rest)
}

/// Hosts of the sites `publisher_id` watches (their seeds).
async fn watched_hosts(
    sites: &dyn SiteStore,
    publisher_id: &PublisherId,
) -> Result<HashSet<String>> {
    let mut hosts = HashSet::new();
    let mut page = PageRequest {
        after: None,
        limit: 500,
    };
    loop {
        let listed = sites.list_sites(Some(publisher_id), &page).await?;
        for site in &listed.items {
            for seed in &site.seeds {
                if let Some(origin) = Url::parse(seed).ok().as_ref().and_then(origin_of) {
                    hosts.insert(host_of(&origin).to_string());
                }
            }
        }
        match listed.next {
            Some(after) => page.after = Some(after),
            None => return Ok(hosts),
        }
    }
}

/// What [`record`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Suggestions created (each queued for its check).
    pub new: Vec<String>,
    /// Suggestions that gained a reason.
    pub updated: usize,
    /// Candidates left out: watched already, over the caps.
    pub skipped: usize,
}

/// Records `candidates` for `publisher_id`, seen on `site_id` (none for an
/// import): a new origin becomes a pending suggestion and its check is
/// queued; a known one gains the reason (a dismissed one stays dismissed).
pub async fn record(
    sites: &dyn SiteStore,
    queue: &dyn TaskQueue,
    publisher_id: &PublisherId,
    site_id: Option<&SiteId>,
    candidates: Vec<Candidate>,
) -> Result<Recorded> {
    let mut recorded = Recorded::default();
    if candidates.is_empty() {
        return Ok(recorded);
    }
    let watched = watched_hosts(sites, publisher_id).await?;
    let mut by_origin: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for candidate in candidates {
        if watched.contains(host_of(&candidate.origin)) {
            recorded.skipped += 1;
            continue;
        }
        by_origin
            .entry(candidate.origin.clone())
            .or_default()
            .push(candidate);
    }
    let mut open = None;
    let now = Utc::now();
    let mut tasks = Vec::new();
    for (origin, candidates) in by_origin {
        let id = SiteSuggestion::id_for(publisher_id, &origin);
        let existing = match sites.get_suggestion(publisher_id, &id).await {
            Ok(found) => Some(found),
            Err(error) if error.kind() == copyhound_core::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        let mut changed = false;
        let mut suggestion = match existing {
            Some(found) => found,
            None => {
                let count = match open {
                    Some(count) => count,
                    None => open_count(sites, publisher_id).await?,
                };
                if count >= MAX_OPEN_SUGGESTIONS {
                    recorded.skipped += candidates.len();
                    continue;
                }
                open = Some(count + 1);
                changed = true;
                let first = &candidates[0];
                let mut fresh = SiteSuggestion::new(
                    publisher_id.clone(),
                    origin.clone(),
                    reason(first, site_id, now),
                );
                fresh.search_url.clone_from(&first.search_url);
                recorded.new.push(fresh.id.clone());
                tasks.push(Task::new(
                    TaskKind::VerifySuggestion {
                        publisher_id: publisher_id.clone(),
                        suggestion_id: fresh.id.clone(),
                    },
                    now,
                ));
                fresh
            }
        };
        for candidate in &candidates {
            changed |= suggestion.add_reason(reason(candidate, site_id, now));
            if suggestion.search_url.is_none() && candidate.search_url.is_some() {
                suggestion.search_url.clone_from(&candidate.search_url);
                changed = true;
            }
        }
        if changed {
            if !recorded.new.contains(&suggestion.id) {
                recorded.updated += 1;
            }
            sites.put_suggestion(&suggestion).await?;
        }
    }
    // The suggestions are stored before their checks are queued: a check
    // always finds its suggestion.
    if !tasks.is_empty() {
        queue.enqueue(tasks).await?;
    }
    Ok(recorded)
}

fn reason(
    candidate: &Candidate,
    site_id: Option<&SiteId>,
    at: copyhound_core::model::Timestamp,
) -> SuggestionReason {
    SuggestionReason {
        kind: candidate.kind,
        from: candidate.from.clone(),
        site_id: site_id.cloned(),
        detail: candidate.detail.chars().take(200).collect(),
        at,
    }
}

async fn open_count(sites: &dyn SiteStore, publisher_id: &PublisherId) -> Result<usize> {
    let mut count = 0;
    for status in [
        SuggestionStatus::Pending,
        SuggestionStatus::Verified,
        SuggestionStatus::Unreachable,
    ] {
        let mut page = PageRequest {
            after: None,
            limit: 500,
        };
        loop {
            let listed = sites
                .list_suggestions(publisher_id, Some(status), &page)
                .await?;
            count += listed.items.len();
            match listed.next {
                Some(after) if count < MAX_OPEN_SUGGESTIONS => page.after = Some(after),
                _ => break,
            }
        }
    }
    Ok(count)
}

/// Stores what a check found: `verified` when the page answered, otherwise
/// `unreachable`; a decided suggestion keeps its decision.
pub async fn save_verification(
    sites: &dyn SiteStore,
    publisher_id: &PublisherId,
    id: &str,
    verification: Verification,
) -> Result<SiteSuggestion> {
    let mut suggestion = sites.get_suggestion(publisher_id, id).await?;
    if suggestion.status.is_open() {
        suggestion.status = if verification.error.is_none()
            && verification
                .status
                .is_some_and(|status| (200..300).contains(&status))
        {
            SuggestionStatus::Verified
        } else {
            SuggestionStatus::Unreachable
        };
    }
    suggestion.updated_at = verification.at;
    suggestion.verification = Some(verification);
    sites.put_suggestion(&suggestion).await?;
    Ok(suggestion)
}

/// Accepts a suggestion: it becomes a watched site (the usual defaults, a
/// daily schedule, crawled from its origin) and its first crawl is queued.
/// Accepting twice answers the same site.
pub async fn accept(
    ports: &Ports,
    publisher_id: &PublisherId,
    id: &str,
    policy: &SitePolicy,
    by: &str,
) -> Result<(SiteSuggestion, Site)> {
    let mut suggestion = ports.sites.get_suggestion(publisher_id, id).await?;
    if let Some(site_id) = &suggestion.site_id {
        let site = ports.sites.get_site(site_id).await?;
        return Ok((suggestion, site));
    }
    // The site id derives from the suggestion: a retry after a crash between
    // the two writes finds the site it made.
    let site_id = SiteId::derive_from(&format!("suggestion/{}", suggestion.id));
    let site = match ports.sites.get_site(&site_id).await {
        Ok(site) => site,
        Err(error) if error.kind() == copyhound_core::ErrorKind::NotFound => {
            let name = suggestion
                .verification
                .as_ref()
                .and_then(|verification| verification.title.clone())
                .filter(|title| !title.trim().is_empty())
                .map(|title| title.chars().take(100).collect())
                .unwrap_or_else(|| host_of(&suggestion.origin).to_string());
            create_site(
                ports,
                publisher_id,
                Some(site_id),
                SiteSettings {
                    name: Some(name),
                    seeds: Some(vec![format!("{}/", suggestion.origin)]),
                    schedule: Some(Some(daily_schedule(&suggestion.id))),
                    search_url: Some(suggestion.search_url.clone()),
                    ..SiteSettings::default()
                },
                policy,
                by,
            )
            .await?
        }
        Err(error) => return Err(error),
    };
    suggestion.status = SuggestionStatus::Accepted;
    suggestion.site_id = Some(site.id.clone());
    suggestion.updated_at = Utc::now();
    ports.sites.put_suggestion(&suggestion).await?;
    let run_id = CrawlRunId::derive_from(&format!("accepted/{}", suggestion.id));
    crate::crawls::queue_run(
        ports.sites.as_ref(),
        ports.queue.as_ref(),
        &site.id,
        &run_id,
        Utc::now(),
    )
    .await?;
    tracing::info!(suggestion = %suggestion.id, site_id = %site.id, by, "suggested site accepted");
    Ok((suggestion, site))
}

/// A daily crawl at a minute of the day spread by the suggestion's id, so
/// accepted sites do not all crawl at midnight.
fn daily_schedule(id: &str) -> String {
    let spread = id.bytes().fold(0_u32, |sum, byte| {
        sum.wrapping_mul(31).wrapping_add(u32::from(byte))
    });
    let minute_of_day = spread % (24 * 60);
    format!("{} {} * * *", minute_of_day % 60, minute_of_day / 60)
}

/// Dismisses a suggestion: it is not raised again. An accepted one cannot be
/// dismissed (delete the site instead).
pub async fn dismiss(
    sites: &dyn SiteStore,
    publisher_id: &PublisherId,
    id: &str,
    by: &str,
) -> Result<SiteSuggestion> {
    let mut suggestion = sites.get_suggestion(publisher_id, id).await?;
    if suggestion.status == SuggestionStatus::Accepted {
        return Err(Error::new(
            copyhound_core::ErrorKind::Conflict,
            format!(
                "site suggestion {id} was accepted as site {}; delete the site instead",
                suggestion
                    .site_id
                    .as_ref()
                    .map_or("?", copyhound_core::ids::SiteId::as_str)
            ),
        ));
    }
    if suggestion.status != SuggestionStatus::Dismissed {
        suggestion.status = SuggestionStatus::Dismissed;
        suggestion.updated_at = Utc::now();
        sites.put_suggestion(&suggestion).await?;
        tracing::info!(suggestion = %id, by, "suggested site dismissed");
    }
    Ok(suggestion)
}

/// Parses a book-source file (the JSON reader apps share: an array of
/// sources, or one source, each with `bookSourceUrl`, `bookSourceName` and
/// `searchUrl`) into candidates named after `file_name`. Entries that are not
/// http(s) sites are skipped and counted; a file that is not such JSON is an
/// error that says why.
pub fn parse_book_sources(file_name: &str, bytes: &[u8]) -> Result<(Vec<Candidate>, usize)> {
    if bytes.len() > MAX_BOOK_SOURCE_BYTES {
        return Err(Error::new(
            copyhound_core::ErrorKind::TooLarge,
            format!(
                "book-source file is {} bytes; at most {MAX_BOOK_SOURCE_BYTES} are read",
                bytes.len()
            ),
        ));
    }
    let text = std::str::from_utf8(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes))
        .map_err(|_| Error::invalid("book-source file is not UTF-8"))?;
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|error| Error::invalid(format!("book-source file is not JSON: {error}")))?;
    let entries = match value {
        serde_json::Value::Array(entries) => entries,
        entry @ serde_json::Value::Object(_) => vec![entry],
        _ => {
            return Err(Error::invalid(
                "book-source file must be a JSON array of sources (or one source object)",
            ));
        }
    };
    if entries.len() > MAX_BOOK_SOURCES {
        return Err(Error::invalid(format!(
            "book-source file has {} entries; at most {MAX_BOOK_SOURCES} are read",
            entries.len()
        )));
    }
    let mut candidates = Vec::new();
    let mut skipped = 0;
    for entry in &entries {
        let field = |name: &str| entry.get(name).and_then(serde_json::Value::as_str);
        let Some(base) = field("bookSourceUrl")
            .map(|url| url.split('#').next().unwrap_or(url).trim())
            .and_then(|url| Url::parse(url).ok())
        else {
            skipped += 1;
            continue;
        };
        let Some(origin) = origin_of(&base) else {
            skipped += 1;
            continue;
        };
        let name = field("bookSourceName").unwrap_or_default();
        candidates.push(Candidate {
            detail: format!("{name} {base}").trim().to_string(),
            search_url: field("searchUrl").and_then(|template| search_template(&base, template)),
            origin,
            kind: ReasonKind::BookSource,
            from: file_name.chars().take(200).collect(),
        });
    }
    Ok((candidates, skipped))
}

/// A book source's search URL as a GET template with `{{key}}`, absolute and
/// on the source's own host; `None` for POST forms, scripts and other hosts.
fn search_template(base: &Url, template: &str) -> Option<String> {
    // `url,{"method":"POST",...}`: options after the first `,{`.
    let (url, options) = match template.split_once(",{") {
        Some((url, options)) => (url, Some(options)),
        None => (template, None),
    };
    if options.is_some_and(|options| options.to_ascii_uppercase().contains("\"POST\""))
        || url.starts_with("@js:")
        || url.contains("<js>")
        || !url.contains("{{key}}")
    {
        return None;
    }
    let resolved = base.join(url.trim()).ok()?;
    (origin_of(&resolved)? == origin_of(base)?).then(|| {
        // `Url` escapes the braces; the template keeps them.
        resolved
            .as_str()
            .replace("%7B%7Bkey%7D%7D", "{{key}}")
            .replace("%7B%7Bpage%7D%7D", "1")
            .replace("{{page}}", "1")
    })
}

/// Imports a book-source file for `publisher_id`: every listed site becomes
/// a suggestion (or gains the reason). Returns what was recorded and how
/// many entries were skipped.
pub async fn import_book_sources(
    ports: &Ports,
    publisher_id: &PublisherId,
    file_name: &str,
    bytes: &[u8],
) -> Result<(Recorded, usize)> {
    let (candidates, skipped) = parse_book_sources(file_name, bytes)?;
    let recorded = record(
        ports.sites.as_ref(),
        ports.queue.as_ref(),
        publisher_id,
        None,
        candidates,
    )
    .await?;
    Ok((recorded, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_lower_case_with_their_port_only_when_it_is_not_the_default() {
        let origin = |url: &str| origin_of(&Url::parse(url).unwrap());
        assert_eq!(
            origin("HTTP://Www.Example.COM./a"),
            Some("http://www.example.com".into())
        );
        assert_eq!(
            origin("https://example.com:443/"),
            Some("https://example.com".into())
        );
        assert_eq!(
            origin("http://127.0.0.1:8080/x"),
            Some("http://127.0.0.1:8080".into())
        );
        assert_eq!(origin("ftp://example.com/"), None);
        assert_eq!(origin("mailto:a@example.com"), None);
    }

    #[test]
    fn book_sources_give_sites_and_get_search_templates() {
        let file = r#"[
          {"bookSourceName": "笔趣阁", "bookSourceUrl": "https://www.biquge.example#🎃",
           "searchUrl": "/search.php?keyword={{key}}&page={{page}}"},
          {"bookSourceName": "顶点", "bookSourceUrl": "http://dingdian.example",
           "searchUrl": "/modules/article/search.php,{\"method\":\"POST\",\"body\":\"searchkey={{key}}\"}"},
          {"bookSourceName": "外站", "bookSourceUrl": "http://a.example",
           "searchUrl": "http://other.example/s?q={{key}}"},
          {"bookSourceName": "坏的", "bookSourceUrl": "javascript:alert(1)"},
          {"bookSourceName": "无网址"}
        ]"#;
        let (candidates, skipped) = parse_book_sources("sources.json", file.as_bytes()).unwrap();
        assert_eq!(skipped, 2);
        let origins: Vec<&str> = candidates.iter().map(|c| c.origin.as_str()).collect();
        assert_eq!(
            origins,
            [
                "https://www.biquge.example",
                "http://dingdian.example",
                "http://a.example"
            ]
        );
        assert_eq!(
            candidates[0].search_url.as_deref(),
            Some("https://www.biquge.example/search.php?keyword={{key}}&page=1")
        );
        assert_eq!(
            candidates[1].search_url, None,
            "POST forms are not searched"
        );
        assert_eq!(
            candidates[2].search_url, None,
            "a search on another host is not the site's"
        );
        assert!(candidates.iter().all(|c| c.kind == ReasonKind::BookSource));
    }

    #[test]
    fn bad_book_source_files_say_why() {
        for (bytes, expected) in [
            (&b"not json"[..], "not JSON"),
            (&b"\"a string\""[..], "JSON array"),
            (&b"\xff\xfe"[..], "UTF-8"),
        ] {
            let error = parse_book_sources("f.json", bytes).unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
        let one = br#"{"bookSourceUrl": "http://one.example"}"#;
        assert_eq!(parse_book_sources("f.json", one).unwrap().0.len(), 1);
        let huge = vec![b' '; MAX_BOOK_SOURCE_BYTES + 1];
        assert!(parse_book_sources("f.json", &huge).is_err());
    }

    #[test]
    fn daily_schedules_are_spread_and_valid() {
        let a = daily_schedule("sg_a");
        let b = daily_schedule("sg_b");
        assert_ne!(a, b);
        for schedule in [a, b] {
            let fields: Vec<u32> = schedule
                .split(' ')
                .take(2)
                .map(|field| field.parse().unwrap())
                .collect();
            assert!(fields[0] < 60 && fields[1] < 24, "{schedule}");
        }
    }
}
