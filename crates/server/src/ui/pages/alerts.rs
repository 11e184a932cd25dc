//! The alerts page: who is told by e-mail when confirmed matches pile up, and
//! the rights holder's details that reports and notices carry.

use axum::Form;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use super::{UiResult, refused};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::ui::{UiCaller, render};

pub(in crate::ui) fn render_alerts(
    caller: &PublisherCaller,
    view: &crate::api::alerts::AlertsView,
    profile: &copyhound_core::model::PublisherProfile,
    outcome: AlertsOutcome,
) -> Response {
    render(
        "alerts.html",
        json!({
            "publisher": caller.publisher_id,
            "view": view,
            "profile": profile,
            "admin": caller.role == copyhound_core::model::Role::Admin,
            "error": outcome.error,
            "saved": outcome.saved,
            "profile_error": outcome.profile_error,
            "profile_saved": outcome.profile_saved,
            "test": outcome.test,
        }),
    )
}

/// What a form post leaves on the alerts page.
#[derive(Default)]
pub(in crate::ui) struct AlertsOutcome {
    pub(in crate::ui) error: Option<String>,
    pub(in crate::ui) saved: bool,
    pub(in crate::ui) profile_error: Option<String>,
    pub(in crate::ui) profile_saved: bool,
    /// How the test e-mail went.
    pub(in crate::ui) test: Option<crate::api::alerts::TestDelivery>,
}

pub(in crate::ui) async fn alerts(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
    let profile = crate::api::profile::load_profile(&state, &caller.publisher_id).await?;
    Ok(render_alerts(
        &caller,
        &view,
        &profile,
        AlertsOutcome::default(),
    ))
}

/// The profile form: the rights holder's details and the language.
#[derive(Debug, Deserialize)]
pub(in crate::ui) struct ProfileForm {
    #[serde(default)]
    language: String,
    #[serde(default)]
    legal_name: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    contact_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    phone: String,
}

pub(in crate::ui) async fn save_profile(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<ProfileForm>,
) -> UiResult {
    use copyhound_core::model::Language;
    let language = match form.language.trim() {
        "zh" => Some(Language::Zh),
        "en" => Some(Language::En),
        _ => None,
    };
    let profile = copyhound_core::model::PublisherProfile {
        language,
        legal_name: form.legal_name.trim().to_string(),
        address: form.address.trim().replace("\r\n", "\n"),
        contact_name: form.contact_name.trim().to_string(),
        email: form.email.trim().to_string(),
        phone: form.phone.trim().to_string(),
    };
    let saved = crate::api::profile::save_profile(&state, &caller, profile.clone()).await;
    let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
    match saved {
        Ok(stored) => Ok(render_alerts(
            &caller,
            &view,
            &stored,
            AlertsOutcome {
                profile_saved: true,
                ..AlertsOutcome::default()
            },
        )),
        Err(error)
            if matches!(
                error.kind(),
                copyhound_core::ErrorKind::InvalidInput | copyhound_core::ErrorKind::Forbidden
            ) =>
        {
            Ok(refused(render_alerts(
                &caller,
                &view,
                &profile,
                AlertsOutcome {
                    profile_error: Some(error.message().to_string()),
                    ..AlertsOutcome::default()
                },
            )))
        }
        Err(error) => Err(error.into()),
    }
}

/// The alerts form: one recipient per line.
#[derive(Debug, Deserialize)]
pub(in crate::ui) struct AlertsForm {
    #[serde(default)]
    email_to: String,
    #[serde(default)]
    threshold_new_confirmed: String,
    /// `detected` alerts on every new match; anything else on confirmed ones.
    #[serde(default)]
    alert_on: String,
}

pub(in crate::ui) async fn save_alerts(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<AlertsForm>,
) -> UiResult {
    let outcome = match form.threshold_new_confirmed.trim().parse::<u32>() {
        Ok(threshold) => {
            let settings = copyhound_core::model::AlertSettings {
                email_to: form
                    .email_to
                    .lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .map(str::to_string)
                    .collect(),
                threshold_new_confirmed: threshold,
                alert_on: if form.alert_on == "detected" {
                    copyhound_core::model::AlertOn::Detected
                } else {
                    copyhound_core::model::AlertOn::Confirmed
                },
            };
            crate::api::alerts::save_alerts(&state, &caller, settings)
                .await
                .map_err(|error| error.message().to_string())
        }
        Err(_) => Err("the threshold must be a whole number".to_string()),
    };
    let profile = crate::api::profile::load_profile(&state, &caller.publisher_id).await?;
    match outcome {
        Ok(view) => Ok(render_alerts(
            &caller,
            &view,
            &profile,
            AlertsOutcome {
                saved: true,
                ..AlertsOutcome::default()
            },
        )),
        Err(message) => {
            let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
            Ok(refused(render_alerts(
                &caller,
                &view,
                &profile,
                AlertsOutcome {
                    error: Some(message),
                    ..AlertsOutcome::default()
                },
            )))
        }
    }
}
