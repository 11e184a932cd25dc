//! The console's answer to a `/ui/...` address it has no page for: a page in
//! its layout and language (with the menu when a session is open) that links
//! back to the dashboard, not the API's JSON error.

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde_json::json;

use super::{UiCaller, render, session_caller};
use crate::AppState;

/// Answers 404 with the console's "page not found" page.
pub(super) async fn page(State(state): State<AppState>, mut parts: Parts) -> Response {
    let publisher = UiCaller::from_request_parts(&mut parts, &state)
        .await
        .ok()
        .map(|UiCaller(caller)| caller.publisher_id);
    let operator = publisher.is_none()
        && session_caller(&parts, &state)
            .await
            .is_ok_and(|caller| caller.publisher_id.is_none());
    tracing::debug!(path = parts.uri.path(), "no console page");
    let mut response = render(
        "not_found.html",
        json!({ "publisher": publisher, "operator": operator, "path": parts.uri.path() }),
    );
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
