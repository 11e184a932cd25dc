//! Suggested sites: what the publisher's watched sites link to and announce,
//! and what its book-source files list, with what the one-page check found.
//! Admins accept (a watched site, crawled now and daily) or dismiss.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use copyhound_core::model::{Role, SuggestionStatus};
use serde::Deserialize;
use serde_json::json;

use super::{UiResult, first_page, works_and_sites};
use crate::AppState;
use crate::ui::{UiCaller, render};

/// `?status=` of the page: the open ones by default.
#[derive(Debug, Default, Deserialize)]
pub(in crate::ui) struct SuggestionsQuery {
    #[serde(default)]
    status: Option<SuggestionStatus>,
}

const OPEN: [SuggestionStatus; 3] = [
    SuggestionStatus::Verified,
    SuggestionStatus::Pending,
    SuggestionStatus::Unreachable,
];

pub(in crate::ui) async fn suggestions(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Query(query): Query<SuggestionsQuery>,
) -> UiResult {
    let statuses: Vec<SuggestionStatus> = match query.status {
        Some(status) => vec![status],
        None => OPEN.to_vec(),
    };
    let mut found = Vec::new();
    for status in statuses {
        found.extend(
            state
                .ports
                .sites
                .list_suggestions(&caller.publisher_id, Some(status), &first_page(200))
                .await?
                .items,
        );
    }
    // Most telling first: it names the publisher's works, then the most sites point at it.
    found.sort_by_key(|suggestion| {
        let carries = suggestion
            .verification
            .as_ref()
            .map_or(0, |check| check.carries.len());
        (
            std::cmp::Reverse(carries),
            std::cmp::Reverse(suggestion.sites_pointing()),
            std::cmp::Reverse(suggestion.reason_count),
        )
    });
    let (works, sites) = works_and_sites(&state, &caller.publisher_id).await?;
    let work_title = |id: &copyhound_core::ids::WorkId| {
        works
            .items
            .iter()
            .find(|work| &work.id == id)
            .map_or_else(|| id.to_string(), |work| work.title.clone())
    };
    let site_name = |id: &copyhound_core::ids::SiteId| {
        sites
            .items
            .iter()
            .find(|site| &site.id == id)
            .map_or_else(|| id.to_string(), |site| site.name.clone())
    };
    let rows: Vec<serde_json::Value> = found
        .iter()
        .map(|suggestion| {
            let mut pointing: Vec<String> = suggestion
                .reasons
                .iter()
                .filter_map(|reason| reason.site_id.as_ref().map(&site_name))
                .collect();
            pointing.sort();
            pointing.dedup();
            let check = suggestion.verification.as_ref();
            json!({
                "id": suggestion.id,
                "origin": suggestion.origin,
                "status": suggestion.status.as_str(),
                "reason_count": suggestion.reason_count,
                "kinds": suggestion.reasons.iter().map(|reason| match reason.kind {
                    copyhound_core::model::ReasonKind::Link => "link",
                    copyhound_core::model::ReasonKind::Announced => "announced",
                    copyhound_core::model::ReasonKind::BookSource => "book source",
                }).collect::<std::collections::BTreeSet<_>>(),
                "details": suggestion.reasons.iter().take(3).map(|reason| reason.detail.clone()).collect::<Vec<_>>(),
                "pointing": pointing,
                "title": check.and_then(|check| check.title.clone()),
                "http_status": check.and_then(|check| check.status),
                "error": check.and_then(|check| check.error.clone()),
                "han_chars": check.map(|check| check.han_chars),
                "carries": check.map(|check| check.carries.iter().map(&work_title).collect::<Vec<_>>()).unwrap_or_default(),
                "site_id": suggestion.site_id,
            })
        })
        .collect();
    Ok(render(
        "suggestions.html",
        json!({
            "suggestions": rows,
            "status": query.status.map(SuggestionStatus::as_str),
            "admin": caller.role == Role::Admin,
        }),
    ))
}

pub(in crate::ui) async fn accept(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Path(id): Path<String>,
) -> UiResult {
    crate::api::suggestions::require_admin(&caller, "accept or dismiss suggested sites")?;
    let (_, site) = copyhound_intake::suggestions::accept(
        &state.ports,
        &caller.publisher_id,
        &id,
        &state.site_policy,
        &caller.reviewer(),
    )
    .await?;
    Ok(Redirect::to(&format!("/ui/sites/{}", site.id)).into_response())
}

pub(in crate::ui) async fn dismiss(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Path(id): Path<String>,
) -> UiResult {
    crate::api::suggestions::require_admin(&caller, "accept or dismiss suggested sites")?;
    copyhound_intake::suggestions::dismiss(
        state.ports.sites.as_ref(),
        &caller.publisher_id,
        &id,
        &caller.reviewer(),
    )
    .await?;
    Ok(Redirect::to("/ui/suggestions").into_response())
}
