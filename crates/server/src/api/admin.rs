//! Admin routes: tenants and their keys. Only admin keys get here, and each
//! handler checks the caller's [`AdminScope`](crate::auth::AdminScope): the
//! operator administers every publisher, a publisher's admin key only its own.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use copyhound_core::ids::{ApiKeyId, PublisherId};
use copyhound_core::model::{Publisher, PublisherKind, Role};
use copyhound_core::ports::Paged;
use copyhound_core::{Error, ErrorKind};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::schema::Schema;

use super::{ListQuery, page_request, required_text};
use crate::AppState;
use crate::api::key_errors;
use crate::auth::{AdminCaller, AdminScope, issue_key};
use crate::error::{ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody, parse_id};
use crate::openapi::{id_string, non_blank, nullable};

/// Longest publisher name, characters.
pub const MAX_PUBLISHER_NAME_CHARS: usize = 200;

/// Longest key holder name, characters.
pub const MAX_KEY_NAME_CHARS: usize = 100;

fn key_name_schema() -> Schema {
    nullable(non_blank(MAX_KEY_NAME_CHARS))
}

fn nullable_id_schema() -> Schema {
    nullable(id_string())
}

fn publisher_name_schema() -> Schema {
    non_blank(MAX_PUBLISHER_NAME_CHARS).into()
}

/// Body of `POST /admin/publishers`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePublisher {
    /// Wanted id (`pub_...` or any valid id); generated when absent or `null`.
    #[schema(schema_with = nullable_id_schema)]
    pub id: Option<String>,
    /// Display name (trimmed; not blank).
    #[schema(schema_with = publisher_name_schema)]
    pub name: String,
    /// Books or news.
    pub kind: PublisherKind,
}

/// `POST /api/v1/admin/publishers`: creates a publisher (operator key only).
#[utoipa::path(
    post,
    path = "/api/v1/admin/publishers",
    tag = "admin",
    request_body = CreatePublisher,
    responses(
        (status = 201, description = "Created", body = Publisher),
        (status = 400, description = "Invalid body", body = ErrorBody),
        key_errors::OperatorKey,
        (status = 409, description = "The id is taken", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn create_publisher(
    State(state): State<AppState>,
    admin: AdminCaller,
    ApiJson(body): ApiJson<CreatePublisher>,
) -> ApiResult<(StatusCode, Json<Publisher>)> {
    admin.require_operator()?;
    let caller = admin.0;
    let id = match &body.id {
        Some(raw) => parse_id::<PublisherId>("id", raw)?,
        None => PublisherId::generate(),
    };
    match state.ports.publishers.get_publisher(&id).await {
        Ok(_) => {
            return Err(Error::new(ErrorKind::Conflict, format!("publisher {id} exists")).into());
        }
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(error) => return Err(error.into()),
    }
    let publisher = Publisher {
        id,
        name: required_text("name", &body.name, MAX_PUBLISHER_NAME_CHARS)?,
        kind: body.kind,
        created_at: Utc::now(),
        policy: Default::default(),
        alerts: Default::default(),
        report_schedules: Vec::new(),
        profile: Default::default(),
    };
    state.ports.publishers.put_publisher(&publisher).await?;
    tracing::info!(publisher_id = %publisher.id, by = %caller.key_id, "publisher created");
    Ok((StatusCode::CREATED, Json(publisher)))
}

/// `GET /api/v1/admin/publishers`: every publisher (the operator), or the caller's own.
#[utoipa::path(
    get,
    path = "/api/v1/admin/publishers",
    tag = "admin",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of publishers", body = Paged<Publisher>),
        (status = 400, description = "Invalid query", body = ErrorBody),
        key_errors::AdminKey,
    )
)]
pub async fn list_publishers(
    State(state): State<AppState>,
    admin: AdminCaller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Publisher>>> {
    let page = page_request(query.after, query.limit)?;
    if let AdminScope::Publisher(own) = admin.scope() {
        // A publisher's admin sees its own publisher only.
        let publisher = state.ports.publishers.get_publisher(&own).await?;
        let items = if page.after.is_none() {
            vec![publisher]
        } else {
            Vec::new()
        };
        return Ok(Json(Paged { items, next: None }));
    }
    Ok(Json(
        state
            .ports
            .publishers
            .list_publishers(&page)
            .await
            .map_err(super::cursor_error)?,
    ))
}

/// Body of `POST /admin/publishers/{publisher_id}/keys`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKey {
    /// `publisher` (default) or `admin`.
    #[serde(default = "default_role")]
    #[schema(default = "publisher")]
    pub role: Role,
    /// Who holds the key (`Li Wei`, `legal team`, `ingest job`); reviews record it.
    #[serde(default)]
    #[schema(schema_with = key_name_schema)]
    pub name: Option<String>,
}

fn default_role() -> Role {
    Role::Publisher
}

