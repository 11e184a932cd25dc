//! UI page handlers. They reuse the API's loaders and validation so the UI can
//! never see more than the API would show the same key.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{Duration, Utc};
use copyhound_core::ids::{MatchId, SiteId, WorkId};
use copyhound_core::model::MatchStatus;
use copyhound_core::ports::{MatchFilter, PageRequest};
use serde::Deserialize;
use serde_json::json;

use super::operator::{Sent, first_send};
use super::session::{form_token, session_id};
use super::{ConsoleState, DayCount, UiCaller, UiError, bar_chart_svg, render};
use crate::AppState;
use crate::api::matches::{
    EvidencePart, MatchQuery, MatchSummary, ReviewAction, ReviewBody, load_match_detail,
    match_filter,
};
use crate::api::owned_site;
use crate::api::works::load_work_detail;
use crate::auth::PublisherCaller;
use crate::error::{ApiQuery, parse_id};

type UiResult = Result<Response, UiError>;

/// Most works and sites a page lists in its pickers and tables.
const LISTED: u32 = 200;

/// The publisher's works and sites (the first [`LISTED`] of each).
async fn works_and_sites(
    state: &AppState,
    publisher_id: &copyhound_core::ids::PublisherId,
) -> Result<
    (
        copyhound_core::ports::Paged<copyhound_core::model::Work>,
        copyhound_core::ports::Paged<copyhound_core::model::Site>,
    ),
    UiError,
> {
    let works = state
        .ports
        .works
        .list_works(publisher_id, &first_page(LISTED))
        .await?;
    let sites = state
        .ports
        .sites
        .list_sites(Some(publisher_id), &first_page(LISTED))
        .await?;
    Ok((works, sites))
}

/// A page that answers a refused form: 400, the form shown again with why.
fn refused(mut response: Response) -> Response {
    *response.status_mut() = axum::http::StatusCode::BAD_REQUEST;
    response
}

/// Days shown in the dashboard chart.
const CHART_DAYS: i64 = 30;
/// Most matches the dashboard reads to draw its chart.
const CHART_SAMPLE: usize = 2000;

fn first_page(limit: u32) -> PageRequest {
    PageRequest { after: None, limit }
}

/// Match rows as the console lists them: each summary with the titles of
/// its work and chapter (`null` when deleted since: the page shows the id),
/// looked up once per distinct work, not per row.
async fn titled_rows(
    state: &AppState,
    publisher_id: &copyhound_core::ids::PublisherId,
    found: &[copyhound_core::model::Match],
) -> Result<Vec<serde_json::Value>, UiError> {
    let titles = copyhound_report::Titles::load(
        state.ports.works.as_ref(),
        publisher_id,
        found.iter().map(|m| (&m.work_id, &m.chapter_id)),
    )
    .await?;
    Ok(found
        .iter()
        .map(|m| {
            let mut row = serde_json::to_value(MatchSummary::from(m)).unwrap_or_default();
            row["work_title"] = json!(titles.work(&m.work_id));
            row["chapter_title"] = json!(titles.chapter(&m.work_id, &m.chapter_id));
            row
        })
        .collect())
}

pub(super) async fn dashboard(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    let (works, sites) = works_and_sites(&state, &caller.publisher_id).await?;
    let since = Utc::now() - Duration::days(CHART_DAYS - 1);
    let start_day = since.date_naive();
    let filter = MatchFilter {
        seen_since: Some(
            start_day
                .and_hms_opt(0, 0, 0)
                .expect("midnight exists")
                .and_utc(),
        ),
        ..MatchFilter::of_publisher(caller.publisher_id.clone())
    };
    let mut per_day: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_status: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut page = first_page(200);
    let mut read = 0usize;
    loop {
        let batch = state.ports.matches.list_matches(&filter, &page).await?;
        for found in &batch.items {
            *per_status.entry(found.status.as_str()).or_default() += 1;
            if found.first_seen.date_naive() >= start_day {
                *per_day
                    .entry(found.first_seen.format("%Y-%m-%d").to_string())
                    .or_default() += 1;
            }
        }
        read += batch.items.len();
        match batch.next {
            Some(next) if read < CHART_SAMPLE => page.after = Some(next),
            _ => break,
        }
    }
    let days: Vec<DayCount> = (0..CHART_DAYS)
        .map(|offset| {
            let day = (start_day + Duration::days(offset))
                .format("%Y-%m-%d")
                .to_string();
            let count = per_day.get(&day).copied().unwrap_or(0);
            DayCount { day, count }
        })
        .collect();
    let newest_filter = MatchFilter {
        statuses: vec![MatchStatus::New, MatchStatus::Confirmed],
        seen_since: None,
        ..filter
    };
    let newest = state
        .ports
        .matches
        .list_matches(&newest_filter, &first_page(10))
        .await?;
    let newest = titled_rows(&state, &caller.publisher_id, &newest.items).await?;
    Ok(render(
        "dashboard.html",
        json!({
            "publisher": caller.publisher_id,
            "works": works.items.len(), "works_more": works.next.is_some(),
            "sites": sites.items.len(), "sites_more": sites.next.is_some(),
            "recent": read, "per_status": per_status,
            "chart": bar_chart_svg(&days),
            "newest": newest,
        }),
    ))
}

