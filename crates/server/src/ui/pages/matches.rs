//! The match list and a match's page: where a reviewer decides, one by one or
//! in bulk, whether a found copy is an infringement, with its evidence at hand.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use copyhound_core::ids::MatchId;
use serde::Deserialize;
use serde_json::json;

use super::{UiResult, refused, titled_rows, works_and_sites};
use crate::AppState;
use crate::api::matches::{
    EvidencePart, MatchQuery, ReviewAction, ReviewBody, load_match_detail, match_filter,
};
use crate::auth::PublisherCaller;
use crate::error::{ApiQuery, parse_id};
use crate::ui::{UiCaller, render};

pub(in crate::ui) async fn matches(
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
pub(in crate::ui) async fn bulk_review(
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

pub(in crate::ui) async fn match_page(
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
        json!({ "publisher": caller.publisher_id, "m": detail, "site_name": site_name,
            "bundles": state.evidence.is_some() }),
    ))
}

#[derive(Debug, Deserialize)]
pub(in crate::ui) struct EvidenceForm {
    part: Option<EvidencePart>,
}

/// The match's evidence package (WARC, or `?part=manifest`), as the API serves it.
pub(in crate::ui) async fn evidence(
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

/// The match's evidence bundle (time-stamped, verifies offline), as the API serves it.
pub(in crate::ui) async fn evidence_bundle(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(match_id): axum::extract::Path<String>,
) -> UiResult {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    Ok(crate::api::matches::evidence_bundle(&state, &caller.publisher_id, &match_id).await?)
}

#[derive(Debug, Deserialize)]
pub(in crate::ui) struct ReviewForm {
    action: ReviewAction,
    note: Option<String>,
}

pub(in crate::ui) async fn review(
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
