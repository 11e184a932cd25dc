//! The sites routes: watched sites and their crawl runs. Sites are created,
//! edited and crawled through `copyhound_intake` (the same functions
//! `copyhound sites add` and the scheduler use), under the deployment's
//! address policy, so nothing is stored that the crawler would refuse;
//! refusals are 400 `invalid_input` naming the field and never echo
//! credentials.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use copyhound_core::Result;
use copyhound_core::ids::{CrawlRunId, SiteId};
use copyhound_core::model::{CrawlRun, ExtractionHints, Recipients, Site};
use copyhound_core::ports::{Paged, recipient_query};
use copyhound_core::site::{
    MAX_CONCURRENCY, MAX_DEPTH, MAX_NAME_CHARS, MAX_PAGES_PER_RUN, MAX_PATTERN_CHARS, MAX_PATTERNS,
    MAX_RATE_LIMIT_PER_SECOND, MAX_SEEDS,
};
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, Schema, SchemaFormat, Type,
};

use copyhound_intake::sites::SiteSettings;

use super::{ListQuery, owned_run, owned_site, page_request};
use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody, parse_id};
use crate::openapi::{non_blank, non_blank_pattern, nullable};

/// A seed: an http(s) URL on a host name or address (hosts on loopback,
/// private or reserved addresses are refused unless the deployment allows
/// them); the crawler's site validation holds every seed to it.
pub use copyhound_core::site::SEED_PATTERN;

fn custom_string(format: &str, max_chars: usize, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(max_chars))
        .format(Some(SchemaFormat::Custom(format.to_string())))
        .description(Some(description))
}

fn integer(minimum: usize, maximum: usize) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(minimum))
        .maximum(Some(maximum))
}

fn site_name_schema() -> Schema {
    non_blank(MAX_NAME_CHARS).into()
}

fn nullable_site_name_schema() -> Schema {
    nullable(non_blank(MAX_NAME_CHARS))
}

fn seeds() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(2048))
                .pattern(Some(SEED_PATTERN)),
        )
        .min_items(Some(1))
        .max_items(Some(MAX_SEEDS))
}

fn seeds_schema() -> Schema {
    seeds().into()
}

fn nullable_seeds_schema() -> Schema {
    nullable(seeds())
}

fn url_patterns() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(
            custom_string(
                "url-pattern",
                MAX_PATTERN_CHARS,
                "A URL regex, or a glob with `*`",
            )
            .pattern(Some(non_blank_pattern())),
        )
        .max_items(Some(MAX_PATTERNS))
}

fn url_patterns_schema() -> Schema {
    url_patterns().into()
}

fn nullable_url_patterns_schema() -> Schema {
    nullable(url_patterns())
}

fn max_depth_schema() -> Schema {
    nullable(integer(0, MAX_DEPTH as usize))
}

fn max_pages_schema() -> Schema {
    nullable(integer(1, MAX_PAGES_PER_RUN as usize))
}

fn audience_schema() -> Schema {
    nullable(integer(0, Site::MAX_AUDIENCE as usize))
}

fn concurrency_schema() -> Schema {
    nullable(integer(1, MAX_CONCURRENCY as usize))
}

fn rate_limit_schema() -> Schema {
    nullable(
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .minimum(Some(0.0))
            .maximum(Some(MAX_RATE_LIMIT_PER_SECOND)),
    )
}

fn schedule_schema() -> Schema {
    nullable(custom_string(
        "cron",
        MAX_PATTERN_CHARS,
        "Cron expression (5 or 6 fields, UTC) that fires in the future; blank: on demand only",
    ))
}

fn charset_schema() -> Schema {
    nullable(custom_string(
        "charset",
        64,
        "A WHATWG encoding label (`gbk`, `big5`, `utf-8`)",
    ))
}

fn selector() -> ObjectBuilder {
    custom_string("css-selector", MAX_PATTERN_CHARS, "A CSS selector")
}

fn extraction() -> ObjectBuilder {
    ObjectBuilder::new()
        .property("content_selector", nullable(selector()))
        .property("next_page_selector", nullable(selector()))
        .property(
            "render",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["auto", "never", "chromium"]))
                .description(Some(
                    "How pages are read: `auto` (default) as served, rendered by headless \
                     Chromium when the text arrives by script (a ciphered payload, or a thin \
                     text a script writes into); `never` as served, always; `chromium` \
                     rendered, always. `html`, the earlier name of `auto`, is accepted",
                )),
        )
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .description(Some(
            "Extraction hints: CSS selectors of the text block and of the next-page link, \
             and how pages are rendered",
        ))
}