pub(super) async fn works(State(state): State<AppState>, UiCaller(caller): UiCaller) -> UiResult {
    let works = state
        .ports
        .works
        .list_works(&caller.publisher_id, &first_page(LISTED))
        .await?;
    Ok(render(
        "works.html",
        json!({ "publisher": caller.publisher_id, "works": works.items, "more": works.next.is_some() }),
    ))
}

pub(super) async fn work(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
) -> UiResult {
    work_page(&state, &caller, &work_id, None).await
}

/// A work's page: its chapters' state, licensed hosts (and their form), matches.
async fn work_page(
    state: &AppState,
    caller: &PublisherCaller,
    work_id: &str,
    error: Option<String>,
) -> UiResult {
    let work_id = parse_id::<WorkId>("work_id", work_id)?;
    let detail = load_work_detail(state, &caller.publisher_id, &work_id).await?;
    let query = MatchQuery {
        work_id: Some(work_id.to_string()),
        ..MatchQuery::default()
    };
    let matches = state
        .ports
        .matches
        .list_matches(
            &match_filter(&caller.publisher_id, &query)?,
            &first_page(50),
        )
        .await?;
    let matches: Vec<MatchSummary> = matches.items.iter().map(MatchSummary::from).collect();
    // The work's own chapters name its matches' chapters: no lookup more.
    let chapter_titles: BTreeMap<String, &str> = detail
        .chapters
        .iter()
        .map(|chapter| (chapter.id.to_string(), chapter.title.as_str()))
        .collect();
    Ok(render(
        "work.html",
        json!({ "publisher": caller.publisher_id, "detail": detail, "matches": matches,
                "chapter_titles": chapter_titles, "error": error }),
    ))
}

#[derive(Debug, Deserialize)]
pub(super) struct HostsForm {
    #[serde(default)]
    hosts: String,
}

/// Replaces a work's licensed hosts (one per line) as the API route does.
pub(super) async fn set_licensed_hosts(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
    Form(form): Form<HostsForm>,
) -> UiResult {
    let body = crate::api::works::LicensedHosts {
        hosts: form
            .hosts
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_string)
            .collect(),
    };
    let saved = crate::api::works::put_licensed_hosts(
        State(state.clone()),
        caller.clone(),
        crate::error::ApiPath(work_id.clone()),
        crate::error::ApiJson(body),
    )
    .await;
    match saved {
        Ok(_) => Ok(Redirect::to(&format!("/ui/works/{work_id}")).into_response()),
        Err(error) if error.0.kind() == copyhound_core::ErrorKind::InvalidInput => Ok(refused(
            work_page(
                &state,
                &caller,
                &work_id,
                Some(error.0.message().to_string()),
            )
            .await?,
        )),
        Err(error) => Err(error.into()),
    }
}

pub(super) async fn sites(State(state): State<AppState>, UiCaller(caller): UiCaller) -> UiResult {
    let sites = state
        .ports
        .sites
        .list_sites(Some(&caller.publisher_id), &first_page(LISTED))
        .await?;
    Ok(render(
        "sites.html",
        json!({ "publisher": caller.publisher_id, "sites": sites.items, "site": null, "form": {} }),
    ))
}

/// The "add a site" form; empty fields take the API's defaults.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
pub(super) struct SiteForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    seeds: String,
    #[serde(default)]
    schedule: String,
    #[serde(default)]
    max_pages_per_run: String,
    #[serde(default)]
    rate_limit_per_second: String,
    #[serde(default)]
    audience: String,
    /// `auto`, `never` or `chromium`; empty keeps what the site has.
    #[serde(default)]
    render: String,
}

impl SiteForm {
    /// The API's body (of `POST` or `PATCH`), or the field that is not a number.
    fn to_body<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        let pages = optional_number::<u32>("pages per run", &self.max_pages_per_run)?;
        let rate = optional_number::<f64>("requests per second", &self.rate_limit_per_second)?;
        if rate.is_some_and(|rate| !rate.is_finite()) {
            return Err("requests per second must be a number".into());
        }
        let audience = optional_number::<u64>("visits a month", &self.audience)?;
        let mut body = json!({
            "name": self.name,
            "seeds": self.seeds.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>(),
            "schedule": self.schedule.trim(),
            "max_pages_per_run": pages,
            "rate_limit_per_second": rate,
            "audience": audience,
        });
        if !self.render.trim().is_empty() {
            body["extraction"] = json!({ "render": self.render.trim() });
        }
        serde_json::from_value(body).map_err(|error| error.to_string())
    }
}

/// A form's number field: empty is `None`; anything else must parse.
fn optional_number<N: std::str::FromStr>(label: &str, raw: &str) -> Result<Option<N>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse()
        .map(Some)
        .map_err(|_| format!("{label} must be a number"))
}

