//! Watched sites and their crawl runs. A crawl started here is a `Queued` run
//! plus a `CrawlSite` task; the crawler moves the run through its states and
//! fills its counters. Sites are checked by the crawler's own validation
//! ([`copyhound_crawler::site::validate_site`], the one `copyhound sites add`
//! uses) under the deployment's address policy, so nothing is stored that the
//! crawler would refuse; refusals are 400 `invalid_input` naming the field and
//! never echo credentials.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use copyhound_core::ids::{CrawlRunId, SiteId};
use copyhound_core::model::{
    CrawlCounters, CrawlRun, CrawlRunStatus, ExtractionHints, Site, Task, TaskKind,
};
use copyhound_core::ports::Paged;
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_crawler::site::validate_site;
use serde::{Deserialize, Deserializer};

use super::{ListQuery, owned_run, owned_site, page_request};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiPath, ApiQuery, ApiResult, parse_id};

/// Body of `POST /sites`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSite {
    /// Display name.
    pub name: String,
    /// Start URLs (http or https).
    pub seeds: Vec<String>,
    /// URL patterns links must match.
    #[serde(default)]
    pub allow_patterns: Vec<String>,
    /// URL patterns never followed.
    #[serde(default)]
    pub deny_patterns: Vec<String>,
    /// Link depth (default 3).
    pub max_depth: Option<u32>,
    /// Fetch budget per run (default 1000).
    pub max_pages_per_run: Option<u32>,
    /// Cron expression (UTC).
    pub schedule: Option<String>,
    /// Requests per second per host (default 1).
    pub rate_limit_per_second: Option<f64>,
    /// Requests in flight per host (default 2).
    pub concurrency: Option<u32>,
    /// Forced charset.
    pub charset_override: Option<String>,
    /// Extraction hints.
    #[serde(default)]
    pub extraction: ExtractionHints,
    /// Enabled (default true).
    pub enabled: Option<bool>,
}

/// Deserializes a present field, `null` included, as `Some(value)`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Body of `PATCH /sites/{site_id}`: absent fields are kept; `null` clears the optional ones.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateSite {
    /// Display name.
    pub name: Option<String>,
    /// Start URLs.
    pub seeds: Option<Vec<String>>,
    /// Allow patterns.
    pub allow_patterns: Option<Vec<String>>,
    /// Deny patterns.
    pub deny_patterns: Option<Vec<String>>,
    /// Link depth.
    pub max_depth: Option<u32>,
    /// Fetch budget per run.
    pub max_pages_per_run: Option<u32>,
    /// Cron expression; `null` for on-demand only.
    #[serde(default, deserialize_with = "present")]
    pub schedule: Option<Option<String>>,
    /// Requests per second per host.
    pub rate_limit_per_second: Option<f64>,
    /// Requests in flight per host.
    pub concurrency: Option<u32>,
    /// Forced charset; `null` to detect.
    #[serde(default, deserialize_with = "present")]
    pub charset_override: Option<Option<String>>,
    /// Extraction hints.
    pub extraction: Option<ExtractionHints>,
    /// `false` disables the site (no scheduled or manual crawls).
    pub enabled: Option<bool>,
}

