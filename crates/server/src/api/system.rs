//! Health, metrics, the OpenAPI document and `me`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use copyhound_core::model::Role;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::api::key_errors;
use crate::auth::Caller;

/// Body of `/health`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` or `degraded`.
    #[schema(value_type = String, pattern = "^(ok|degraded)$")]
    pub status: &'static str,
    /// Per backend (`store`, `queue`, `index`): `ok` or the error code and message.
    #[schema(value_type = BTreeMap<String, String>)]
    pub checks: BTreeMap<&'static str, String>,
}

/// `GET /health`: checks every backend; 200 when all answer, 503 otherwise.
#[utoipa::path(
    get,
    path = "/health",
    tag = "system",
    security(()),
    responses(
        (status = 200, description = "Every backend answers", body = Health),
        (status = 503, description = "A backend is down (`degraded`)", body = Health),
    )
)]
pub async fn health(State(state): State<AppState>) -> Response {
    let mut checks = BTreeMap::new();
    let mut healthy = true;
    let mut record = |name: &'static str, outcome: copyhound_core::Result<()>| {
        let value = match outcome {
            Ok(()) => "ok".to_string(),
            Err(error) => {
                healthy = false;
                tracing::warn!(backend = name, error = %error, "health check failed");
                format!("{}: {}", error.code(), error.message())
            }
        };
        checks.insert(name, value);
    };
    record("store", state.ports.publishers.check_connectivity().await);
    record("queue", state.ports.queue.check_connectivity().await);
    record("index", state.ports.index.check_connectivity().await);
    let status = if healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = Health {
        status: if healthy { "ok" } else { "degraded" },
        checks,
    };
    (status, Json(body)).into_response()
}

/// `GET /metrics`: Prometheus text exposition, with the task queue's gauges
/// refreshed at scrape time (depth, in flight, retrying, dead letters).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "system",
    security(()),
    responses(
        (status = 200, description = "Prometheus text exposition", content_type = "text/plain", body = String),
    )
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    match state.ports.queue.stats().await {
        Ok(stats) => {
            metrics::gauge!(crate::metrics::QUEUE_TASKS, "state" => "queued")
                .set(stats.depth as f64);
            metrics::gauge!(crate::metrics::QUEUE_TASKS, "state" => "in_flight")
                .set(stats.in_flight as f64);
            metrics::gauge!(crate::metrics::QUEUE_TASKS, "state" => "retrying")
                .set(stats.retrying as f64);
            metrics::gauge!(crate::metrics::QUEUE_TASKS, "state" => "dead").set(stats.dead as f64);
        }
        Err(error) => tracing::warn!(error = %error, "queue stats unavailable for /metrics"),
    }
    let body = crate::metrics::handle().render();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

/// `GET /api/v1/openapi.json`: this document (no key needed).
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "system",
    security(()),
    responses(
        (status = 200, description = "The OpenAPI 3.1 document of this API", body = Object),
    )
)]
pub async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        crate::openapi::document_text(),
    )
        .into_response()
}

/// Body of `/api/v1/me`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    /// Key id (`config-admin` for the operator key).
    pub key_id: String,
    /// Role.
    pub role: Role,
    /// Tenant; `null` for the operator key, which acts for no publisher.
    pub publisher_id: Option<String>,
}

/// `GET /api/v1/me`: who the presented key authenticates.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "system",
    responses(
        (status = 200, description = "The caller", body = Me),
        key_errors::AnyKey,
    )
)]
pub async fn me(caller: Caller) -> Json<Me> {
    Json(Me {
        key_id: caller.key_id,
        role: caller.role,
        publisher_id: caller.publisher_id.map(|id| id.to_string()),
    })
}
