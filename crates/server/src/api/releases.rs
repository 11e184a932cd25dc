//! A work's release timetable: publishers who release on a schedule say when,
//! and each slot sends the crawler back to where the work lives, as adding
//! chapters does (`copyhound_intake::works::set_release_schedule`).

use axum::Json;
use axum::extract::State;
use copyhound_core::ids::WorkId;
use copyhound_core::model::Work;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;
use crate::api::key_errors;
use crate::api::works::registrant;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiPath, ApiResult, ErrorBody, parse_id};

/// Body of `PUT /api/v1/works/{work_id}/release-schedule`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseScheduleBody {
    /// When chapters are released: a 5-field cron (UTC) firing at most hourly,
    /// e.g. `0 8 * * *`; `null`: no timetable.
    #[schema(schema_with = release_cron_schema)]
    pub cron: Option<String>,
}

/// A cron of at most hourly releases, or `null` (the contract test generates
/// valid ones for the `report-cron` format: the same rule).
fn release_cron_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    crate::openapi::nullable(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::Custom(
                "report-cron".into(),
            )))
            .min_length(Some(1))
            .max_length(Some(copyhound_intake::works::MAX_RELEASE_CRON_CHARS))
            .description(Some(
                "Cron expression, 5 fields, UTC, firing at most once an hour",
            )),
    )
}

/// A work's release timetable.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReleaseSchedule {
    /// The cron, or `null`.
    pub cron: Option<String>,
    /// The next release it announces (RFC 3339), or `null`.
    pub next_release: Option<String>,
    /// The last release (chapters added, or a slot of the timetable), or `null`.
    pub last_release: Option<String>,
}

fn view(work: &Work) -> ReleaseSchedule {
    let now = chrono::Utc::now();
    ReleaseSchedule {
        cron: work.release_schedule.clone(),
        next_release: copyhound_intake::watch::next_scheduled_release(work, now)
            .map(|at| at.to_rfc3339()),
        last_release: copyhound_intake::watch::latest_release(work, now).map(|at| at.to_rfc3339()),
    }
}

/// `GET /api/v1/works/{work_id}/release-schedule`.
#[utoipa::path(
    get,
    path = "/api/v1/works/{work_id}/release-schedule",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    responses(
        (status = 200, description = "The work's release timetable", body = ReleaseSchedule),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
    )
)]
pub async fn get_release_schedule(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
) -> ApiResult<Json<ReleaseSchedule>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let work = state
        .ports
        .works
        .get_work(&caller.publisher_id, &work_id)
        .await?;
    Ok(Json(view(&work)))
}

/// `PUT /api/v1/works/{work_id}/release-schedule`: sets or clears it.
#[utoipa::path(
    put,
    path = "/api/v1/works/{work_id}/release-schedule",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    request_body = ReleaseScheduleBody,
    responses(
        (status = 200, description = "The stored timetable; its next slot's burst is queued", body = ReleaseSchedule),
        (status = 400, description = "Invalid id, or a cron that is malformed, never fires or fires more than hourly", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn put_release_schedule(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    ApiJson(body): ApiJson<ReleaseScheduleBody>,
) -> ApiResult<Json<ReleaseSchedule>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    if body
        .cron
        .as_deref()
        .is_some_and(|cron| cron.trim().is_empty())
    {
        return Err(crate::error::ApiError::invalid(
            "`cron` is blank; send null to clear the timetable",
        ));
    }
    let work = copyhound_intake::works::set_release_schedule(
        &state.ports,
        registrant(&caller),
        &work_id,
        body.cron.as_deref(),
    )
    .await?;
    Ok(Json(view(&work)))
}
