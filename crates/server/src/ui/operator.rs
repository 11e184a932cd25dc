//! The operator's console: the installation's own admin key (which acts for no
//! publisher) creates publishers and hands each its first admin key, so a new
//! publisher's staff start from the console, not from `curl`. Every form calls
//! the admin API's handler, so the console can do no more than the key.

use axum::Extension;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use copyhound_core::model::Role;
use serde::Deserialize;
use serde_json::{Value, json};

use super::session::{form_token, session_id};
use super::{ConsoleState, UiError, render};
use crate::AppState;
use crate::api::admin::{CreateKey, CreatePublisher, CreatedKey};
use crate::auth::AdminCaller;
use crate::error::{ApiJson, ApiPath, ApiQuery};

type UiResult = Result<Response, UiError>;

/// Publishers per console page.
const PUBLISHERS_PER_PAGE: u64 = 100;

/// A logged-in operator; a publisher's session goes to its own console.
pub struct UiOperator(AdminCaller);

impl FromRequestParts<AppState> for UiOperator {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let caller = super::session_caller(parts, state).await?;
        if caller.publisher_id.is_some() || caller.role != Role::Admin {
            return Err(Redirect::to("/").into_response());
        }
        Ok(Self(AdminCaller(caller)))
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct PublishersQuery {
    after: Option<String>,
}

pub(super) async fn publishers(
    State(state): State<AppState>,
    Extension(console): Extension<ConsoleState>,
    headers: HeaderMap,
    UiOperator(admin): UiOperator,
    ApiQuery(query): ApiQuery<PublishersQuery>,
) -> UiResult {
    // A key created by the last post is shown here, once.
    let created = session_id(&headers).and_then(|session| console.sessions.take_flash(&session));
    let outcome = Outcome {
        created,
        ..Outcome::default()
    };
    render_publishers(&state, admin, query.after, outcome).await
}

/// What a form that must take effect once may do.
pub(super) enum Sent {
    /// First sent: go ahead, within this session.
    First(String),
    /// Sent before (a double click, a reloaded result): show the page again.
    Again,
}

/// Checks the form's `once` token against the session; a form without one
/// comes from a page older than this server and is refused.
pub(super) fn first_send(
    console: &ConsoleState,
    headers: &HeaderMap,
    token: &str,
) -> Result<Sent, UiError> {
    if token.is_empty() {
        return Err(UiError::from(copyhound_core::Error::invalid(
            "this form is out of date; open the page again and resubmit",
        )));
    }
    let session = session_id(headers).unwrap_or_default();
    if console.sessions.first_send(&session, token) {
        Ok(Sent::First(session))
    } else {
        Ok(Sent::Again)
    }
}

/// What a form post leaves on the page.
#[derive(Default)]
struct Outcome {
    created: Option<Value>,
    error: Option<String>,
    form: Option<Value>,
}

async fn render_publishers(
    state: &AppState,
    admin: AdminCaller,
    after: Option<String>,
    outcome: Outcome,
) -> UiResult {
    let Json(page) = crate::api::admin::list_publishers(
        State(state.clone()),
        admin,
        ApiQuery(crate::api::ListQuery {
            after,
            limit: Some(PUBLISHERS_PER_PAGE),
        }),
    )
    .await?;
    let shown_secret = outcome.created.is_some();
    let mut response = render(
        "operator.html",
        json!({
            "publishers": page.items,
            "next": page.next,
            "created": outcome.created,
            "error": outcome.error,
            "form": outcome.form,
            "operator": true,
            "once": form_token(),
        }),
    );
    if shown_secret {
        // A new key's secret is on this response only: never cached.
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    Ok(response)
}

#[derive(Debug, Deserialize)]
pub(super) struct PublisherForm {
    name: String,
    kind: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    holder: String,
    /// The form's token: a form sent twice creates one publisher.
    #[serde(default)]
    once: String,
}

/// Creates a publisher and its first admin key, then sends the browser to
/// the publishers page, which shows the key once (so reloading it creates
/// nothing and shows no secret).
pub(super) async fn create_publisher(
    State(state): State<AppState>,
    Extension(console): Extension<ConsoleState>,
    headers: HeaderMap,
    UiOperator(admin): UiOperator,
    Form(form): Form<PublisherForm>,
) -> UiResult {
    let Sent::First(session) = first_send(&console, &headers, &form.once)? else {
        return Ok(Redirect::to("/ui/operator").into_response());
    };
    let id = Some(form.id.trim()).filter(|id| !id.is_empty());
    let body = serde_json::from_value::<CreatePublisher>(
        json!({ "id": id, "name": form.name, "kind": form.kind }),
    )
    .map_err(|error| format!("kind: {error}"));
    let created = match body {
        Ok(body) => {
            crate::api::admin::create_publisher(State(state.clone()), admin.clone(), ApiJson(body))
                .await
                .map(|(_, Json(publisher))| publisher)
                .map_err(|error| error.0.message().to_string())
        }
        Err(message) => Err(message),
    };
    let outcome = match created {
        Ok(publisher) => {
            match issue_admin_key(&state, &admin, publisher.id.as_str(), &form.holder).await {
                Ok(key) => {
                    let shown = json!({ "publisher": publisher, "key": key });
                    console.sessions.set_flash(&session, shown);
                    return Ok(Redirect::to("/ui/operator").into_response());
                }
                Err(error) => Outcome {
                    error: Some(error),
                    ..Outcome::default()
                },
            }
        }
        Err(error) => Outcome {
            error: Some(error),
            form: Some(json!({
                "name": form.name, "kind": form.kind, "id": form.id, "holder": form.holder,
            })),
            ..Outcome::default()
        },
    };
    render_publishers(&state, admin, None, outcome).await
}

#[derive(Debug, Deserialize)]
pub(super) struct KeyForm {
    #[serde(default)]
    holder: String,
    /// The form's token: a form sent twice issues one key.
    #[serde(default)]
    once: String,
}

/// Issues another admin key for a publisher (its admin lost theirs), shown once.
pub(super) async fn create_admin_key(
    State(state): State<AppState>,
    Extension(console): Extension<ConsoleState>,
    headers: HeaderMap,
    UiOperator(admin): UiOperator,
    axum::extract::Path(publisher_id): axum::extract::Path<String>,
    Form(form): Form<KeyForm>,
) -> UiResult {
    // Every row's form carries the page's token: each publisher's counts apart.
    let token = match form.once.as_str() {
        "" => String::new(),
        once => format!("{once}:{publisher_id}"),
    };
    let Sent::First(session) = first_send(&console, &headers, &token)? else {
        return Ok(Redirect::to("/ui/operator").into_response());
    };
    let outcome = match issue_admin_key(&state, &admin, &publisher_id, &form.holder).await {
        Ok(key) => {
            let publisher = state
                .ports
                .publishers
                .get_publisher(&key.publisher_id)
                .await
                .map_err(UiError::from)?;
            let shown = json!({ "publisher": publisher, "key": key });
            console.sessions.set_flash(&session, shown);
            return Ok(Redirect::to("/ui/operator").into_response());
        }
        Err(error) => Outcome {
            error: Some(error),
            ..Outcome::default()
        },
    };
    render_publishers(&state, admin, None, outcome).await
}

async fn issue_admin_key(
    state: &AppState,
    admin: &AdminCaller,
    publisher_id: &str,
    holder: &str,
) -> Result<CreatedKey, String> {
    let name = Some(holder.trim()).filter(|name| !name.is_empty());
    let body = CreateKey {
        role: Role::Admin,
        name: name.map(str::to_string),
    };
    crate::api::admin::create_key(
        State(state.clone()),
        admin.clone(),
        ApiPath(publisher_id.to_string()),
        ApiJson(body),
    )
    .await
    .map(|(_, Json(created))| created)
    .map_err(|error| error.0.message().to_string())
}
