//! A publisher's own e-mail alerts: who gets one, after how many newly
//! confirmed matches. The scheduler reads them from the store beside the
//! installation's `[[reports.alerts]]`, and sends through its mail server.
//! Everyone in the publisher reads them; its admin keys edit them.

use axum::Json;
use axum::extract::State;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{AlertSettings, Role};
use copyhound_core::{Error, ErrorKind};
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiResult, ErrorBody};

/// Body of the alert routes.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct AlertsView {
    /// The settings.
    pub settings: AlertSettings,
    /// Whether the installation has a mail server (`[smtp]`); without one no e-mail goes out.
    pub mail_server: bool,
}

/// Returns the alert settings of `publisher_id`.
pub async fn load_alerts(
    state: &AppState,
    publisher_id: &PublisherId,
) -> copyhound_core::Result<AlertsView> {
    let publisher = state.ports.publishers.get_publisher(publisher_id).await?;
    Ok(AlertsView {
        settings: publisher.alerts,
        mail_server: state.mail.is_some(),
    })
}

/// Stores `settings` for the caller's publisher (admin keys only).
pub async fn save_alerts(
    state: &AppState,
    caller: &PublisherCaller,
    settings: AlertSettings,
) -> copyhound_core::Result<AlertsView> {
    if caller.role != Role::Admin {
        return Err(Error::new(
            ErrorKind::Forbidden,
            "only the publisher's admin keys edit its alerts",
        ));
    }
    settings.validate()?;
    let mut publisher = state
        .ports
        .publishers
        .get_publisher(&caller.publisher_id)
        .await?;
    publisher.alerts = settings;
    state.ports.publishers.put_publisher(&publisher).await?;
    tracing::info!(publisher_id = %caller.publisher_id, by = %caller.key_id, recipients = publisher.alerts.email_to.len(), "alert settings updated");
    Ok(AlertsView {
        settings: publisher.alerts,
        mail_server: state.mail.is_some(),
    })
}

/// `GET /api/v1/alerts`: the caller's e-mail alerts.
#[utoipa::path(
    get,
    path = "/api/v1/alerts",
    tag = "policy",
    responses(
        (status = 200, description = "The settings", body = AlertsView),
        key_errors::PublisherKey,
    )
)]
pub async fn get_alerts(
    State(state): State<AppState>,
    caller: PublisherCaller,
) -> ApiResult<Json<AlertsView>> {
    Ok(Json(load_alerts(&state, &caller.publisher_id).await?))
}

/// `PUT /api/v1/alerts`: replaces the caller's e-mail alerts.
#[utoipa::path(
    put,
    path = "/api/v1/alerts",
    tag = "policy",
    request_body = AlertSettings,
    responses(
        (status = 200, description = "The stored settings", body = AlertsView),
        (status = 400, description = "An address or the threshold is invalid", body = ErrorBody),
        key_errors::PublisherAdminKey,
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn put_alerts(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> ApiResult<Json<AlertsView>> {
    let settings = settings_from_json(body)?;
    Ok(Json(save_alerts(&state, &caller, settings).await?))
}

/// Reads the body as its schema states it: an object, and the threshold any
/// integral number (`5.0` is an integer to JSON Schema, not to serde).
fn settings_from_json(mut body: serde_json::Value) -> copyhound_core::Result<AlertSettings> {
    let object = body
        .as_object_mut()
        .ok_or_else(|| Error::invalid("the alert settings must be a JSON object"))?;
    super::integral_field(object, "threshold_new_confirmed");
    serde_json::from_value(body).map_err(|error| Error::invalid(format!("alerts: {error}")))
}

/// How a test e-mail went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestDelivery {
    /// Whether the mail server accepted it.
    pub delivered: bool,
    /// The recipients, or why nothing was accepted.
    pub detail: String,
}

/// Sends a test e-mail to the caller's alert recipients through the
/// installation's mail server, once (no retry: the admin sees the answer),
/// and returns how that went. Admin keys only; callers rate-limit it.
pub async fn send_test_email(
    state: &AppState,
    caller: &PublisherCaller,
) -> copyhound_core::Result<TestDelivery> {
    if caller.role != Role::Admin {
        return Err(Error::new(
            ErrorKind::Forbidden,
            "only the publisher's admin keys send test e-mails",
        ));
    }
    let publisher = state
        .ports
        .publishers
        .get_publisher(&caller.publisher_id)
        .await?;
    let refused = |detail: &str| TestDelivery {
        delivered: false,
        detail: detail.to_string(),
    };
    if publisher.alerts.email_to.is_empty() {
        return Ok(refused("no recipients are saved"));
    }
    let Some(mail) = &state.mail else {
        return Ok(refused(
            "the operator has not configured a mail server ([smtp])",
        ));
    };
    let email = copyhound_report::build_test_email(
        &publisher.name,
        &caller.reviewer(),
        publisher
            .profile
            .language
            .unwrap_or(copyhound_core::model::Language::En),
        &publisher.alerts.email_to,
        &format!(
            "test-{}-{}",
            caller.publisher_id,
            chrono::Utc::now().timestamp_millis()
        ),
    );
    let recipients = publisher.alerts.email_to.join(", ");
    match mail.send(&email).await {
        Ok(()) => {
            tracing::info!(publisher_id = %caller.publisher_id, by = %caller.key_id, "test e-mail delivered");
            Ok(TestDelivery {
                delivered: true,
                detail: recipients,
            })
        }
        Err(error) => {
            tracing::warn!(publisher_id = %caller.publisher_id, by = %caller.key_id, error = %error, "test e-mail refused");
            Ok(refused(error.message()))
        }
    }
}