fn extraction_schema() -> Schema {
    extraction().into()
}

fn nullable_extraction_schema() -> Schema {
    nullable(extraction())
}

/// Body of `POST /sites`. `null` in an optional field means its default.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSite {
    /// Display name.
    #[schema(schema_with = site_name_schema)]
    pub name: String,
    /// Start URLs (http or https).
    #[schema(schema_with = seeds_schema)]
    pub seeds: Vec<String>,
    /// URL patterns links must match.
    #[serde(default)]
    #[schema(schema_with = url_patterns_schema)]
    pub allow_patterns: Vec<String>,
    /// URL patterns never followed.
    #[serde(default)]
    #[schema(schema_with = url_patterns_schema)]
    pub deny_patterns: Vec<String>,
    /// Link depth (default 5).
    #[schema(schema_with = max_depth_schema)]
    pub max_depth: Option<u32>,
    /// Fetch budget per run (default 10,000).
    #[schema(schema_with = max_pages_schema)]
    pub max_pages_per_run: Option<u32>,
    /// Cron expression (UTC).
    #[schema(schema_with = schedule_schema)]
    pub schedule: Option<String>,
    /// Requests per second per host (default 1; 0: unlimited).
    #[schema(schema_with = rate_limit_schema)]
    pub rate_limit_per_second: Option<f64>,
    /// Requests in flight per host (default 2).
    #[schema(schema_with = concurrency_schema)]
    pub concurrency: Option<u32>,
    /// Forced charset.
    #[schema(schema_with = charset_schema)]
    pub charset_override: Option<String>,
    /// Extraction hints.
    #[serde(default, deserialize_with = "hints_object")]
    #[schema(schema_with = extraction_schema)]
    pub extraction: ExtractionHints,
    /// Enabled (default true).
    pub enabled: Option<bool>,
    /// The site's audience as you estimate it, visits a month: its reach
    /// weighs into the scores of the matches found on it.
    #[schema(schema_with = audience_schema)]
    pub audience: Option<u64>,
}

/// Deserializes extraction hints from a JSON object only (serde would also
/// take a sequence of the fields, which the schema does not allow).
fn hints_object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ExtractionHints, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    if !value.is_object() {
        return Err(serde::de::Error::custom("`extraction` must be an object"));
    }
    serde_json::from_value(value).map_err(serde::de::Error::custom)
}

/// As [`hints_object`], with `null` kept as `None`.
fn optional_hints_object<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ExtractionHints>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    if value.is_null() {
        return Ok(None);
    }
    hints_object(value)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// Deserializes a present field, `null` included, as `Some(value)`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Body of `PATCH /sites/{site_id}`: absent fields are kept; `null` clears
/// `schedule` and `charset_override` and keeps the other fields.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSite {
    /// Display name.
    #[schema(schema_with = nullable_site_name_schema)]
    pub name: Option<String>,
    /// Start URLs.
    #[schema(schema_with = nullable_seeds_schema)]
    pub seeds: Option<Vec<String>>,
    /// Allow patterns.
    #[schema(schema_with = nullable_url_patterns_schema)]
    pub allow_patterns: Option<Vec<String>>,
    /// Deny patterns.
    #[schema(schema_with = nullable_url_patterns_schema)]
    pub deny_patterns: Option<Vec<String>>,
    /// Link depth.
    #[schema(schema_with = max_depth_schema)]
    pub max_depth: Option<u32>,
    /// Fetch budget per run.
    #[schema(schema_with = max_pages_schema)]
    pub max_pages_per_run: Option<u32>,
    /// Cron expression; `null` for on-demand only.
    #[serde(default, deserialize_with = "present")]
    #[schema(schema_with = schedule_schema)]
    pub schedule: Option<Option<String>>,
    /// Requests per second per host.
    #[schema(schema_with = rate_limit_schema)]
    pub rate_limit_per_second: Option<f64>,
    /// Requests in flight per host.
    #[schema(schema_with = concurrency_schema)]
    pub concurrency: Option<u32>,
    /// Forced charset; `null` to detect.
    #[serde(default, deserialize_with = "present")]
    #[schema(schema_with = charset_schema)]
    pub charset_override: Option<Option<String>>,
    /// Extraction hints.
    #[serde(default, deserialize_with = "optional_hints_object")]
    #[schema(schema_with = nullable_extraction_schema)]
    pub extraction: Option<ExtractionHints>,
    /// `false` disables the site (no scheduled or manual crawls).
    pub enabled: Option<bool>,
    /// Visits a month as you estimate them; `null` clears the estimate.
    /// A change rescores the site's matches (its pages are compared again).
    #[serde(default, deserialize_with = "present")]
    #[schema(schema_with = audience_schema)]
    pub audience: Option<Option<u64>>,
}

