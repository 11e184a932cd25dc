//! Logging in and out of the console. The login page takes a publisher's key
//! or the operator key. A key that does not authenticate is "unknown", with
//! the same words for every well-formed wrong key (no such key id, a wrong
//! secret, a revoked key), so the page tells a guesser nothing the shape of
//! what they typed did not; attempts are throttled per client and in all.

use axum::Form;
use axum::extract::State;
use axum::http::header::{RETRY_AFTER, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::json;

use super::session::{login_cookies, logout_cookies, over_https, session_id};
use super::throttle::ClientAddress;
use super::{ConsoleState, render};
use crate::AppState;
use crate::auth::{KEY_PREFIX, authenticate, parse_key};
use crate::error::ApiQuery;

/// The answer to a key that looks like a whole key and does not authenticate
/// (and to anything that is not a publisher key: a mistyped operator key).
pub(super) const UNKNOWN_KEY: &str = "unknown key: check that it was pasted whole, or ask your publisher's admin (or the operator) for a new one";
/// The answer to a publisher key cut short or otherwise not of a key's form.
pub(super) const UNKNOWN_PARTIAL_KEY: &str = "unknown key: a publisher key reads chk_<key id>_<64 hex digits>; check that it was pasted whole";
/// The answer to a login while the client is throttled; `{n}` is the wait, seconds.
pub(super) const THROTTLED: &str = "too many login attempts; try again in {n} s";
/// The login page's note when a session ended.
pub(super) const EXPIRED: &str = "your session is no longer valid; log in again";

#[derive(Debug, Deserialize)]
pub(super) struct LoginQuery {
    expired: Option<String>,
}

pub(super) async fn login_form(ApiQuery(query): ApiQuery<LoginQuery>) -> Response {
    let error = query.expired.map(|_| EXPIRED);
    render("login.html", json!({ "error": error }))
}

#[derive(Debug, Deserialize)]
pub(super) struct LoginForm {
    key: String,
}

/// Returns what the login page answers a key that does not authenticate:
/// a function of its shape alone, never of what the store holds.
pub(super) fn refusal(presented: &str) -> &'static str {
    if presented.starts_with(KEY_PREFIX) && parse_key(presented).is_err() {
        UNKNOWN_PARTIAL_KEY
    } else {
        UNKNOWN_KEY
    }
}

/// Checks a key and starts a session; attempts are throttled per client and in all.
pub(super) async fn login(
    State(state): State<AppState>,
    axum::Extension(console): axum::Extension<ConsoleState>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    if let Err(wait) = console.throttle.begin(client) {
        let seconds = wait.as_secs() + 1;
        tracing::warn!(%client, "ui login throttled");
        let mut response = render("login.html", json!({ "error": THROTTLED, "n": seconds }));
        *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
        return response;
    }
    let presented = form.key.trim();
    match authenticate(&state, presented).await {
        Ok(caller) => {
            console.throttle.succeeded(client);
            tracing::info!(key_id = %caller.key_id, "ui login");
            let session_id = console.sessions.create(&caller.key_id);
            let cookies = login_cookies(&session_id, over_https(&headers));
            // The operator key acts for no publisher: its console is the publishers page.
            let home = if caller.publisher_id.is_some() {
                "/"
            } else {
                "/ui/operator"
            };
            (
                AppendHeaders(cookies.map(|cookie| (SET_COOKIE, cookie))),
                Redirect::to(home),
            )
                .into_response()
        }
        Err(error) => {
            let message = if error.kind() == copyhound_core::ErrorKind::Unauthorized {
                refusal(presented).to_string()
            } else {
                // Not a guess (the store failed): it costs the client nothing.
                console.throttle.succeeded(client);
                error.message().to_string()
            };
            tracing::info!(%client, "ui login refused");
            let mut response = render("login.html", json!({ "error": message }));
            *response.status_mut() = crate::error::status_of(error.kind());
            response
        }
    }
}

/// Ends the session on the server, then in the browser.
pub(super) async fn logout(
    axum::Extension(console): axum::Extension<ConsoleState>,
    headers: HeaderMap,
) -> Response {
    if let Some(session_id) = session_id(&headers) {
        console.sessions.end(&session_id);
    }
    let cookies = logout_cookies(over_https(&headers));
    (
        AppendHeaders(cookies.map(|cookie| (SET_COOKIE, cookie))),
        Redirect::to("/login"),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_depends_on_the_shape_of_the_key_only() {
        let whole = format!("chk_key_0000000000000000_{}", "a".repeat(64));
        assert_eq!(refusal(&whole), UNKNOWN_KEY);
        assert_eq!(refusal("an operator key, mistyped"), UNKNOWN_KEY);
        assert_eq!(refusal(&whole[..whole.len() - 1]), UNKNOWN_PARTIAL_KEY);
        assert_eq!(refusal("chk_"), UNKNOWN_PARTIAL_KEY);
    }
}
