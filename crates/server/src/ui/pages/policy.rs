//! The policy page: a publisher's admin says how much copying counts as an
//! infringement for its novels and its news, instead of the installation's
//! defaults.

use axum::Form;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use super::{UiResult, refused};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::ui::{UiCaller, render};

pub(in crate::ui) async fn policy(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    let view = crate::api::policy::load_policy(&state, &caller.publisher_id).await?;
    Ok(render_policy(&caller, &view, None, false))
}

fn render_policy(
    caller: &PublisherCaller,
    view: &crate::api::policy::PolicyView,
    error: Option<String>,
    saved: bool,
) -> Response {
    render(
        "policy.html",
        json!({
            "publisher": caller.publisher_id,
            "view": view,
            "admin": caller.role == copyhound_core::model::Role::Admin,
            "error": error,
            "saved": saved,
        }),
    )
}

/// The policy form: empty fields keep the installation's values; shares in percent.
#[derive(Debug, Deserialize)]
pub(in crate::ui) struct PolicyForm {
    #[serde(default)]
    novel_min_copied_chars: String,
    #[serde(default)]
    novel_min_chapter_coverage: String,
    #[serde(default)]
    news_min_copied_chars: String,
    #[serde(default)]
    news_min_chapter_coverage: String,
}

fn parse_thresholds(
    kind: &str,
    chars: &str,
    percent: &str,
) -> Result<copyhound_core::model::Thresholds, String> {
    let chars = chars.trim();
    let percent = percent.trim();
    let min_copied_chars = if chars.is_empty() {
        None
    } else {
        Some(chars.parse::<u32>().map_err(|_| {
            format!("{kind}: the minimum of copied characters must be a whole number")
        })?)
    };
    let min_chapter_coverage = if percent.is_empty() {
        None
    } else {
        let value = percent
            .parse::<f32>()
            .ok()
            .filter(|value| value.is_finite())
            .ok_or_else(|| format!("{kind}: the minimum share must be a number of percent"))?;
        Some(value / 100.0)
    };
    Ok(copyhound_core::model::Thresholds {
        min_copied_chars,
        min_chapter_coverage,
    })
}

pub(in crate::ui) async fn save_policy(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<PolicyForm>,
) -> UiResult {
    let parsed = parse_thresholds(
        "novels",
        &form.novel_min_copied_chars,
        &form.novel_min_chapter_coverage,
    )
    .and_then(|novel| {
        parse_thresholds(
            "news",
            &form.news_min_copied_chars,
            &form.news_min_chapter_coverage,
        )
        .map(|news| copyhound_core::model::InfringementPolicy { novel, news })
    });
    let outcome = match parsed {
        Ok(policy) => crate::api::policy::save_policy(&state, &caller, policy)
            .await
            .map_err(|error| error.to_string()),
        Err(message) => Err(message),
    };
    match outcome {
        Ok(view) => Ok(render_policy(&caller, &view, None, true)),
        Err(message) => {
            // The form shows what is stored, and why the change was refused.
            let view = crate::api::policy::load_policy(&state, &caller.publisher_id).await?;
            Ok(refused(render_policy(&caller, &view, Some(message), false)))
        }
    }
}
