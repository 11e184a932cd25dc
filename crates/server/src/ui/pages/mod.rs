//! The console's pages, one module each. They reuse the API's loaders and
//! validation so the UI can never see more than the API would show the same
//! key; what several pages share (the pickers' lists, titled match rows, the
//! answer to a refused form) lives here so every page answers alike.

pub(super) mod alerts;
pub(super) mod dashboard;
pub(super) mod keys;
pub(super) mod matches;
pub(super) mod policy;
pub(super) mod reports;
pub(super) mod sites;
pub(super) mod suggestions;
pub(super) mod works;

use axum::response::Response;
use copyhound_core::ports::PageRequest;
use serde_json::json;

use super::UiError;
use crate::AppState;
use crate::api::matches::MatchSummary;

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
