//! Watched sites: created and edited here for the API, the console and
//! `copyhound sites add`, with the defaults of [`Site`] and the one validation
//! ([`validate_site`]) under the deployment's address policy, so nothing is
//! stored that the crawler would refuse.

use std::collections::BTreeSet;

use chrono::Utc;
use copyhound_core::ids::{PublisherId, SiteId};
use copyhound_core::model::{ExtractionHints, Site, Task, TaskKind};
use copyhound_core::ports::{MatchFilter, PageRequest, Ports};
use copyhound_core::site::{SitePolicy, default_site, validate_site};
use copyhound_core::{ErrorKind, Result};

/// The settings of a site. On creation an absent field takes its default; on
/// an edit it keeps its value (`Some(None)` clears an optional field).
#[derive(Clone, Debug, Default)]
pub struct SiteSettings {
    /// Display name.
    pub name: Option<String>,
    /// Start URLs.
    pub seeds: Option<Vec<String>>,
    /// URL patterns a crawl may follow (empty: the seeds' hosts).
    pub allow_patterns: Option<Vec<String>>,
    /// URL patterns a crawl never follows.
    pub deny_patterns: Option<Vec<String>>,
    /// Deepest link depth.
    pub max_depth: Option<u32>,
    /// Fetch budget of one run.
    pub max_pages_per_run: Option<u32>,
    /// Cron schedule; a blank one is none.
    pub schedule: Option<Option<String>>,
    /// Requests per second per host (0: unlimited).
    pub rate_limit_per_second: Option<f64>,
    /// Requests in flight per host.
    pub concurrency: Option<u32>,
    /// Charset that overrides what pages declare.
    pub charset_override: Option<Option<String>>,
    /// Extraction hints.
    pub extraction: Option<ExtractionHints>,
    /// Crawled on its schedule and on demand.
    pub enabled: Option<bool>,
    /// Visitors a month, when known (it weighs matches).
    pub audience: Option<Option<u64>>,
    /// The site's search template (`{{key}}` for the title).
    pub search_url: Option<Option<String>>,
}

impl SiteSettings {
    /// Returns whether the edit is exactly "disable the site".
    fn disables_only(&self) -> bool {
        let Self {
            name,
            seeds,
            allow_patterns,
            deny_patterns,
            max_depth,
            max_pages_per_run,
            schedule,
            rate_limit_per_second,
            concurrency,
            charset_override,
            extraction,
            enabled,
            audience,
            search_url,
        } = self;
        *enabled == Some(false)
            && name.is_none()
            && seeds.is_none()
            && allow_patterns.is_none()
            && deny_patterns.is_none()
            && max_depth.is_none()
            && max_pages_per_run.is_none()
            && schedule.is_none()
            && rate_limit_per_second.is_none()
            && concurrency.is_none()
            && charset_override.is_none()
            && extraction.is_none()
            && audience.is_none()
            && search_url.is_none()
    }

    /// Writes the given fields into `site`.
    fn apply(self, site: &mut Site) {
        if let Some(name) = self.name {
            site.name = name.trim().to_string();
        }
        if let Some(seeds) = self.seeds {
            site.seeds = seeds;
        }
        if let Some(patterns) = self.allow_patterns {
            site.allow_patterns = patterns;
        }
        if let Some(patterns) = self.deny_patterns {
            site.deny_patterns = patterns;
        }
        site.max_depth = self.max_depth.unwrap_or(site.max_depth);
        site.max_pages_per_run = self.max_pages_per_run.unwrap_or(site.max_pages_per_run);
        if let Some(schedule) = self.schedule {
            site.schedule = schedule.filter(|schedule| !schedule.trim().is_empty());
        }
        site.rate_limit_per_second = self
            .rate_limit_per_second
            .unwrap_or(site.rate_limit_per_second);
        site.concurrency = self.concurrency.unwrap_or(site.concurrency);
        if let Some(charset) = self.charset_override {
            site.charset_override = charset;
        }
        if let Some(extraction) = self.extraction {
            site.extraction = extraction;
        }
        site.enabled = self.enabled.unwrap_or(site.enabled);
        if let Some(audience) = self.audience {
            site.audience = audience;
        }
        match self.search_url {
            Some(search_url) => site.search_url = search_url,
            // New seeds on other hosts: the old host's search goes with it.
            None => {
                let host = |url: &str| {
                    url::Url::parse(&url.replace(copyhound_core::site::SEARCH_KEY, "key"))
                        .ok()
                        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
                };
                if let Some(template) = &site.search_url
                    && !site
                        .seeds
                        .iter()
                        .any(|seed| host(seed).is_some() && host(seed) == host(template))
                {
                    site.search_url = None;
                }
            }
        }
    }
}