pub(super) async fn create_site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<SiteForm>,
) -> UiResult {
    let created = match form.to_body::<crate::api::sites::CreateSite>() {
        Ok(body) => crate::api::sites::create_site(
            State(state.clone()),
            caller.clone(),
            crate::error::ApiJson(body),
        )
        .await
        .map(|(_, axum::Json(site))| site)
        .map_err(|error| error.0.message().to_string()),
        Err(message) => Err(message),
    };
    match created {
        Ok(site) => Ok(Redirect::to(&format!("/ui/sites/{}", site.id)).into_response()),
        Err(message) => {
            // The form again, with what was typed and why it was refused.
            let sites = state
                .ports
                .sites
                .list_sites(Some(&caller.publisher_id), &first_page(LISTED))
                .await?;
            Ok(refused(render(
                "sites.html",
                json!({ "publisher": caller.publisher_id, "sites": sites.items, "site": null,
                        "form": form, "error": message }),
            )))
        }
    }
}

/// Most matches a site page reads to say what the site copied.
const SITE_SAMPLE: usize = 2000;

/// What a site copied: per chapter, the best coverage, the pages, first and last seen.
async fn copied_by_site(
    state: &AppState,
    publisher_id: &copyhound_core::ids::PublisherId,
    site_id: &SiteId,
) -> Result<serde_json::Value, UiError> {
    let filter = MatchFilter {
        site_id: Some(site_id.clone()),
        ..MatchFilter::of_publisher(publisher_id.clone())
    };
    let mut found = Vec::new();
    let mut page = first_page(200);
    loop {
        let listed = state.ports.matches.list_matches(&filter, &page).await?;
        found.extend(
            listed
                .items
                .into_iter()
                .filter(|m| copyhound_report::is_infringing(m.status)),
        );
        match listed.next {
            Some(next) if found.len() < SITE_SAMPLE => page.after = Some(next),
            next => {
                let truncated = next.is_some();
                let titles = copyhound_report::Titles::load(
                    state.ports.works.as_ref(),
                    publisher_id,
                    found.iter().map(|m| (&m.work_id, &m.chapter_id)),
                )
                .await?;
                return Ok(summarize_copies(&found, &titles, truncated));
            }
        }
    }
}

fn summarize_copies(
    found: &[copyhound_core::model::Match],
    titles: &copyhound_report::Titles,
    truncated: bool,
) -> serde_json::Value {
    #[derive(serde::Serialize)]
    struct Copied {
        work_id: WorkId,
        chapter_id: copyhound_core::ids::ChapterId,
        /// `None` when deleted since: the page shows the id.
        work_title: Option<String>,
        chapter_title: Option<String>,
        coverage: f32,
        pages: usize,
        first_seen: chrono::DateTime<Utc>,
        last_seen: chrono::DateTime<Utc>,
    }
    let mut chapters: BTreeMap<(WorkId, copyhound_core::ids::ChapterId), Copied> = BTreeMap::new();
    let mut pages = std::collections::BTreeSet::new();
    for m in found {
        pages.insert(m.page_id.clone());
        let entry = chapters
            .entry((m.work_id.clone(), m.chapter_id.clone()))
            .or_insert_with(|| Copied {
                work_id: m.work_id.clone(),
                chapter_id: m.chapter_id.clone(),
                work_title: titles.work(&m.work_id).map(str::to_string),
                chapter_title: titles
                    .chapter(&m.work_id, &m.chapter_id)
                    .map(str::to_string),
                coverage: 0.0,
                pages: 0,
                first_seen: m.first_seen,
                last_seen: m.last_seen,
            });
        entry.coverage = entry.coverage.max(m.chapter_coverage);
        entry.pages += 1;
        entry.first_seen = entry.first_seen.min(m.first_seen);
        entry.last_seen = entry.last_seen.max(m.last_seen);
    }
    let works: std::collections::BTreeSet<&WorkId> =
        chapters.keys().map(|(work, _)| work).collect();
    json!({
        "works": works.len(),
        "pages": pages.len(),
        "chapters": chapters.values().collect::<Vec<_>>(),
        "truncated": truncated,
        "sampled": found.len(),
    })
}

/// Edits a site from its page; a refused edit shows the page again with why.
pub(super) async fn edit_site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
    Form(form): Form<SiteForm>,
) -> UiResult {
    let updated = match form.to_body::<crate::api::sites::UpdateSite>() {
        Ok(body) => crate::api::sites::update_site(
            State(state.clone()),
            caller.clone(),
            crate::error::ApiPath(site_id.clone()),
            crate::error::ApiJson(body),
        )
        .await
        .map(|_| ())
        .map_err(|error| error.0),
        Err(message) => Err(copyhound_core::Error::invalid(message)),
    };
    match updated {
        Ok(()) => Ok(Redirect::to(&format!("/ui/sites/{site_id}")).into_response()),
        // Unknown or foreign ids answer as the API does.
        Err(error) if error.kind() != copyhound_core::ErrorKind::InvalidInput => Err(error.into()),
        Err(error) => Ok(refused(
            site_page(&state, &caller, &site_id, Some(error.message().to_string())).await?,
        )),
    }
}

pub(super) async fn crawl_site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
) -> UiResult {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    let run = crate::api::sites::enqueue_crawl(&state, &site).await?;
    tracing::info!(site_id = %site_id, run_id = %run.id, by = %caller.key_id, "crawl enqueued from the console");
    Ok(Redirect::to(&format!("/ui/sites/{site_id}")).into_response())
}

#[derive(Debug, Deserialize)]
pub(super) struct EnabledForm {
    enabled: bool,
}

