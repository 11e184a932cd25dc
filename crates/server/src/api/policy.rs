//! A publisher's infringement policy: the bar a copy must clear, per kind of
//! work, over the installation's `[matcher]` defaults. A news agency may count
//! one copied paragraph of a 900-character article; a novel platform keeps the
//! 300-character default. Everyone in the publisher reads it; its admin keys
//! edit it. A change applies to pages compared from then on.

use axum::Json;
use axum::extract::State;
use copyhound_core::config::MatcherConfig;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{InfringementPolicy, Role, Thresholds};
use copyhound_core::{Error, ErrorKind};
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiResult, ErrorBody};

/// The thresholds in force for one kind of work.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, ToSchema)]
pub struct EffectiveThresholds {
    /// Copied characters at which a page infringes.
    pub min_copied_chars: u32,
    /// Share of a short chapter (under twice `min_copied_chars`) at which a page infringes.
    pub min_chapter_coverage: f32,
}

/// Thresholds in force, per kind of work.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, ToSchema)]
pub struct EffectivePolicy {
    /// For novels.
    pub novel: EffectiveThresholds,
    /// For news articles.
    pub news: EffectiveThresholds,
}

/// Body of the policy routes.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct PolicyView {
    /// The publisher's overrides (unset: the installation's value).
    pub policy: InfringementPolicy,
    /// What applies.
    pub effective: EffectivePolicy,
    /// The installation's values.
    pub defaults: EffectiveThresholds,
}

/// What applies, read from the one resolution the comparison workers use.
fn effective(defaults: &MatcherConfig, thresholds: &Thresholds) -> EffectiveThresholds {
    let resolved = copyhound_intake::policy::resolve(defaults, thresholds);
    EffectiveThresholds {
        min_copied_chars: resolved.min_copied_chars,
        min_chapter_coverage: resolved.min_chapter_coverage,
    }
}

fn view(defaults: &MatcherConfig, policy: InfringementPolicy) -> PolicyView {
    PolicyView {
        effective: EffectivePolicy {
            novel: effective(defaults, &policy.novel),
            news: effective(defaults, &policy.news),
        },
        defaults: effective(defaults, &Thresholds::default()),
        policy,
    }
}

/// Returns the policy of `publisher_id`.
pub async fn load_policy(
    state: &AppState,
    publisher_id: &PublisherId,
) -> copyhound_core::Result<PolicyView> {
    let publisher = state.ports.publishers.get_publisher(publisher_id).await?;
    Ok(view(&state.matcher, publisher.policy))
}

/// Stores `policy` for the caller's publisher (admin keys only).
pub async fn save_policy(
    state: &AppState,
    caller: &PublisherCaller,
    policy: InfringementPolicy,
) -> copyhound_core::Result<PolicyView> {
    if caller.role != Role::Admin {
        return Err(Error::new(
            ErrorKind::Forbidden,
            "only the publisher's admin keys edit its infringement policy",
        ));
    }
    let policy = copyhound_intake::policy::save(
        state.ports.publishers.as_ref(),
        &caller.publisher_id,
        policy,
        &caller.key_id,
    )
    .await?;
    Ok(view(&state.matcher, policy))
}

/// `GET /api/v1/policy`: the caller's infringement policy.
#[utoipa::path(
    get,
    path = "/api/v1/policy",
    tag = "policy",
    responses(
        (status = 200, description = "The policy, and the thresholds in force", body = PolicyView),
        key_errors::PublisherKey,
    )
)]
pub async fn get_policy(
    State(state): State<AppState>,
    caller: PublisherCaller,
) -> ApiResult<Json<PolicyView>> {
    Ok(Json(load_policy(&state, &caller.publisher_id).await?))
}

/// `PUT /api/v1/policy`: replaces the caller's infringement policy.
#[utoipa::path(
    put,
    path = "/api/v1/policy",
    tag = "policy",
    request_body = InfringementPolicy,
    responses(
        (status = 200, description = "The stored policy, and the thresholds in force", body = PolicyView),
        (status = 400, description = "A value out of range", body = ErrorBody),
        key_errors::PublisherAdminKey,
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn put_policy(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> ApiResult<Json<PolicyView>> {
    let policy = policy_from_json(body)?;
    Ok(Json(save_policy(&state, &caller, policy).await?))
}

/// Reads a policy body as its schema states it: each kind an object (serde
/// would also take an array of the fields), and `min_copied_chars` any
/// integral number (`74.0` is an integer to JSON Schema, not to serde).
fn policy_from_json(mut body: serde_json::Value) -> copyhound_core::Result<InfringementPolicy> {
    let object = body
        .as_object_mut()
        .ok_or_else(|| Error::invalid("the policy must be a JSON object"))?;
    for kind in ["novel", "news"] {
        let Some(thresholds) = object.get_mut(kind) else {
            continue;
        };
        let thresholds = thresholds
            .as_object_mut()
            .ok_or_else(|| Error::invalid(format!("`{kind}` must be an object")))?;
        super::integral_field(thresholds, "min_copied_chars");
    }
    serde_json::from_value(body).map_err(|error| Error::invalid(format!("policy: {error}")))
}