/// `GET /api/v1/sites`.
pub async fn list_sites(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Site>>> {
    let page = page_request(query.after, query.limit)?;
    let sites = state
        .sites
        .list_sites(Some(&caller.publisher_id), &page)
        .await
        .map_err(super::cursor_error)?;
    Ok(Json(sites))
}

/// `POST /api/v1/sites`.
pub async fn create_site(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<CreateSite>,
) -> ApiResult<(StatusCode, Json<Site>)> {
    let site = Site {
        id: SiteId::generate(),
        publisher_id: caller.publisher_id.clone(),
        name: body.name.trim().to_string(),
        seeds: body.seeds,
        allow_patterns: body.allow_patterns,
        deny_patterns: body.deny_patterns,
        max_depth: body.max_depth.unwrap_or(Site::DEFAULT_MAX_DEPTH),
        max_pages_per_run: body
            .max_pages_per_run
            .unwrap_or(Site::DEFAULT_MAX_PAGES_PER_RUN),
        schedule: body.schedule.filter(|schedule| !schedule.trim().is_empty()),
        rate_limit_per_second: body
            .rate_limit_per_second
            .unwrap_or(Site::DEFAULT_RATE_LIMIT_PER_SECOND),
        concurrency: body.concurrency.unwrap_or(Site::DEFAULT_CONCURRENCY),
        charset_override: body.charset_override,
        extraction: body.extraction,
        enabled: body.enabled.unwrap_or(true),
        created_at: Utc::now(),
    };
    validate_site(&site, &state.site_policy)?;
    state.sites.put_site(&site).await?;
    tracing::info!(site_id = %site.id, by = %caller.key_id, "site created");
    Ok((StatusCode::CREATED, Json(site)))
}

/// `GET /api/v1/sites/{site_id}`.
pub async fn get_site(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(site_id): ApiPath<String>,
) -> ApiResult<Json<Site>> {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    Ok(Json(
        owned_site(&state, &caller.publisher_id, &site_id).await?,
    ))
}

/// `PATCH /api/v1/sites/{site_id}`: updates, disables or re-enables a site.
pub async fn update_site(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(site_id): ApiPath<String>,
    ApiJson(body): ApiJson<UpdateSite>,
) -> ApiResult<Json<Site>> {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let mut site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    // Disabling alone is always allowed, so a site stored before a rule existed
    // can still be switched off.
    let disables_only = body.disables_only();
    apply_update(&mut site, body);
    if !disables_only {
        validate_site(&site, &state.site_policy)?;
    }
    state.sites.put_site(&site).await?;
    tracing::info!(site_id = %site.id, enabled = site.enabled, by = %caller.key_id, "site updated");
    Ok(Json(site))
}

impl UpdateSite {
    /// Returns whether the update is exactly `{"enabled": false}`.
    fn disables_only(&self) -> bool {
        self.enabled == Some(false)
            && self.name.is_none()
            && self.seeds.is_none()
            && self.allow_patterns.is_none()
            && self.deny_patterns.is_none()
            && self.max_depth.is_none()
            && self.max_pages_per_run.is_none()
            && self.schedule.is_none()
            && self.rate_limit_per_second.is_none()
            && self.concurrency.is_none()
            && self.charset_override.is_none()
            && self.extraction.is_none()
    }
}

fn apply_update(site: &mut Site, update: UpdateSite) {
    if let Some(name) = update.name {
        site.name = name.trim().to_string();
    }
    if let Some(seeds) = update.seeds {
        site.seeds = seeds;
    }
    if let Some(patterns) = update.allow_patterns {
        site.allow_patterns = patterns;
    }
    if let Some(patterns) = update.deny_patterns {
        site.deny_patterns = patterns;
    }
    site.max_depth = update.max_depth.unwrap_or(site.max_depth);
    site.max_pages_per_run = update.max_pages_per_run.unwrap_or(site.max_pages_per_run);
    if let Some(schedule) = update.schedule {
        site.schedule = schedule.filter(|schedule| !schedule.trim().is_empty());
    }
    site.rate_limit_per_second = update
        .rate_limit_per_second
        .unwrap_or(site.rate_limit_per_second);
    site.concurrency = update.concurrency.unwrap_or(site.concurrency);
    if let Some(charset) = update.charset_override {
        site.charset_override = charset;
    }
    if let Some(extraction) = update.extraction {
        site.extraction = extraction;
    }
    site.enabled = update.enabled.unwrap_or(site.enabled);
}

/// Creates a queued run of an enabled site and enqueues its `CrawlSite` task.
pub async fn enqueue_crawl(state: &AppState, site: &Site) -> Result<CrawlRun> {
    if !site.enabled {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("site {} is disabled; enable it first", site.id),
        ));
    }
    let run = CrawlRun {
        id: CrawlRunId::generate(),
        site_id: site.id.clone(),
        status: CrawlRunStatus::Queued,
        created_at: Utc::now(),
        started_at: None,
        finished_at: None,
        counters: CrawlCounters::default(),
        recent_errors: Vec::new(),
    };
    state.sites.put_crawl_run(&run).await?;
    let task = Task::new(
        TaskKind::CrawlSite {
            site_id: site.id.clone(),
            run_id: run.id.clone(),
        },
        run.created_at,
    );
    state.queue.enqueue(vec![task]).await?;
    Ok(run)
}

/// `POST /api/v1/sites/{site_id}/crawls`: starts a crawl now.
pub async fn start_crawl(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(site_id): ApiPath<String>,
) -> ApiResult<(StatusCode, Json<CrawlRun>)> {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    let run = enqueue_crawl(&state, &site).await?;
    tracing::info!(site_id = %site_id, run_id = %run.id, by = %caller.key_id, "crawl enqueued");
    Ok((StatusCode::ACCEPTED, Json(run)))
}

/// `GET /api/v1/sites/{site_id}/crawls`: runs, newest first.
pub async fn list_crawls(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(site_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<CrawlRun>>> {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    owned_site(&state, &caller.publisher_id, &site_id).await?;
    let page = page_request(query.after, query.limit)?;
    Ok(Json(
        state
            .sites
            .list_crawl_runs(&site_id, &page)
            .await
            .map_err(super::cursor_error)?,
    ))
}

/// `GET /api/v1/crawls/{run_id}`: status, counters and recent errors of a run.
pub async fn get_crawl(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<CrawlRun>> {
    let run_id = parse_id::<CrawlRunId>("run_id", &run_id)?;
    let (run, _site) = owned_run(&state, &caller.publisher_id, &run_id).await?;
    Ok(Json(run))
}
