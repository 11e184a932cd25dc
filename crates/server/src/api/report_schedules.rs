//! A publisher's own report schedules: reports over all its matches that the
//! scheduler generates on a cron schedule, beside the installation's
//! `[[reports.schedules]]`. Everyone in the publisher reads them; its admin
//! keys edit them. At most hourly, so no tenant can keep the workers busy.

use axum::Json;
use axum::extract::State;
use chrono::Utc;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{ReportScheduleSetting, Role, validate_report_schedules};
use copyhound_core::schedule::{next_slot, parse_schedule};
use copyhound_core::{Error, ErrorKind};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiResult, ErrorBody};

/// Body of `PUT /report-schedules`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportSchedules {
    /// The schedules (replacing the stored ones; empty or absent: none).
    #[serde(default)]
    #[schema(max_items = 10)]
    pub schedules: Vec<ReportScheduleSetting>,
}

/// One schedule as listed, with its next run.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ScheduleView {
    /// Cron expression (UTC).
    pub cron: String,
    /// Output format.
    pub format: copyhound_core::model::ReportFormat,
    /// Whether each report is e-mailed, once rendered, to the alert recipients.
    pub email: bool,
    /// The next time it fires (UTC).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_run: Option<copyhound_core::model::Timestamp>,
}

/// Answer of the report schedule routes.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ReportSchedulesView {
    /// The schedules.
    pub schedules: Vec<ScheduleView>,
}

fn view(schedules: &[ReportScheduleSetting]) -> ReportSchedulesView {
    let now = Utc::now();
    ReportSchedulesView {
        schedules: schedules
            .iter()
            .map(|schedule| ScheduleView {
                cron: schedule.cron.clone(),
                format: schedule.format,
                email: schedule.email,
                next_run: parse_schedule(&schedule.cron)
                    .ok()
                    .and_then(|cron| next_slot(&cron, now)),
            })
            .collect(),
    }
}

/// Returns the report schedules of `publisher_id`.
pub async fn load_schedules(
    state: &AppState,
    publisher_id: &PublisherId,
) -> copyhound_core::Result<ReportSchedulesView> {
    let publisher = state.ports.publishers.get_publisher(publisher_id).await?;
    Ok(view(&publisher.report_schedules))
}

/// Stores `schedules` for the caller's publisher (admin keys only).
pub async fn save_schedules(
    state: &AppState,
    caller: &PublisherCaller,
    mut schedules: Vec<ReportScheduleSetting>,
) -> copyhound_core::Result<ReportSchedulesView> {
    if caller.role != Role::Admin {
        return Err(Error::new(
            ErrorKind::Forbidden,
            "only the publisher's admin keys edit its report schedules",
        ));
    }
    for schedule in &mut schedules {
        schedule.cron = schedule.cron.trim().to_string();
    }
    validate_report_schedules(&schedules, Utc::now())?;
    let mut publisher = state
        .ports
        .publishers
        .get_publisher(&caller.publisher_id)
        .await?;
    publisher.report_schedules = schedules;
    state.ports.publishers.put_publisher(&publisher).await?;
    tracing::info!(publisher_id = %caller.publisher_id, by = %caller.key_id, schedules = publisher.report_schedules.len(), "report schedules updated");
    Ok(view(&publisher.report_schedules))
}

/// `GET /api/v1/report-schedules`: the caller's report schedules.
#[utoipa::path(
    get,
    path = "/api/v1/report-schedules",
    tag = "reports",
    responses(
        (status = 200, description = "The schedules", body = ReportSchedulesView),
        key_errors::PublisherKey,
    )
)]
pub async fn get_schedules(
    State(state): State<AppState>,
    caller: PublisherCaller,
) -> ApiResult<Json<ReportSchedulesView>> {
    Ok(Json(load_schedules(&state, &caller.publisher_id).await?))
}

/// `PUT /api/v1/report-schedules`: replaces the caller's report schedules.
#[utoipa::path(
    put,
    path = "/api/v1/report-schedules",
    tag = "reports",
    request_body = ReportSchedules,
    responses(
        (status = 200, description = "The stored schedules", body = ReportSchedulesView),
        (status = 400, description = "A cron expression is invalid or fires more than hourly, or too many schedules", body = ErrorBody),
        key_errors::PublisherAdminKey,
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn put_schedules(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<ReportSchedules>,
) -> ApiResult<Json<ReportSchedulesView>> {
    Ok(Json(save_schedules(&state, &caller, body.schedules).await?))
}