/// A key as shown once, at creation.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedKey {
    /// Key id (public).
    pub id: ApiKeyId,
    /// The full key; it cannot be shown again.
    pub key: String,
    /// Tenant.
    pub publisher_id: PublisherId,
    /// Role.
    pub role: Role,
    /// Who holds it.
    pub name: Option<String>,
}

/// A key as listed: never its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeySummary {
    /// Key id (public).
    pub id: ApiKeyId,
    /// Who holds it.
    pub name: Option<String>,
    /// Role.
    pub role: Role,
    /// When it was created.
    #[schema(value_type = String, format = DateTime)]
    pub created_at: chrono::DateTime<Utc>,
    /// Revoked keys authenticate nobody.
    pub revoked: bool,
}

/// `GET /api/v1/admin/publishers/{publisher_id}/keys`: the publisher's keys, oldest first.
#[utoipa::path(
    get,
    path = "/api/v1/admin/publishers/{publisher_id}/keys",
    tag = "admin",
    params(("publisher_id" = PublisherId, Path, description = "The publisher")),
    responses(
        (status = 200, description = "The keys (at most 1,000), without secrets", body = Vec<KeySummary>),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::AdminKey,
        (status = 404, description = "No such publisher (or another publisher's, for a publisher's admin key)", body = ErrorBody),
    )
)]
pub async fn list_keys(
    State(state): State<AppState>,
    admin: AdminCaller,
    ApiPath(publisher_id): ApiPath<String>,
) -> ApiResult<Json<Vec<KeySummary>>> {
    let publisher_id = parse_id::<PublisherId>("publisher_id", &publisher_id)?;
    admin.check_covers(&publisher_id)?;
    state.ports.publishers.get_publisher(&publisher_id).await?;
    let keys = state.ports.publishers.list_api_keys(&publisher_id).await?;
    Ok(Json(
        keys.into_iter()
            .map(|key| KeySummary {
                id: key.id,
                name: key.name,
                role: key.role,
                created_at: key.created_at,
                revoked: key.revoked,
            })
            .collect(),
    ))
}

/// `POST /api/v1/admin/publishers/{publisher_id}/keys`: mints a key (shown once).
#[utoipa::path(
    post,
    path = "/api/v1/admin/publishers/{publisher_id}/keys",
    tag = "admin",
    params(("publisher_id" = PublisherId, Path, description = "The publisher")),
    request_body = CreateKey,
    responses(
        (status = 201, description = "Created; `key` is shown only now", body = CreatedKey),
        (status = 400, description = "Invalid id or body", body = ErrorBody),
        key_errors::AdminKey,
        (status = 404, description = "No such publisher (or another publisher's, for a publisher's admin key)", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn create_key(
    State(state): State<AppState>,
    admin: AdminCaller,
    ApiPath(publisher_id): ApiPath<String>,
    ApiJson(body): ApiJson<CreateKey>,
) -> ApiResult<(StatusCode, Json<CreatedKey>)> {
    let publisher_id = parse_id::<PublisherId>("publisher_id", &publisher_id)?;
    admin.check_covers(&publisher_id)?;
    let caller = admin.0;
    state.ports.publishers.get_publisher(&publisher_id).await?;
    let name = body
        .name
        .as_deref()
        .map(|name| required_text("name", name, MAX_KEY_NAME_CHARS))
        .transpose()?;
    let mut issued = issue_key(publisher_id, body.role);
    issued.record.name = name;
    state.ports.publishers.put_api_key(&issued.record).await?;
    tracing::info!(key_id = %issued.record.id, publisher_id = %issued.record.publisher_id, by = %caller.key_id, "api key created");
    let record = issued.record;
    Ok((
        StatusCode::CREATED,
        Json(CreatedKey {
            id: record.id,
            key: issued.key,
            publisher_id: record.publisher_id,
            role: record.role,
            name: record.name,
        }),
    ))
}

/// `DELETE /api/v1/admin/keys/{key_id}`: revokes a key (idempotent).
#[utoipa::path(
    delete,
    path = "/api/v1/admin/keys/{key_id}",
    tag = "admin",
    params(("key_id" = ApiKeyId, Path, description = "The key id (`key_...`)")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::AdminKey,
        (status = 404, description = "No such key (or another publisher's)", body = ErrorBody),
    )
)]
pub async fn revoke_key(
    State(state): State<AppState>,
    admin: AdminCaller,
    ApiPath(key_id): ApiPath<String>,
) -> ApiResult<StatusCode> {
    let key_id = parse_id::<ApiKeyId>("key_id", &key_id)?;
    let mut record = state.ports.publishers.get_api_key(&key_id).await?;
    // Another publisher's key answers exactly as a missing one.
    if !admin.scope().covers(&record.publisher_id) {
        return Err(Error::not_found(format!("api key {key_id}")).into());
    }
    let caller = admin.0;
    record.revoked = true;
    state.ports.publishers.put_api_key(&record).await?;
    tracing::info!(key_id = %key_id, by = %caller.key_id, "api key revoked");
    Ok(StatusCode::NO_CONTENT)
}
