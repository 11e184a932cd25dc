//! Suggested sites (discovery): what the publisher's crawls and imported
//! book-source files point at, for its admin to accept or dismiss. The
//! decisions are `copyhound_intake::suggestions`, shared with the console
//! and the CLI.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use copyhound_core::model::{Role, Site, SiteSuggestion, SuggestionStatus};
use copyhound_core::ports::Paged;
use copyhound_core::{Error, ErrorKind};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::AppState;
use crate::api::{cursor_schema, key_errors, limit_schema, page_request};
use crate::auth::PublisherCaller;
use crate::error::{ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody};

/// `?status=&after=&limit=` of the suggestion listing.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SuggestionQuery {
    /// Only suggestions in this state.
    pub status: Option<SuggestionStatus>,
    /// Cursor from the previous page (its `next`).
    #[param(schema_with = cursor_schema)]
    pub after: Option<String>,
    /// Page size: default 50, at least 1; values over 200 are capped at 200.
    #[param(schema_with = limit_schema)]
    pub limit: Option<u64>,
}

/// What accepting a suggestion made.
#[derive(Debug, Serialize, ToSchema)]
pub struct Accepted {
    /// The suggestion, now `accepted`.
    pub suggestion: SiteSuggestion,
    /// The watched site it became (its first crawl is queued).
    pub site: Site,
}

/// What a book-source import recorded.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportedSources {
    /// Suggestions created (each queued for its check).
    pub new: usize,
    /// Suggestions that gained this file as a reason.
    pub updated: usize,
    /// Entries left out: not an http(s) site, watched already, or over the cap.
    pub skipped: usize,
}

fn suggestion_id(raw: &str) -> Result<&str, ApiError> {
    let valid = raw.len() == 27
        && raw.starts_with("sg_")
        && raw[3..]
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
    if valid {
        Ok(raw)
    } else {
        Err(ApiError::invalid(
            "`suggestion_id` must be `sg_` and 24 lower-case hex digits",
        ))
    }
}

/// `Forbidden` unless `caller` holds an admin key (`what` it may not do).
pub(crate) fn require_admin(caller: &PublisherCaller, what: &str) -> Result<(), Error> {
    if caller.role == Role::Admin {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Forbidden,
            format!("only the publisher's admin keys {what}"),
        ))
    }
}

/// `GET /api/v1/suggestions`: sites the publisher's crawls and book-source
/// files point at, by id.
#[utoipa::path(
    get,
    path = "/api/v1/suggestions",
    tag = "suggestions",
    params(SuggestionQuery),
    responses(
        (status = 200, description = "One page of suggestions", body = Paged<SiteSuggestion>),
        (status = 400, description = "Invalid query", body = ErrorBody),
        key_errors::PublisherKey,
    )
)]
pub async fn list_suggestions(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<SuggestionQuery>,
) -> ApiResult<Json<Paged<SiteSuggestion>>> {
    let page = page_request(query.after, query.limit)?;
    let listed = state
        .ports
        .sites
        .list_suggestions(&caller.publisher_id, query.status, &page)
        .await
        .map_err(super::cursor_error)?;
    Ok(Json(listed))
}

/// `GET /api/v1/suggestions/{suggestion_id}`.
#[utoipa::path(
    get,
    path = "/api/v1/suggestions/{suggestion_id}",
    tag = "suggestions",
    params(("suggestion_id" = String, Path, description = "The suggestion", pattern = "^sg_[0-9a-f]{24}$")),
    responses(
        (status = 200, description = "The suggestion, its reasons and its check", body = SiteSuggestion),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such suggestion", body = ErrorBody),
    )
)]
pub async fn get_suggestion(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SiteSuggestion>> {
    let id = suggestion_id(&id)?;
    Ok(Json(
        state
            .ports
            .sites
            .get_suggestion(&caller.publisher_id, id)
            .await?,
    ))
}

/// `POST /api/v1/suggestions/{suggestion_id}/accept`: the site becomes a
/// watched site (defaults, a daily schedule) and its first crawl is queued.
#[utoipa::path(
    post,
    path = "/api/v1/suggestions/{suggestion_id}/accept",
    tag = "suggestions",
    params(("suggestion_id" = String, Path, description = "The suggestion", pattern = "^sg_[0-9a-f]{24}$")),
    responses(
        (status = 200, description = "Accepted (again: the same site)", body = Accepted),
        (status = 400, description = "Invalid id, or a site the crawler may not fetch", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 403, description = "Not an admin key", body = ErrorBody),
        (status = 404, description = "No such suggestion", body = ErrorBody),
    )
)]
pub async fn accept_suggestion(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Accepted>> {
    let id = suggestion_id(&id)?;
    require_admin(&caller, "accept suggested sites")?;
    let (suggestion, site) = copyhound_intake::suggestions::accept(
        &state.ports,
        &caller.publisher_id,
        id,
        &state.site_policy,
        &caller.reviewer(),
    )
    .await?;
    Ok(Json(Accepted { suggestion, site }))
}

/// `POST /api/v1/suggestions/{suggestion_id}/dismiss`: not raised again.
#[utoipa::path(
    post,
    path = "/api/v1/suggestions/{suggestion_id}/dismiss",
    tag = "suggestions",
    params(("suggestion_id" = String, Path, description = "The suggestion", pattern = "^sg_[0-9a-f]{24}$")),
    responses(
        (status = 200, description = "Dismissed", body = SiteSuggestion),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 403, description = "Not an admin key", body = ErrorBody),
        (status = 404, description = "No such suggestion", body = ErrorBody),
        (status = 409, description = "Accepted already: delete the site instead", body = ErrorBody),
    )
)]
pub async fn dismiss_suggestion(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SiteSuggestion>> {
    let id = suggestion_id(&id)?;
    require_admin(&caller, "dismiss suggested sites")?;
    Ok(Json(
        copyhound_intake::suggestions::dismiss(
            state.ports.sites.as_ref(),
            &caller.publisher_id,
            id,
            &caller.reviewer(),
        )
        .await?,
    ))
}

/// One source of a reader app's book-source file (its other fields are
/// accepted and ignored).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookSource {
    /// The site's address (`https://…`, an optional `#comment` after it).
    pub book_source_url: String,
    /// The source's name.
    pub book_source_name: Option<String>,
    /// The site's search, with `{{key}}` where the title goes.
    pub search_url: Option<String>,
}

/// `POST /api/v1/suggestions/book-sources`: every site a book-source file
/// lists becomes a suggestion (sites already watched are left out).
#[utoipa::path(
    post,
    path = "/api/v1/suggestions/book-sources",
    tag = "suggestions",
    request_body(content = Vec<BookSource>, description = "The file as reader apps share it: a JSON array of sources (other fields are ignored)"),
    responses(
        (status = 201, description = "Imported", body = ImportedSources),
        (status = 400, description = "Not a JSON array of sources", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 403, description = "Not an admin key", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn import_book_sources(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<Vec<BookSource>>,
) -> ApiResult<(StatusCode, Json<ImportedSources>)> {
    require_admin(&caller, "import book-source files")?;
    // The one parser reads the file as reader apps write it.
    let bytes = serde_json::to_vec(&body)
        .map_err(|error| ApiError::invalid(format!("body is not JSON: {error}")))?;
    let (recorded, skipped) = copyhound_intake::suggestions::import_book_sources(
        &state.ports,
        &caller.publisher_id,
        "book sources (API)",
        &bytes,
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(ImportedSources {
            new: recorded.new.len(),
            updated: recorded.updated,
            skipped: skipped + recorded.skipped,
        }),
    ))
}