/// `GET /api/v1/sites`: the publisher's watched sites.
#[utoipa::path(
    get,
    path = "/api/v1/sites",
    tag = "sites",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of sites", body = Paged<Site>),
        (status = 400, description = "Invalid query", body = ErrorBody),
        key_errors::PublisherKey,
    )
)]
pub async fn list_sites(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Site>>> {
    let page = page_request(query.after, query.limit)?;
    let sites = state
        .ports
        .sites
        .list_sites(Some(&caller.publisher_id), &page)
        .await
        .map_err(super::cursor_error)?;
    Ok(Json(sites))
}

/// `POST /api/v1/sites`: watches a site.
#[utoipa::path(
    post,
    path = "/api/v1/sites",
    tag = "sites",
    request_body = CreateSite,
    responses(
        (status = 201, description = "Created", body = Site),
        (status = 400, description = "Invalid body (the message names the field)", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn create_site(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<CreateSite>,
) -> ApiResult<(StatusCode, Json<Site>)> {
    let site = copyhound_intake::sites::create_site(
        &state.ports,
        &caller.publisher_id,
        None,
        body.into(),
        &state.site_policy,
        &caller.key_id,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(site)))
}

/// `GET /api/v1/sites/{site_id}`.
#[utoipa::path(
    get,
    path = "/api/v1/sites/{site_id}",
    tag = "sites",
    params(("site_id" = SiteId, Path, description = "The site")),
    responses(
        (status = 200, description = "The site", body = Site),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such site", body = ErrorBody),
    )
)]
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
#[utoipa::path(
    patch,
    path = "/api/v1/sites/{site_id}",
    tag = "sites",
    params(("site_id" = SiteId, Path, description = "The site")),
    request_body = UpdateSite,
    responses(
        (status = 200, description = "The updated site", body = Site),
        (status = 400, description = "Invalid id or body (the message names the field)", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such site", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn update_site(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(site_id): ApiPath<String>,
    ApiJson(body): ApiJson<UpdateSite>,
) -> ApiResult<Json<Site>> {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = copyhound_intake::sites::update_site(
        &state.ports,
        &caller.publisher_id,
        &site_id,
        body.into(),
        &state.site_policy,
        &caller.key_id,
    )
    .await?;
    Ok(Json(site))
}

impl From<CreateSite> for SiteSettings {
    fn from(body: CreateSite) -> Self {
        Self {
            name: Some(body.name),
            seeds: Some(body.seeds),
            allow_patterns: Some(body.allow_patterns),
            deny_patterns: Some(body.deny_patterns),
            max_depth: body.max_depth,
            max_pages_per_run: body.max_pages_per_run,
            schedule: Some(body.schedule),
            rate_limit_per_second: body.rate_limit_per_second,
            concurrency: body.concurrency,
            charset_override: Some(body.charset_override),
            extraction: Some(body.extraction),
            enabled: body.enabled,
            audience: Some(body.audience),
            search_url: None,
        }
    }
}

impl From<UpdateSite> for SiteSettings {
    fn from(body: UpdateSite) -> Self {
        Self {
            name: body.name,
            seeds: body.seeds,
            allow_patterns: body.allow_patterns,
            deny_patterns: body.deny_patterns,
            max_depth: body.max_depth,
            max_pages_per_run: body.max_pages_per_run,
            schedule: body.schedule,
            rate_limit_per_second: body.rate_limit_per_second,
            concurrency: body.concurrency,
            charset_override: body.charset_override,
            extraction: body.extraction,
            enabled: body.enabled,
            audience: body.audience,
            search_url: None,
        }
    }
}

/// Starts a crawl of a site now (`Conflict` when disabled or already running).
pub async fn enqueue_crawl(state: &AppState, site: &Site) -> Result<CrawlRun> {
    copyhound_intake::crawls::crawl_now(
        state.ports.sites.as_ref(),
        state.ports.queue.as_ref(),
        site,
        state.site_policy.max_run,
    )
    .await
}

/// `POST /api/v1/sites/{site_id}/crawls`: starts a crawl now.
#[utoipa::path(
    post,
    path = "/api/v1/sites/{site_id}/crawls",
    tag = "sites",
    params(("site_id" = SiteId, Path, description = "The site")),
    responses(
        (status = 202, description = "A queued run", body = CrawlRun),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such site", body = ErrorBody),
        (status = 409, description = "The site is disabled, or a crawl of it is queued or running", body = ErrorBody),
    )
)]
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
#[utoipa::path(
    get,
    path = "/api/v1/sites/{site_id}/crawls",
    tag = "sites",
    params(("site_id" = SiteId, Path, description = "The site"), ListQuery),
    responses(
        (status = 200, description = "One page of runs", body = Paged<CrawlRun>),
        (status = 400, description = "Invalid id or query", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such site", body = ErrorBody),
    )
)]
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
            .ports
            .sites
            .list_crawl_runs(&site_id, &page)
            .await
            .map_err(super::cursor_error)?,
    ))
}

