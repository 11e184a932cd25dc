//! JSON handlers, one module per resource. Handlers validate input, check that
//! addressed things belong to the caller's publisher (another tenant's id is a
//! plain 404, indistinguishable from a missing one), call the ports and enqueue
//! follow-up work. Shared helpers live here.

pub mod admin;
pub mod alerts;
pub mod key_errors;
pub mod matches;
pub mod policy;
pub mod profile;
pub mod releases;
pub mod report_schedules;
pub mod reports;
pub mod sites;
pub mod suggestions;
pub mod system;
pub mod works;

use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::model::{CrawlRun, Site};
use copyhound_core::ports::PageRequest;
use copyhound_core::{Error, ErrorKind, Result};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa::openapi::schema::Schema;

use crate::AppState;
use crate::error::{ApiError, ApiResult};

/// Page size when the request names none.
pub const DEFAULT_LIMIT: u32 = 50;
/// Largest page size; larger requests are capped, not refused.
pub const MAX_LIMIT: u32 = 200;
/// Longest accepted cursor, bytes.
pub const MAX_CURSOR_LEN: usize = 512;

/// `?after=&limit=` of plain listings.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Cursor from the previous page (its `next`).
    #[param(schema_with = cursor_schema)]
    pub after: Option<String>,
    /// Page size: default 50, at least 1; values over 200 are capped at 200.
    #[param(schema_with = limit_schema)]
    pub limit: Option<u64>,
}

/// Returns the schema of `after`.
pub fn cursor_schema() -> Schema {
    crate::openapi::cursor().into()
}

/// Returns the schema of `limit`: any `u64` from 1 (larger values are capped).
pub fn limit_schema() -> Schema {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, Type};
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int64,
        )))
        .minimum(Some(1))
        .maximum(Some(usize::try_from(u64::MAX).unwrap_or(usize::MAX)))
        .default(Some(serde_json::json!(DEFAULT_LIMIT)))
        .into()
}

/// Returns the store page request of a listing query: limit capped, cursor checked.
pub fn page_request(after: Option<String>, limit: Option<u64>) -> ApiResult<PageRequest> {
    let limit = match limit {
        None => DEFAULT_LIMIT,
        Some(0) => return Err(ApiError::invalid("`limit` must be at least 1")),
        Some(value) => u32::try_from(value.min(u64::from(MAX_LIMIT))).unwrap_or(MAX_LIMIT),
    };
    if let Some(cursor) = &after {
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(ApiError::invalid(format!(
                "`after` cursor is longer than {MAX_CURSOR_LEN} bytes"
            )));
        }
        let cursor_alphabet =
            |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-';
        if !cursor.bytes().all(cursor_alphabet) {
            return Err(ApiError::invalid(
                "`after` is not a cursor: pass the `next` of the previous page",
            ));
        }
    }
    Ok(PageRequest {
        after: after.filter(|cursor| !cursor.is_empty()),
        limit,
    })
}

/// Maps a backend's refusal of a cursor it did not issue to a 400 on `after`.
pub fn cursor_error(error: Error) -> Error {
    if error.kind() == ErrorKind::InvalidInput || error.kind() == ErrorKind::Corrupt {
        return Error::invalid(format!("`after`: {}", error.message()));
    }
    error
}

/// Returns the site if it belongs to `publisher_id`, else `NotFound`.
pub async fn owned_site(
    state: &AppState,
    publisher_id: &PublisherId,
    site_id: &SiteId,
) -> Result<Site> {
    copyhound_intake::sites::owned_site(&state.ports, publisher_id, site_id).await
}

/// Returns the crawl run and its site if the site belongs to `publisher_id`, else `NotFound`.
pub async fn owned_run(
    state: &AppState,
    publisher_id: &PublisherId,
    run_id: &CrawlRunId,
) -> Result<(CrawlRun, Site)> {
    let run = state.ports.sites.get_crawl_run(run_id).await?;
    let site = owned_site(state, publisher_id, &run.site_id)
        .await
        .map_err(|error| {
            if error.kind() == ErrorKind::NotFound {
                Error::not_found(format!("crawl run {run_id}"))
            } else {
                error
            }
        })?;
    Ok((run, site))
}

/// Rewrites `object[field]` from an integral float (`74.0`, an integer to
/// JSON Schema, not to serde's integer types) to that integer; other values
/// are left for deserialization to judge.
pub fn integral_field(object: &mut serde_json::Map<String, serde_json::Value>, field: &str) {
    if let Some(number) = object.get_mut(field)
        && let Some(float) = number.as_f64()
        && !number.is_u64()
        && float.fract() == 0.0
        && (0.0..=f64::from(u32::MAX)).contains(&float)
    {
        *number = serde_json::Value::from(float as u64);
    }
}

pub use copyhound_intake::works::required_text;
