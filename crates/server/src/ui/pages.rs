//! UI page handlers. They reuse the API's loaders and validation so the UI can
//! never see more than the API would show the same key.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::response::{AppendHeaders, IntoResponse, Redirect, Response};
use chrono::{Duration, Utc};
use copyhound_core::ids::{MatchId, SiteId, WorkId};
use copyhound_core::model::MatchStatus;
use copyhound_core::ports::{MatchFilter, PageRequest};
use serde::Deserialize;
use serde_json::json;

use super::{DayCount, UiCaller, UiError, bar_chart_svg, render};
use crate::AppState;
use crate::api::matches::{
    EvidencePart, MatchQuery, MatchSummary, ReviewAction, ReviewBody, load_match_detail,
    match_filter,
};
use crate::api::owned_site;
use crate::api::works::load_work_detail;
use crate::auth::{PublisherCaller, SESSION_COOKIE, authenticate};
use crate::error::{ApiQuery, parse_id};

type UiResult = Result<Response, UiError>;

/// Days shown in the dashboard chart.
const CHART_DAYS: i64 = 30;
/// Most matches the dashboard reads to draw its chart.
const CHART_SAMPLE: usize = 2000;

#[derive(Debug, Deserialize)]
pub(super) struct LoginQuery {
    expired: Option<String>,
}

pub(super) async fn login_form(ApiQuery(query): ApiQuery<LoginQuery>) -> Response {
    let error = query
        .expired
        .map(|_| "your session is no longer valid; log in again");
    render("login.html", json!({ "error": error }))
}

#[derive(Debug, Deserialize)]
pub(super) struct LoginForm {
    key: String,
}

pub(super) async fn login(State(state): State<AppState>, Form(form): Form<LoginForm>) -> Response {
    let key = form.key.trim().to_string();
    let outcome = match authenticate(&state, &key).await {
        Ok(caller) => PublisherCaller::from_caller(caller),
        Err(error) => Err(error),
    };
    match outcome {
        Ok(caller) => {
            tracing::info!(key_id = %caller.key_id, "ui login");
            let cookie =
                format!("{SESSION_COOKIE}={key}; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200");
            (AppendHeaders([(SET_COOKIE, cookie)]), Redirect::to("/")).into_response()
        }
        Err(error) => {
            let mut response = render("login.html", json!({ "error": error.message() }));
            *response.status_mut() = crate::error::status_of(error.kind());
            response
        }
    }
}

pub(super) async fn logout() -> Response {
    let cookie = format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    (
        AppendHeaders([(SET_COOKIE, cookie)]),
        Redirect::to("/login"),
    )
        .into_response()
}

fn first_page(limit: u32) -> PageRequest {
    PageRequest { after: None, limit }
}

pub(super) async fn dashboard(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    let works = state
        .works
        .list_works(&caller.publisher_id, &first_page(200))
        .await?;
    let sites = state
        .sites
        .list_sites(Some(&caller.publisher_id), &first_page(200))
        .await?;
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
        let batch = state.matches.list_matches(&filter, &page).await?;
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
        .matches
        .list_matches(&newest_filter, &first_page(10))
        .await?;
    let newest: Vec<MatchSummary> = newest.items.iter().map(MatchSummary::from).collect();
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
        .works
        .list_works(&caller.publisher_id, &first_page(200))
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
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let detail = load_work_detail(&state, &caller.publisher_id, &work_id).await?;
    let query = MatchQuery {
        work_id: Some(work_id.to_string()),
        ..MatchQuery::default()
    };
    let matches = state
        .matches
        .list_matches(
            &match_filter(&caller.publisher_id, &query)?,
            &first_page(50),
        )
        .await?;
    let matches: Vec<MatchSummary> = matches.items.iter().map(MatchSummary::from).collect();
    Ok(render(
        "work.html",
        json!({ "publisher": caller.publisher_id, "detail": detail, "matches": matches }),
    ))
}

pub(super) async fn sites(State(state): State<AppState>, UiCaller(caller): UiCaller) -> UiResult {
    let sites = state
        .sites
        .list_sites(Some(&caller.publisher_id), &first_page(200))
        .await?;
    Ok(render(
        "sites.html",
        json!({ "publisher": caller.publisher_id, "sites": sites.items, "site": null }),
    ))
}

pub(super) async fn site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
) -> UiResult {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    let runs = state
        .sites
        .list_crawl_runs(&site_id, &first_page(20))
        .await?;
    Ok(render(
        "sites.html",
        json!({ "publisher": caller.publisher_id, "site": site, "runs": runs.items }),
    ))
}

pub(super) async fn matches(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    ApiQuery(query): ApiQuery<MatchQuery>,
) -> UiResult {
    let filter = match_filter(&caller.publisher_id, &query)?;
    let page = crate::api::page_request(query.after.clone(), query.limit)?;
    let found = state.matches.list_matches(&filter, &page).await?;
    let items: Vec<MatchSummary> = found.items.iter().map(MatchSummary::from).collect();
    Ok(render(
        "dashboard.html",
        json!({ "publisher": caller.publisher_id, "listing": true, "newest": items, "next": found.next, "status": query.status }),
    ))
}

pub(super) async fn match_page(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(match_id): axum::extract::Path<String>,
) -> UiResult {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    let detail = load_match_detail(&state, &caller.publisher_id, &match_id).await?;
    Ok(render(
        "match.html",
        json!({ "publisher": caller.publisher_id, "m": detail }),
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
            let mut response = render_policy(&caller, &view, Some(message), false);
            *response.status_mut() = axum::http::StatusCode::BAD_REQUEST;
            Ok(response)
        }
    }
}
