//! The reports page: the form, and the publisher's reports with their
//! downloads, so a publisher can hand a takedown or a court the evidence in one
//! file, now or on a schedule.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use serde::Deserialize;
use serde_json::json;

use super::{UiResult, first_page, refused, works_and_sites};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::error::parse_id;
use crate::ui::{UiCaller, render};

/// What a schedule form post leaves on the reports page.
#[derive(Default)]
struct ScheduleOutcome {
    error: Option<String>,
    /// The rows as typed (cron, format, e-mailed), shown again beside a refusal.
    typed: Option<Vec<(String, String, bool)>>,
    saved: bool,
}

async fn render_reports(
    state: &AppState,
    caller: &PublisherCaller,
    error: Option<String>,
    schedule: ScheduleOutcome,
) -> UiResult {
    let reports = state
        .ports
        .reports
        .list_reports(&caller.publisher_id, &first_page(100))
        .await?;
    let (works, sites) = works_and_sites(state, &caller.publisher_id).await?;
    let stored = crate::api::report_schedules::load_schedules(state, &caller.publisher_id).await?;
    let mut rows: Vec<serde_json::Value> = match &schedule.typed {
        Some(typed) => typed
            .iter()
            .map(|(cron, format, email)| json!({ "cron": cron, "format": format, "email": email }))
            .collect(),
        None => stored
            .schedules
            .iter()
            .map(|row| serde_json::to_value(row).unwrap_or_default())
            .collect(),
    };
    if rows.len() < copyhound_core::model::MAX_REPORT_SCHEDULES {
        rows.push(json!({ "cron": "", "format": "html" }));
    }
    let failed = error.is_some() || schedule.error.is_some();
    // A scope names its work and site by title, from the pickers' lists.
    let work_titles: BTreeMap<String, &str> = works
        .items
        .iter()
        .map(|work| (work.id.to_string(), work.title.as_str()))
        .collect();
    let site_names: BTreeMap<String, &str> = sites
        .items
        .iter()
        .map(|site| (site.id.to_string(), site.name.as_str()))
        .collect();
    let response = render(
        "reports.html",
        json!({ "publisher": caller.publisher_id, "reports": reports.items, "works": works.items,
                "sites": sites.items, "error": error, "schedule_rows": rows,
                "work_titles": work_titles, "site_names": site_names,
                "schedule_error": schedule.error, "schedules_saved": schedule.saved,
                "admin": caller.role == copyhound_core::model::Role::Admin }),
    );
    Ok(if failed { refused(response) } else { response })
}

pub(in crate::ui) async fn reports(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    render_reports(&state, &caller, None, ScheduleOutcome::default()).await
}

/// Saves the schedule rows (`cron_N`, `format_N`, `email_N` checked to mail
/// each report to the alert recipients); blank crons are dropped.
pub(in crate::ui) async fn save_report_schedules(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<std::collections::HashMap<String, String>>,
) -> UiResult {
    let mut typed = Vec::new();
    for row in 0..=copyhound_core::model::MAX_REPORT_SCHEDULES {
        let cron = form.get(&format!("cron_{row}")).map(|cron| cron.trim());
        let format = form.get(&format!("format_{row}"));
        let email = form.contains_key(&format!("email_{row}"));
        if let (Some(cron), Some(format)) = (cron, format)
            && !cron.is_empty()
        {
            typed.push((cron.to_string(), format.clone(), email));
        }
    }
    let schedules: Result<Vec<copyhound_core::model::ReportScheduleSetting>, String> = typed
        .iter()
        .map(|(cron, format, email)| {
            serde_json::from_value(json!({ "cron": cron, "format": format, "email": email }))
                .map_err(|error| format!("format: {error}"))
        })
        .collect();
    let saved = match schedules {
        Ok(schedules) => crate::api::report_schedules::save_schedules(&state, &caller, schedules)
            .await
            .map(drop),
        Err(message) => Err(copyhound_core::Error::invalid(message)),
    };
    let outcome = match saved {
        Ok(()) => ScheduleOutcome {
            saved: true,
            ..ScheduleOutcome::default()
        },
        Err(error) if error.kind() == copyhound_core::ErrorKind::InvalidInput => ScheduleOutcome {
            error: Some(error.message().to_string()),
            typed: Some(typed),
            saved: false,
        },
        Err(error) => return Err(error.into()),
    };
    render_reports(&state, &caller, None, outcome).await
}

/// The report form; empty fields mean "everything".
#[derive(Debug, Deserialize)]
pub(in crate::ui) struct ReportForm {
    format: String,
    #[serde(default)]
    work_id: String,
    #[serde(default)]
    site_id: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
    #[serde(default)]
    review: String,
}

/// Returns the start (UTC midnight) of the day typed in a date field.
fn form_day(raw: Option<String>) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
    match raw {
        None => Ok(None),
        Some(day) => chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d")
            .map(|day| Some(day.and_time(chrono::NaiveTime::MIN).and_utc()))
            .map_err(|_| format!("\"{day}\" is not a date like 2026-01-31")),
    }
}

pub(in crate::ui) async fn create_report(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<ReportForm>,
) -> UiResult {
    let optional = |raw: &str| {
        let raw = raw.trim();
        (!raw.is_empty()).then(|| raw.to_string())
    };
    let period = form_day(optional(&form.since))
        .and_then(|since| Ok((since, form_day(optional(&form.until))?)));
    let body = period.and_then(|(since, until)| {
        serde_json::from_value::<crate::api::reports::CreateReport>(json!({
            "format": form.format,
            "work_id": optional(&form.work_id),
            "site_id": optional(&form.site_id),
            "since": since,
            "until": until,
            "review": optional(&form.review),
        }))
        .map_err(|error| format!("format: {error}"))
    });
    let queued = match body {
        Ok(body) => crate::api::reports::create_report(
            State(state.clone()),
            caller.clone(),
            crate::error::ApiJson(body),
        )
        .await
        .map(|_| ())
        .map_err(|error| error.0.message().to_string()),
        Err(message) => Err(message),
    };
    match queued {
        Ok(()) => Ok(Redirect::to("/ui/reports").into_response()),
        Err(message) => {
            render_reports(&state, &caller, Some(message), ScheduleOutcome::default()).await
        }
    }
}

/// A ready report's file, as an attachment named after the report.
pub(in crate::ui) async fn report_artifact(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(report_id): axum::extract::Path<String>,
) -> UiResult {
    let id = parse_id::<copyhound_core::ids::ReportId>("report_id", &report_id)?;
    let report = state
        .ports
        .reports
        .get_report(&caller.publisher_id, &id)
        .await?;
    let extension = report.format.file_extension();
    let mut response =
        crate::api::reports::get_artifact(State(state), caller, crate::error::ApiPath(report_id))
            .await?;
    if let Ok(value) = axum::http::HeaderValue::from_str(&format!(
        "attachment; filename=\"copyhound-{id}.{extension}\""
    )) {
        response
            .headers_mut()
            .insert(axum::http::header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}