/// `GET /api/v1/crawls/{run_id}`: status, counters and recent errors of a run.
#[utoipa::path(
    get,
    path = "/api/v1/crawls/{run_id}",
    tag = "sites",
    params(("run_id" = CrawlRunId, Path, description = "The run")),
    responses(
        (status = 200, description = "The run", body = CrawlRun),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such run", body = ErrorBody),
    )
)]
pub async fn get_crawl(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<CrawlRun>> {
    let run_id = parse_id::<CrawlRunId>("run_id", &run_id)?;
    let (run, _site) = owned_run(&state, &caller.publisher_id, &run_id).await?;
    Ok(Json(run))
}

/// How long `GET /api/v1/sites/{site_id}/recipients` waits for the lookup.
pub const RECIPIENTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Returns who to notify about `site` through the server's lookup
/// (`Unavailable` when `[rdap]` is not configured, `Timeout` past
/// [`RECIPIENTS_TIMEOUT`]).
pub async fn lookup_recipients(state: &AppState, site: &Site) -> Result<Recipients> {
    let Some(lookup) = &state.recipients else {
        return Err(copyhound_core::Error::new(
            copyhound_core::ErrorKind::Unavailable,
            "recipient lookups are not configured: set rdap.bootstrap",
        ));
    };
    let query = recipient_query(site, state.ports.pages.as_ref()).await?;
    tokio::time::timeout(RECIPIENTS_TIMEOUT, lookup.recipients(&query))
        .await
        .map_err(|_| {
            copyhound_core::Error::new(
                copyhound_core::ErrorKind::Timeout,
                format!("recipient lookup of site {} took too long", site.id),
            )
        })?
}

/// `GET /api/v1/sites/{site_id}/recipients`: who to notify about the site.
#[utoipa::path(
    get,
    path = "/api/v1/sites/{site_id}/recipients",
    tag = "sites",
    params(("site_id" = SiteId, Path, description = "The site")),
    responses(
        (status = 200, description = "The registrar of the site's domain, the network hosting \
            its address and the CDN fronting it, each with its abuse contact, as RDAP answers them \
            (cached). What could not be found is listed in `problems`", body = Recipients),
        (status = 400, description = "Invalid id, or the site has no host to look up", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such site", body = ErrorBody),
        (status = 502, description = "The registries failed or answered garbage", body = ErrorBody),
        (status = 503, description = "Recipient lookups are not configured (`rdap.bootstrap`)", body = ErrorBody),
        (status = 504, description = "The registries did not answer in time", body = ErrorBody),
    )
)]
pub async fn get_recipients(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(site_id): ApiPath<String>,
) -> ApiResult<Json<Recipients>> {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    Ok(Json(lookup_recipients(&state, &site).await?))
}