pub(super) async fn set_site_enabled(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
    Form(form): Form<EnabledForm>,
) -> UiResult {
    let raw = site_id.clone();
    let body: crate::api::sites::UpdateSite =
        serde_json::from_value(json!({ "enabled": form.enabled }))
            .map_err(|error| copyhound_core::Error::invalid(error.to_string()))?;
    let axum::Json(_) = crate::api::sites::update_site(
        State(state),
        caller,
        crate::error::ApiPath(raw),
        crate::error::ApiJson(body),
    )
    .await?;
    Ok(Redirect::to(&format!("/ui/sites/{site_id}")).into_response())
}

pub(super) async fn site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
) -> UiResult {
    site_page(&state, &caller, &site_id, None).await
}

/// A site's page: its settings (and the edit form), what it copied, its runs.
async fn site_page(
    state: &AppState,
    caller: &PublisherCaller,
    site_id: &str,
    error: Option<String>,
) -> UiResult {
    let site_id = parse_id::<SiteId>("site_id", site_id)?;
    let site = owned_site(state, &caller.publisher_id, &site_id).await?;
    let runs = state
        .ports
        .sites
        .list_crawl_runs(&site_id, &first_page(20))
        .await?;
    let copied = copied_by_site(state, &caller.publisher_id, &site_id).await?;
    Ok(render(
        "sites.html",
        json!({ "publisher": caller.publisher_id, "site": site, "runs": runs.items, "copied": copied,
                "error": error }),
    ))
}

pub(super) async fn matches(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    ApiQuery(query): ApiQuery<MatchQuery>,
) -> UiResult {
    render_matches(&state, &caller, query, None).await
}

/// The match list with its filters (empty form fields mean "any") and the
/// bulk review form.
async fn render_matches(
    state: &AppState,
    caller: &PublisherCaller,
    mut query: MatchQuery,
    error: Option<String>,
) -> UiResult {
    let blank = |value: &mut Option<String>| {
        if value.as_deref().is_some_and(|text| text.trim().is_empty()) {
            *value = None;
        }
    };
    for value in [
        &mut query.status,
        &mut query.work_id,
        &mut query.site_id,
        &mut query.chapter_id,
        &mut query.since,
        &mut query.before,
        &mut query.sort,
    ] {
        blank(value);
    }
    let filter = match_filter(&caller.publisher_id, &query)?;
    let page = crate::api::page_request(query.after.clone(), query.limit)?;
    let found = state.ports.matches.list_matches(&filter, &page).await?;
    let items = titled_rows(state, &caller.publisher_id, &found.items).await?;
    let (works, sites) = works_and_sites(state, &caller.publisher_id).await?;
    // The filters again, for the next-page link and the way back from a review.
    let filters: Vec<(&str, String)> = [
        ("status", query.status.clone()),
        ("work_id", query.work_id.clone()),
        ("chapter_id", query.chapter_id.clone()),
        ("site_id", query.site_id.clone()),
        ("min_score", query.min_score.map(|score| score.to_string())),
        ("since", query.since.clone()),
        ("before", query.before.clone()),
        ("sort", query.sort.clone()),
        ("limit", query.limit.map(|limit| limit.to_string())),
    ]
    .into_iter()
    .filter_map(|(name, value)| value.map(|value| (name, value)))
    .collect();
    let query_string = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&filters)
        .finish();
    let back = if query_string.is_empty() {
        "/ui/matches".to_string()
    } else {
        format!("/ui/matches?{query_string}")
    };
    let response = render(
        "dashboard.html",
        json!({ "publisher": caller.publisher_id, "listing": true, "newest": items, "next": found.next,
                "query": query_string, "back": back, "works": works.items, "sites": sites.items,
                "filters": filters.into_iter().collect::<BTreeMap<_, _>>(), "error": error }),
    );
    Ok(if error.is_some() {
        refused(response)
    } else {
        response
    })
}

/// Matches reviewed by one bulk action at most.
const MAX_BULK_REVIEW: usize = 200;

/// Reviews every picked match with one action; the picks are `pick:<id>` fields.
pub(super) async fn bulk_review(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<BTreeMap<String, String>>,
) -> UiResult {
    let back = form
        .get("back")
        .filter(|back| back.starts_with("/ui/matches") && !back.starts_with("//"))
        .cloned()
        .unwrap_or_else(|| "/ui/matches".to_string());
    let picked: Vec<&str> = form
        .keys()
        .filter_map(|key| key.strip_prefix("pick:"))
        .collect();
    let action = form.get("action").map(String::as_str).unwrap_or_default();
    let action: Option<ReviewAction> = serde_json::from_value(json!(action)).ok();
    let problem = match (&action, picked.len()) {
        (None, _) => Some("choose an action".to_string()),
        (_, 0) => Some("select at least one match".to_string()),
        (_, count) if count > MAX_BULK_REVIEW => Some(format!(
            "{count} matches selected; review at most {MAX_BULK_REVIEW} at a time"
        )),
        _ => None,
    };
    let note = form
        .get("note")
        .filter(|note| !note.trim().is_empty())
        .cloned();
    if problem.is_none()
        && let Some(action) = action
    {
        for id in &picked {
            let match_id = parse_id::<MatchId>("match_id", id)?;
            let body = ReviewBody {
                action,
                note: note.clone(),
            };
            crate::api::matches::review(&state, &caller, &match_id, body).await?;
        }
        tracing::info!(count = picked.len(), by = %caller.key_id, "bulk review");
        return Ok(Redirect::to(&back).into_response());
    }
    let query: MatchQuery = back
        .split_once('?')
        .and_then(|(_, query)| serde_urlencoded_query(query))
        .unwrap_or_default();
    render_matches(&state, &caller, query, problem).await
}

