//! A publisher's profile: the rights holder's details that takedown notices
//! are signed with, and the language of its alert e-mails. Everyone in the
//! publisher reads it; its admin keys edit it.

use axum::Json;
use axum::extract::State;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{PublisherProfile, Role};
use copyhound_core::{Error, ErrorKind};

use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiResult, ErrorBody};

/// Returns the profile of `publisher_id`.
pub async fn load_profile(
    state: &AppState,
    publisher_id: &PublisherId,
) -> copyhound_core::Result<PublisherProfile> {
    Ok(state
        .ports
        .publishers
        .get_publisher(publisher_id)
        .await?
        .profile)
}

/// Stores `profile` for the caller's publisher (admin keys only).
pub async fn save_profile(
    state: &AppState,
    caller: &PublisherCaller,
    profile: PublisherProfile,
) -> copyhound_core::Result<PublisherProfile> {
    if caller.role != Role::Admin {
        return Err(Error::new(
            ErrorKind::Forbidden,
            "only the publisher's admin keys edit its profile",
        ));
    }
    profile.validate()?;
    let mut publisher = state
        .ports
        .publishers
        .get_publisher(&caller.publisher_id)
        .await?;
    publisher.profile = profile;
    state.ports.publishers.put_publisher(&publisher).await?;
    tracing::info!(publisher_id = %caller.publisher_id, by = %caller.key_id, "publisher profile updated");
    Ok(publisher.profile)
}

/// `GET /api/v1/profile`: the caller's rights-holder details and language.
#[utoipa::path(
    get,
    path = "/api/v1/profile",
    tag = "policy",
    responses(
        (status = 200, description = "The profile", body = PublisherProfile),
        key_errors::PublisherKey,
    )
)]
pub async fn get_profile(
    State(state): State<AppState>,
    caller: PublisherCaller,
) -> ApiResult<Json<PublisherProfile>> {
    Ok(Json(load_profile(&state, &caller.publisher_id).await?))
}

/// `PUT /api/v1/profile`: replaces the caller's profile.
#[utoipa::path(
    put,
    path = "/api/v1/profile",
    tag = "policy",
    request_body = PublisherProfile,
    responses(
        (status = 200, description = "The stored profile", body = PublisherProfile),
        (status = 400, description = "A field is too long, spans lines, or the e-mail is invalid", body = ErrorBody),
        key_errors::PublisherAdminKey,
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn put_profile(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<PublisherProfile>,
) -> ApiResult<Json<PublisherProfile>> {
    Ok(Json(save_profile(&state, &caller, body).await?))
}
