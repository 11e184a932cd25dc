//! The team page: a publisher's admin gives people their own keys and takes
//! them back, without asking the operator.

use axum::Form;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect};
use serde::Deserialize;
use serde_json::json;

use super::{UiResult, refused};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::ui::operator::{Sent, first_send};
use crate::ui::session::{form_token, session_id};
use crate::ui::{ConsoleState, UiCaller, UiError, render};

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

pub(in crate::ui) async fn keys(
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
pub(in crate::ui) struct KeyForm {
    #[serde(default)]
    name: String,
    role: String,
    /// The form's token: a form sent twice creates one key.
    #[serde(default)]
    once: String,
}

/// Creates a key, then sends the browser to the keys page, which shows its
/// secret once (so reloading it creates nothing and shows no secret).
pub(in crate::ui) async fn create_key(
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

pub(in crate::ui) async fn revoke_key(
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