/// Parses the list's own query string back into its filters.
fn serde_urlencoded_query(query: &str) -> Option<MatchQuery> {
    let uri: axum::http::Uri = format!("/?{query}").parse().ok()?;
    axum::extract::Query::<MatchQuery>::try_from_uri(&uri)
        .ok()
        .map(|parsed| parsed.0)
}

pub(super) async fn match_page(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(match_id): axum::extract::Path<String>,
) -> UiResult {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    let detail = load_match_detail(&state, &caller.publisher_id, &match_id).await?;
    let site_name = match state.ports.sites.get_site(&detail.found.site_id).await {
        Ok(site) => Some(site.name),
        Err(error) if error.kind() == copyhound_core::ErrorKind::NotFound => None,
        Err(error) => return Err(error.into()),
    };
    Ok(render(
        "match.html",
        json!({ "publisher": caller.publisher_id, "m": detail, "site_name": site_name }),
    ))
}

#[derive(Debug, Deserialize)]
pub(super) struct EvidenceForm {
    part: Option<EvidencePart>,
}

/// The match's evidence package (WARC, or `?part=manifest`), as the API serves it.
pub(super) async fn evidence(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(match_id): axum::extract::Path<String>,
    axum::extract::Query(form): axum::extract::Query<EvidenceForm>,
) -> UiResult {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    Ok(crate::api::matches::evidence(
        &state,
        &caller.publisher_id,
        &match_id,
        form.part.unwrap_or_default(),
    )
    .await?)
}

#[derive(Debug, Deserialize)]
pub(super) struct ReviewForm {
    action: ReviewAction,
    note: Option<String>,
}

pub(super) async fn review(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(match_id): axum::extract::Path<String>,
    Form(form): Form<ReviewForm>,
) -> UiResult {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    let body = ReviewBody {
        action: form.action,
        note: form.note,
    };
    crate::api::matches::review(&state, &caller, &match_id, body).await?;
    Ok(Redirect::to(&format!("/ui/matches/{match_id}")).into_response())
}

pub(super) async fn policy(State(state): State<AppState>, UiCaller(caller): UiCaller) -> UiResult {
    let view = crate::api::policy::load_policy(&state, &caller.publisher_id).await?;
    Ok(render_policy(&caller, &view, None, false))
}

fn render_policy(
    caller: &PublisherCaller,
    view: &crate::api::policy::PolicyView,
    error: Option<String>,
    saved: bool,
) -> Response {
    render(
        "policy.html",
        json!({
            "publisher": caller.publisher_id,
            "view": view,
            "admin": caller.role == copyhound_core::model::Role::Admin,
            "error": error,
            "saved": saved,
        }),
    )
}

/// The policy form: empty fields keep the installation's values; shares in percent.
#[derive(Debug, Deserialize)]
pub(super) struct PolicyForm {
    #[serde(default)]
    novel_min_copied_chars: String,
    #[serde(default)]
    novel_min_chapter_coverage: String,
    #[serde(default)]
    news_min_copied_chars: String,
    #[serde(default)]
    news_min_chapter_coverage: String,
}

fn parse_thresholds(
    kind: &str,
    chars: &str,
    percent: &str,
) -> Result<copyhound_core::model::Thresholds, String> {
    let chars = chars.trim();
    let percent = percent.trim();
    let min_copied_chars = if chars.is_empty() {
        None
    } else {
        Some(chars.parse::<u32>().map_err(|_| {
            format!("{kind}: the minimum of copied characters must be a whole number")
        })?)
    };
    let min_chapter_coverage = if percent.is_empty() {
        None
    } else {
        let value = percent
            .parse::<f32>()
            .ok()
            .filter(|value| value.is_finite())
            .ok_or_else(|| format!("{kind}: the minimum share must be a number of percent"))?;
        Some(value / 100.0)
    };
    Ok(copyhound_core::model::Thresholds {
        min_copied_chars,
        min_chapter_coverage,
    })
}

pub(super) async fn save_policy(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<PolicyForm>,
) -> UiResult {
    let parsed = parse_thresholds(
        "novels",
        &form.novel_min_copied_chars,
        &form.novel_min_chapter_coverage,
    )
    .and_then(|novel| {
        parse_thresholds(
            "news",
            &form.news_min_copied_chars,
            &form.news_min_chapter_coverage,
        )
        .map(|news| copyhound_core::model::InfringementPolicy { novel, news })
    });
    let outcome = match parsed {
        Ok(policy) => crate::api::policy::save_policy(&state, &caller, policy)
            .await
            .map_err(|error| error.to_string()),
        Err(message) => Err(message),
    };
    match outcome {
        Ok(view) => Ok(render_policy(&caller, &view, None, true)),
        Err(message) => {
            // The form shows what is stored, and why the change was refused.
            let view = crate::api::policy::load_policy(&state, &caller.publisher_id).await?;
            Ok(refused(render_policy(&caller, &view, Some(message), false)))
        }
    }
}

