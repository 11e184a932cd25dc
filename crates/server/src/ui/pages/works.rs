//! The works list and a work's page: where a publisher checks what is being
//! protected, which hosts may carry it lawfully, and what was found copying it.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use copyhound_core::ids::WorkId;
use serde::Deserialize;
use serde_json::json;

use super::{LISTED, UiResult, first_page, refused};
use crate::AppState;
use crate::api::matches::{MatchQuery, MatchSummary, match_filter};
use crate::api::works::load_work_detail;
use crate::auth::PublisherCaller;
use crate::error::parse_id;
use crate::ui::{UiCaller, render};

pub(in crate::ui) async fn works(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
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

pub(in crate::ui) async fn work(
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
    let watched = copyhound_intake::watch::watched_pages(&state.ports, &work_id).await?;
    let mut site_names = BTreeMap::new();
    for page in &watched {
        if !site_names.contains_key(page.site_id.as_str())
            && let Ok(site) = state.ports.sites.get_site(&page.site_id).await
        {
            site_names.insert(page.site_id.to_string(), site.name);
        }
    }
    let watched: Vec<serde_json::Value> = watched
        .iter()
        .map(|page| {
            json!({
                "site_id": page.site_id,
                "url": page.url,
                "chapters": page.chapters,
                "last_checked": page.last_checked.map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string()),
                "change": page.change_interval.map(human_interval),
            })
        })
        .collect();
    // The work's own chapters name its matches' chapters: no lookup more.
    let chapter_titles: BTreeMap<String, &str> = detail
        .chapters
        .iter()
        .map(|chapter| (chapter.id.to_string(), chapter.title.as_str()))
        .collect();
    Ok(render(
        "work.html",
        json!({ "publisher": caller.publisher_id, "detail": detail, "matches": matches,
                "chapter_titles": chapter_titles, "error": error, "watched": watched,
                "site_names": site_names,
                "released_at": detail.work.released_at.map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string()),
                "release_schedule": detail.work.release_schedule,
                "next_release": copyhound_intake::watch::next_scheduled_release(&detail.work, chrono::Utc::now())
                    .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string()) }),
    ))
}

/// `90 min` reads better than `5400 s` on a page.
fn human_interval(interval: chrono::Duration) -> String {
    let minutes = interval.num_minutes();
    if minutes < 1 {
        format!("{} s", interval.num_seconds().max(0))
    } else if minutes < 120 {
        format!("{minutes} min")
    } else if minutes < 48 * 60 {
        format!("{} h", minutes / 60)
    } else {
        format!("{} d", minutes / (24 * 60))
    }
}

#[derive(Debug, Deserialize)]
pub(in crate::ui) struct HostsForm {
    #[serde(default)]
    hosts: String,
}

/// Replaces a work's licensed hosts (one per line) as the API route does.
pub(in crate::ui) async fn set_licensed_hosts(
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

pub(in crate::ui) async fn delete_work(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
) -> UiResult {
    crate::api::works::delete_work(State(state), caller, crate::error::ApiPath(work_id)).await?;
    Ok(Redirect::to("/ui/works").into_response())
}

#[derive(Debug, Deserialize)]
pub(in crate::ui) struct ReleaseForm {
    #[serde(default)]
    cron: String,
}

/// Saves the work's release timetable; a refused cron shows on the page.
pub(in crate::ui) async fn set_release_schedule(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
    Form(form): Form<ReleaseForm>,
) -> UiResult {
    let id = parse_id::<WorkId>("work_id", &work_id)?;
    let saved = copyhound_intake::works::set_release_schedule(
        &state.ports,
        crate::api::works::registrant(&caller),
        &id,
        Some(form.cron.as_str()).filter(|cron| !cron.trim().is_empty()),
    )
    .await;
    match saved {
        Ok(_) => Ok(Redirect::to(&format!("/ui/works/{work_id}")).into_response()),
        Err(error) if error.kind() == copyhound_core::ErrorKind::InvalidInput => Ok(refused(
            work_page(&state, &caller, &work_id, Some(error.message().to_string())).await?,
        )),
        Err(error) => Err(error.into()),
    }
}