/// Creates and stores a site of `publisher_id`: defaults for what `settings`
/// leaves out, then the validation under `policy`.
pub async fn create_site(
    ports: &Ports,
    publisher_id: &PublisherId,
    id: Option<SiteId>,
    settings: SiteSettings,
    policy: &SitePolicy,
    by: &str,
) -> Result<Site> {
    let mut site = default_site(publisher_id.clone());
    if let Some(id) = id {
        site.id = id;
    }
    settings.apply(&mut site);
    validate_site(&site, policy)?;
    ports.sites.put_site(&site).await?;
    tracing::info!(site_id = %site.id, by, "site created");
    Ok(site)
}

/// Edits a site of `publisher_id`. Disabling alone is always allowed, so a
/// site stored before a rule existed can still be switched off; any other
/// edit is validated. A new audience rescores the site's matches.
pub async fn update_site(
    ports: &Ports,
    publisher_id: &PublisherId,
    site_id: &SiteId,
    settings: SiteSettings,
    policy: &SitePolicy,
    by: &str,
) -> Result<Site> {
    let mut site = owned_site(ports, publisher_id, site_id).await?;
    let disables_only = settings.disables_only();
    let audience_before = site.audience;
    settings.apply(&mut site);
    if !disables_only {
        validate_site(&site, policy)?;
    }
    ports.sites.put_site(&site).await?;
    tracing::info!(site_id = %site.id, enabled = site.enabled, by, "site updated");
    if site.audience != audience_before {
        rescore_site(ports, publisher_id, &site.id).await?;
    }
    Ok(site)
}

/// Returns a site of `publisher_id`; another tenant's site is `NotFound`.
pub async fn owned_site(
    ports: &Ports,
    publisher_id: &PublisherId,
    site_id: &SiteId,
) -> Result<Site> {
    let site = ports.sites.get_site(site_id).await?;
    if site.publisher_id != *publisher_id {
        return Err(copyhound_core::Error::not_found(format!("site {site_id}")));
    }
    Ok(site)
}

/// Pages compared again per enqueue when a site is rescored.
const RESCORE_BATCH: usize = 500;

/// Compares again every page of the site that carries one of the
/// publisher's matches, so their scores take the site's new reach (the
/// comparison is idempotent: the same matches, rescored).
pub async fn rescore_site(
    ports: &Ports,
    publisher_id: &PublisherId,
    site_id: &SiteId,
) -> Result<()> {
    let filter = MatchFilter {
        site_id: Some(site_id.clone()),
        ..MatchFilter::of_publisher(publisher_id.clone())
    };
    let mut pages = BTreeSet::new();
    let mut request = PageRequest {
        after: None,
        limit: 200,
    };
    loop {
        let listed = ports.matches.list_matches(&filter, &request).await?;
        pages.extend(listed.items.into_iter().map(|found| found.page_id));
        match listed.next {
            Some(next) => request.after = Some(next),
            None => break,
        }
    }
    let mut tasks = Vec::new();
    for page_id in &pages {
        match ports.pages.get_page(page_id).await {
            Ok(page) => tasks.push(Task::new(
                TaskKind::ComparePage {
                    page_id: page_id.clone(),
                    content_sha256: page.content_sha256,
                },
                Utc::now(),
            )),
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        if tasks.len() >= RESCORE_BATCH {
            ports.queue.enqueue(std::mem::take(&mut tasks)).await?;
        }
    }
    if !tasks.is_empty() {
        ports.queue.enqueue(tasks).await?;
    }
    tracing::info!(site_id = %site_id, pages = pages.len(), "site's matches queued for rescoring");
    Ok(())
}