/// The reports page: the form, and the publisher's reports with their downloads.
/// What a schedule form post leaves on the reports page.
#[derive(Default)]
struct ScheduleOutcome {
    error: Option<String>,
    /// The rows as typed (cron, format, e-mailed), shown again beside a refusal.
    typed: Option<Vec<(String, String, bool)>>,
    saved: bool,
}

async fn render_reports(
    state: &AppState,
    caller: &PublisherCaller,
    error: Option<String>,
    schedule: ScheduleOutcome,
) -> UiResult {
    let reports = state
        .ports
        .reports
        .list_reports(&caller.publisher_id, &first_page(100))
        .await?;
    let (works, sites) = works_and_sites(state, &caller.publisher_id).await?;
    let stored = crate::api::report_schedules::load_schedules(state, &caller.publisher_id).await?;
    let mut rows: Vec<serde_json::Value> = match &schedule.typed {
        Some(typed) => typed
            .iter()
            .map(|(cron, format, email)| json!({ "cron": cron, "format": format, "email": email }))
            .collect(),
        None => stored
            .schedules
            .iter()
            .map(|row| serde_json::to_value(row).unwrap_or_default())
            .collect(),
    };
    if rows.len() < copyhound_core::model::MAX_REPORT_SCHEDULES {
        rows.push(json!({ "cron": "", "format": "html" }));
    }
    let failed = error.is_some() || schedule.error.is_some();
    // A scope names its work and site by title, from the pickers' lists.
    let work_titles: BTreeMap<String, &str> = works
        .items
        .iter()
        .map(|work| (work.id.to_string(), work.title.as_str()))
        .collect();
    let site_names: BTreeMap<String, &str> = sites
        .items
        .iter()
        .map(|site| (site.id.to_string(), site.name.as_str()))
        .collect();
    let response = render(
        "reports.html",
        json!({ "publisher": caller.publisher_id, "reports": reports.items, "works": works.items,
                "sites": sites.items, "error": error, "schedule_rows": rows,
                "work_titles": work_titles, "site_names": site_names,
                "schedule_error": schedule.error, "schedules_saved": schedule.saved,
                "admin": caller.role == copyhound_core::model::Role::Admin }),
    );
    Ok(if failed { refused(response) } else { response })
}

pub(super) async fn reports(State(state): State<AppState>, UiCaller(caller): UiCaller) -> UiResult {
    render_reports(&state, &caller, None, ScheduleOutcome::default()).await
}

/// Saves the schedule rows (`cron_N`, `format_N`, `email_N` checked to mail
/// each report to the alert recipients); blank crons are dropped.
pub(super) async fn save_report_schedules(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<std::collections::HashMap<String, String>>,
) -> UiResult {
    let mut typed = Vec::new();
    for row in 0..=copyhound_core::model::MAX_REPORT_SCHEDULES {
        let cron = form.get(&format!("cron_{row}")).map(|cron| cron.trim());
        let format = form.get(&format!("format_{row}"));
        let email = form.contains_key(&format!("email_{row}"));
        if let (Some(cron), Some(format)) = (cron, format)
            && !cron.is_empty()
        {
            typed.push((cron.to_string(), format.clone(), email));
        }
    }
    let schedules: Result<Vec<copyhound_core::model::ReportScheduleSetting>, String> = typed
        .iter()
        .map(|(cron, format, email)| {
            serde_json::from_value(json!({ "cron": cron, "format": format, "email": email }))
                .map_err(|error| format!("format: {error}"))
        })
        .collect();
    let saved = match schedules {
        Ok(schedules) => crate::api::report_schedules::save_schedules(&state, &caller, schedules)
            .await
            .map(drop),
        Err(message) => Err(copyhound_core::Error::invalid(message)),
    };
    let outcome = match saved {
        Ok(()) => ScheduleOutcome {
            saved: true,
            ..ScheduleOutcome::default()
        },
        Err(error) if error.kind() == copyhound_core::ErrorKind::InvalidInput => ScheduleOutcome {
            error: Some(error.message().to_string()),
            typed: Some(typed),
            saved: false,
        },
        Err(error) => return Err(error.into()),
    };
    render_reports(&state, &caller, None, outcome).await
}

/// The report form; empty fields mean "everything".
#[derive(Debug, Deserialize)]
pub(super) struct ReportForm {
    format: String,
    #[serde(default)]
    work_id: String,
    #[serde(default)]
    site_id: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
    #[serde(default)]
    review: String,
}

/// Returns the start (UTC midnight) of the day typed in a date field.
fn form_day(raw: Option<String>) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
    match raw {
        None => Ok(None),
        Some(day) => chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d")
            .map(|day| Some(day.and_time(chrono::NaiveTime::MIN).and_utc()))
            .map_err(|_| format!("\"{day}\" is not a date like 2026-01-31")),
    }
}

