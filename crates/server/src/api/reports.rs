//! Reports: requested here, rendered by a worker (`GenerateReport`), downloaded here.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use copyhound_core::ids::{PublisherId, ReportId, SiteId, WorkId};
use copyhound_core::model::{
    Report, ReportFormat, ReportScope, ReportStatus, ReviewScope, Task, TaskKind,
};
use copyhound_core::ports::Paged;
use copyhound_core::{Error, ErrorKind, Result};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::Schema;

use super::{ListQuery, owned_site, page_request};
use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody, parse_id};
use crate::openapi::{date_time, id_string, nullable};

fn nullable_id_schema() -> Schema {
    nullable(id_string())
}

fn nullable_time_schema() -> Schema {
    nullable(date_time())
}

/// Body of `POST /reports`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateReport {
    /// Output format.
    pub format: ReportFormat,
    /// Only this work.
    #[schema(schema_with = nullable_id_schema)]
    pub work_id: Option<String>,
    /// Only this site.
    #[schema(schema_with = nullable_id_schema)]
    pub site_id: Option<String>,
    /// Only matches seen since (last seen at or after; RFC 3339).
    #[schema(schema_with = nullable_time_schema)]
    pub since: Option<chrono::DateTime<Utc>>,
    /// Only matches seen before (first seen before; RFC 3339): with `since`,
    /// the matches seen during a period.
    #[serde(default)]
    #[schema(schema_with = nullable_time_schema)]
    pub until: Option<chrono::DateTime<Utc>>,
    /// Which review statuses are listed: `confirmed`, `confirmed_and_unreviewed`
    /// (confirmed and `new`) or `all`. Default: `confirmed` for takedown
    /// notices (`takedown`, `takedown_email`), `all` for the other formats.
    #[serde(default)]
    #[schema(nullable)]
    pub review: Option<ReviewScope>,
}

/// `GET /api/v1/reports`: the publisher's reports, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/reports",
    tag = "reports",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of reports", body = Paged<Report>),
        (status = 400, description = "Invalid query", body = ErrorBody),
        key_errors::PublisherKey,
    )
)]
pub async fn list_reports(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Report>>> {
    let page = page_request(query.after, query.limit)?;
    Ok(Json(
        state
            .ports
            .reports
            .list_reports(&caller.publisher_id, &page)
            .await
            .map_err(super::cursor_error)?,
    ))
}

/// Reports of one publisher waiting to be rendered at once; past it `POST`
/// answers `409` until one is ready, so no tenant can fill the workers.
pub const MAX_QUEUED_REPORTS: usize = 5;

/// A queued report older than this was given up (its task dead-lettered
/// before it could be marked failed) and no longer counts.
const QUEUED_FOR_LONG: chrono::Duration = chrono::Duration::hours(1);

/// The publisher's reports still queued (recent ones), on every page of its list.
async fn queued_reports(state: &AppState, publisher_id: &PublisherId) -> Result<usize> {
    let now = Utc::now();
    let reports = copyhound_core::ports::collect_all(200, |request| async move {
        state
            .ports
            .reports
            .list_reports(publisher_id, &request)
            .await
    })
    .await?;
    Ok(reports
        .iter()
        .filter(|report| {
            matches!(report.status, ReportStatus::Queued)
                && now.signed_duration_since(report.created_at) < QUEUED_FOR_LONG
        })
        .count())
}

/// `POST /api/v1/reports`: queues a report.
#[utoipa::path(
    post,
    path = "/api/v1/reports",
    tag = "reports",
    request_body = CreateReport,
    responses(
        (status = 202, description = "Queued", body = Report),
        (status = 400, description = "Invalid body", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work or site", body = ErrorBody),
        (status = 409, description = "Too many of the publisher's reports are queued", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn create_report(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<CreateReport>,
) -> ApiResult<(StatusCode, Json<Report>)> {
    let work_id = body
        .work_id
        .as_deref()
        .map(|raw| parse_id::<WorkId>("work_id", raw))
        .transpose()?;
    let site_id = body
        .site_id
        .as_deref()
        .map(|raw| parse_id::<SiteId>("site_id", raw))
        .transpose()?;
    if let Some(work_id) = &work_id {
        state
            .ports
            .works
            .get_work(&caller.publisher_id, work_id)
            .await?;
    }
    if let Some(site_id) = &site_id {
        owned_site(&state, &caller.publisher_id, site_id).await?;
    }
    if let (Some(since), Some(until)) = (body.since, body.until)
        && until <= since
    {
        return Err(Error::invalid("`until` must come after `since`").into());
    }
    let queued = queued_reports(&state, &caller.publisher_id).await?;
    if queued >= MAX_QUEUED_REPORTS {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "{queued} reports are queued; a new one can be requested once one of them is ready"
            ),
        )
        .into());
    }
    let report = Report {
        id: ReportId::generate(),
        scope: ReportScope {
            publisher_id: caller.publisher_id.clone(),
            work_id,
            site_id,
            since: body.since,
            until: body.until,
            review: Some(body.review.unwrap_or(ReviewScope::default_for(body.format))),
        },
        format: body.format,
        status: ReportStatus::Queued,
        created_at: Utc::now(),
        finished_at: None,
    };
    state.ports.reports.put_report(&report).await?;
    let task = Task::new(
        TaskKind::GenerateReport {
            publisher_id: report.scope.publisher_id.clone(),
            report_id: report.id.clone(),
        },
        report.created_at,
    );
    state.ports.queue.enqueue(vec![task]).await?;
    tracing::info!(report_id = %report.id, by = %caller.key_id, "report queued");
    Ok((StatusCode::ACCEPTED, Json(report)))
}

/// `GET /api/v1/reports/{report_id}`: the report's state.
#[utoipa::path(
    get,
    path = "/api/v1/reports/{report_id}",
    tag = "reports",
    params(("report_id" = ReportId, Path, description = "The report")),
    responses(
        (status = 200, description = "The report", body = Report),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such report", body = ErrorBody),
    )
)]
pub async fn get_report(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(report_id): ApiPath<String>,
) -> ApiResult<Json<Report>> {
    let report_id = parse_id::<ReportId>("report_id", &report_id)?;
    Ok(Json(
        state
            .ports
            .reports
            .get_report(&caller.publisher_id, &report_id)
            .await?,
    ))
}

/// `GET /api/v1/reports/{report_id}/artifact`: the rendered file once ready.
#[utoipa::path(
    get,
    path = "/api/v1/reports/{report_id}/artifact",
    tag = "reports",
    params(("report_id" = ReportId, Path, description = "The report")),
    responses(
        (status = 200, description = "The rendered file, in the report's format",
            content(
                (String = "text/html"),
                (String = "application/pdf"),
                (String = "text/csv"),
                (Object = "application/json"),
                (String = "application/warc"),
                (String = "text/plain"),
                (String = "application/mbox"),
            )
        ),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such report", body = ErrorBody),
        (status = 409, description = "The report is not ready", body = ErrorBody),
    )
)]
pub async fn get_artifact(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(report_id): ApiPath<String>,
) -> ApiResult<Response> {
    let report_id = parse_id::<ReportId>("report_id", &report_id)?;
    let report = state
        .ports
        .reports
        .get_report(&caller.publisher_id, &report_id)
        .await?;
    if !matches!(report.status, ReportStatus::Ready { .. }) {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("report {report_id} is not ready"),
        )
        .into());
    }
    let bytes = state.ports.reports.get_artifact(&report_id).await?;
    let content_type = report.format.content_type();
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}
