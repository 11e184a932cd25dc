//! The operator's console: the installation's own admin key (which acts for no
//! publisher) creates publishers and hands each its first admin key, so a new
//! publisher's staff start from the console, not from `curl`. Every form calls
//! the admin API's handler, so the console can do no more than the key.

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use copyhound_core::model::Role;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{UiError, render};
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
    UiOperator(admin): UiOperator,
    ApiQuery(query): ApiQuery<PublishersQuery>,
) -> UiResult {
    render_publishers(&state, admin, query.after, Outcome::default()).await
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
}

/// Creates a publisher and its first admin key, shown once.
pub(super) async fn create_publisher(
    State(state): State<AppState>,
    UiOperator(admin): UiOperator,
    Form(form): Form<PublisherForm>,
) -> UiResult {
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
                Ok(key) => Outcome {
                    created: Some(json!({ "publisher": publisher, "key": key })),
                    ..Outcome::default()
                },
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
}

/// Issues another admin key for a publisher (its admin lost theirs), shown once.
pub(super) async fn create_admin_key(
    State(state): State<AppState>,
    UiOperator(admin): UiOperator,
    axum::extract::Path(publisher_id): axum::extract::Path<String>,
    Form(form): Form<KeyForm>,
) -> UiResult {
    let outcome = match issue_admin_key(&state, &admin, &publisher_id, &form.holder).await {
        Ok(key) => {
            let publisher = state
                .publishers
                .get_publisher(&key.publisher_id)
                .await
                .map_err(UiError::from)?;
            Outcome {
                created: Some(json!({ "publisher": publisher, "key": key })),
                ..Outcome::default()
            }
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