pub(super) async fn create_report(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<ReportForm>,
) -> UiResult {
    let optional = |raw: &str| {
        let raw = raw.trim();
        (!raw.is_empty()).then(|| raw.to_string())
    };
    let period = form_day(optional(&form.since))
        .and_then(|since| Ok((since, form_day(optional(&form.until))?)));
    let body = period.and_then(|(since, until)| {
        serde_json::from_value::<crate::api::reports::CreateReport>(json!({
            "format": form.format,
            "work_id": optional(&form.work_id),
            "site_id": optional(&form.site_id),
            "since": since,
            "until": until,
            "review": optional(&form.review),
        }))
        .map_err(|error| format!("format: {error}"))
    });
    let queued = match body {
        Ok(body) => crate::api::reports::create_report(
            State(state.clone()),
            caller.clone(),
            crate::error::ApiJson(body),
        )
        .await
        .map(|_| ())
        .map_err(|error| error.0.message().to_string()),
        Err(message) => Err(message),
    };
    match queued {
        Ok(()) => Ok(Redirect::to("/ui/reports").into_response()),
        Err(message) => {
            render_reports(&state, &caller, Some(message), ScheduleOutcome::default()).await
        }
    }
}

/// A ready report's file, as an attachment named after the report.
pub(super) async fn report_artifact(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(report_id): axum::extract::Path<String>,
) -> UiResult {
    let id = parse_id::<copyhound_core::ids::ReportId>("report_id", &report_id)?;
    let report = state
        .ports
        .reports
        .get_report(&caller.publisher_id, &id)
        .await?;
    let extension = report.format.file_extension();
    let mut response =
        crate::api::reports::get_artifact(State(state), caller, crate::error::ApiPath(report_id))
            .await?;
    if let Ok(value) = axum::http::HeaderValue::from_str(&format!(
        "attachment; filename=\"copyhound-{id}.{extension}\""
    )) {
        response
            .headers_mut()
            .insert(axum::http::header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

pub(super) async fn delete_work(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
) -> UiResult {
    crate::api::works::delete_work(State(state), caller, crate::error::ApiPath(work_id)).await?;
    Ok(Redirect::to("/ui/works").into_response())
}

/// The caller as an admin of its own publisher, or `Forbidden`.
fn publisher_admin(caller: &PublisherCaller) -> Result<crate::auth::AdminCaller, UiError> {
    if caller.role != copyhound_core::model::Role::Admin {
        return Err(UiError::from(copyhound_core::Error::new(
            copyhound_core::ErrorKind::Forbidden,
            "only the publisher's admin keys manage people and keys",
        )));
    }
    Ok(crate::auth::AdminCaller(crate::auth::Caller {
        key_id: caller.key_id.clone(),
        role: caller.role,
        publisher_id: Some(caller.publisher_id.clone()),
        name: caller.name.clone(),
    }))
}

async fn render_keys(
    state: &AppState,
    caller: &PublisherCaller,
    created: Option<serde_json::Value>,
    error: Option<String>,
) -> UiResult {
    let admin = publisher_admin(caller)?;
    let axum::Json(keys) = crate::api::admin::list_keys(
        State(state.clone()),
        admin,
        crate::error::ApiPath(caller.publisher_id.to_string()),
    )
    .await?;
    let failed = error.is_some();
    let response = render(
        "keys.html",
        json!({ "publisher": caller.publisher_id, "keys": keys, "created": created,
                "error": error, "own_key": caller.key_id, "once": form_token() }),
    );
    Ok(if failed { refused(response) } else { response })
}

pub(super) async fn keys(
    State(state): State<AppState>,
    axum::Extension(console): axum::Extension<ConsoleState>,
    headers: HeaderMap,
    UiCaller(caller): UiCaller,
) -> UiResult {
    // A key created by the last post is shown here, once.
    let created = session_id(&headers).and_then(|session| console.sessions.take_flash(&session));
    render_keys(&state, &caller, created, None).await
}

#[derive(Debug, Deserialize)]
pub(super) struct KeyForm {
    #[serde(default)]
    name: String,
    role: String,
    /// The form's token: a form sent twice creates one key.
    #[serde(default)]
    once: String,
}

/// Creates a key, then sends the browser to the keys page, which shows its
/// secret once (so reloading it creates nothing and shows no secret).
pub(super) async fn create_key(
    State(state): State<AppState>,
    axum::Extension(console): axum::Extension<ConsoleState>,
    headers: HeaderMap,
    UiCaller(caller): UiCaller,
    Form(form): Form<KeyForm>,
) -> UiResult {
    let admin = publisher_admin(&caller)?;
    let Sent::First(session) = first_send(&console, &headers, &form.once)? else {
        return Ok(Redirect::to("/ui/keys").into_response());
    };
    let body: Result<crate::api::admin::CreateKey, String> =
        serde_json::from_value(json!({ "role": form.role, "name": form.name }))
            .map_err(|error| format!("role: {error}"));
    let created = match body {
        Ok(body) => crate::api::admin::create_key(
            State(state.clone()),
            admin,
            crate::error::ApiPath(caller.publisher_id.to_string()),
            crate::error::ApiJson(body),
        )
        .await
        .map(|(_, axum::Json(created))| created)
        .map_err(|error| error.0.message().to_string()),
        Err(message) => Err(message),
    };
    match created {
        Ok(created) => {
            let shown = serde_json::to_value(&created)
                .map_err(|error| copyhound_core::Error::internal(error.to_string()))?;
            console.sessions.set_flash(&session, shown);
            Ok(Redirect::to("/ui/keys").into_response())
        }
        Err(message) => render_keys(&state, &caller, None, Some(message)).await,
    }
}

pub(super) async fn revoke_key(
    State(state): State<AppState>,
    axum::Extension(console): axum::Extension<ConsoleState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(key_id): axum::extract::Path<String>,
) -> UiResult {
    let admin = publisher_admin(&caller)?;
    crate::api::admin::revoke_key(State(state), admin, crate::error::ApiPath(key_id.clone()))
        .await?;
    // Its sessions would fail their next request anyway; end them now.
    console.sessions.end_key(&key_id);
    Ok(Redirect::to("/ui/keys").into_response())
}

pub(super) fn render_alerts(
    caller: &PublisherCaller,
    view: &crate::api::alerts::AlertsView,
    profile: &copyhound_core::model::PublisherProfile,
    outcome: AlertsOutcome,
) -> Response {
    render(
        "alerts.html",
        json!({
            "publisher": caller.publisher_id,
            "view": view,
            "profile": profile,
            "admin": caller.role == copyhound_core::model::Role::Admin,
            "error": outcome.error,
            "saved": outcome.saved,
            "profile_error": outcome.profile_error,
            "profile_saved": outcome.profile_saved,
            "test": outcome.test,
        }),
    )
}

/// What a form post leaves on the alerts page.
#[derive(Default)]
pub(super) struct AlertsOutcome {
    pub(super) error: Option<String>,
    pub(super) saved: bool,
    pub(super) profile_error: Option<String>,
    pub(super) profile_saved: bool,
    /// How the test e-mail went.
    pub(super) test: Option<crate::api::alerts::TestDelivery>,
}

pub(super) async fn alerts(State(state): State<AppState>, UiCaller(caller): UiCaller) -> UiResult {
    let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
    let profile = crate::api::profile::load_profile(&state, &caller.publisher_id).await?;
    Ok(render_alerts(
        &caller,
        &view,
        &profile,
        AlertsOutcome::default(),
    ))
}

/// The profile form: the rights holder's details and the language.
#[derive(Debug, Deserialize)]
pub(super) struct ProfileForm {
    #[serde(default)]
    language: String,
    #[serde(default)]
    legal_name: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    contact_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    phone: String,
}

pub(super) async fn save_profile(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<ProfileForm>,
) -> UiResult {
    use copyhound_core::model::Language;
    let language = match form.language.trim() {
        "zh" => Some(Language::Zh),
        "en" => Some(Language::En),
        _ => None,
    };
    let profile = copyhound_core::model::PublisherProfile {
        language,
        legal_name: form.legal_name.trim().to_string(),
        address: form.address.trim().replace("\r\n", "\n"),
        contact_name: form.contact_name.trim().to_string(),
        email: form.email.trim().to_string(),
        phone: form.phone.trim().to_string(),
    };
    let saved = crate::api::profile::save_profile(&state, &caller, profile.clone()).await;
    let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
    match saved {
        Ok(stored) => Ok(render_alerts(
            &caller,
            &view,
            &stored,
            AlertsOutcome {
                profile_saved: true,
                ..AlertsOutcome::default()
            },
        )),
        Err(error)
            if matches!(
                error.kind(),
                copyhound_core::ErrorKind::InvalidInput | copyhound_core::ErrorKind::Forbidden
            ) =>
        {
            Ok(refused(render_alerts(
                &caller,
                &view,
                &profile,
                AlertsOutcome {
                    profile_error: Some(error.message().to_string()),
                    ..AlertsOutcome::default()
                },
            )))
        }
        Err(error) => Err(error.into()),
    }
}

/// The alerts form: one recipient per line.
#[derive(Debug, Deserialize)]
pub(super) struct AlertsForm {
    #[serde(default)]
    email_to: String,
    #[serde(default)]
    threshold_new_confirmed: String,
}

pub(super) async fn save_alerts(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<AlertsForm>,
) -> UiResult {
    let outcome = match form.threshold_new_confirmed.trim().parse::<u32>() {
        Ok(threshold) => {
            let settings = copyhound_core::model::AlertSettings {
                email_to: form
                    .email_to
                    .lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .map(str::to_string)
                    .collect(),
                threshold_new_confirmed: threshold,
            };
            crate::api::alerts::save_alerts(&state, &caller, settings)
                .await
                .map_err(|error| error.message().to_string())
        }
        Err(_) => Err("the threshold must be a whole number".to_string()),
    };
    let profile = crate::api::profile::load_profile(&state, &caller.publisher_id).await?;
    match outcome {
        Ok(view) => Ok(render_alerts(
            &caller,
            &view,
            &profile,
            AlertsOutcome {
                saved: true,
                ..AlertsOutcome::default()
            },
        )),
        Err(message) => {
            let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
            Ok(refused(render_alerts(
                &caller,
                &view,
                &profile,
                AlertsOutcome {
                    error: Some(message),
                    ..AlertsOutcome::default()
                },
            )))
        }
    }
}
