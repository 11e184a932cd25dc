//! The HTTP API and admin UI. Routes map to the ports; errors map to HTTP status
//! and stable codes in one place ([`error`]); every read and write is scoped to
//! the caller's publisher ([`auth`]).
//!
//! The server holds no state of its own: everything lives behind the store,
//! queue and index ports it is given as trait objects, so the same router runs
//! on the embedded backends, on MongoDB + Redis, and on in-memory fakes in tests.
//! Registering a work stores it and enqueues fingerprinting; crawls and reports
//! are enqueued too. The server never fingerprints, crawls or renders inline:
//! that is the workers' job, and it keeps request latency flat.
#![warn(missing_docs)]

pub mod api;
pub mod auth;
pub mod connections;
pub mod error;
pub mod evidence;
pub mod metrics;
pub mod openapi;
pub mod routes;
pub mod ui;
pub mod uploads;

#[cfg(test)]
mod tests;
#[cfg(any(test, feature = "testsuite"))]
pub mod testsuite;

use std::future::Future;
use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};
use copyhound_core::config::ServerConfig;
use copyhound_core::ports::Ports;
use copyhound_core::site::SitePolicy;
use copyhound_core::{Error, ErrorKind, Result};
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

use crate::connections::ConnectionLimits;
use crate::error::ApiError;

/// Everything a request handler may touch: the ports plus the config.
#[derive(Clone, Debug)]
pub struct AppState {
    /// Stores, index and queue.
    pub ports: Ports,
    /// Listen address, bootstrap admin key, upload limit.
    pub config: ServerConfig,
    /// What registered sites may point at: the crawlers' address policy
    /// (`crawler.allow_private_addresses`), applied when a site is registered.
    pub site_policy: SitePolicy,
    /// The installation's infringement thresholds, which publisher policies override.
    pub matcher: copyhound_core::config::MatcherConfig,
    /// The mail server (`[smtp]`), when one is configured: e-mail alerts go
    /// out (from the schedulers), and the console sends test e-mails through it.
    pub mail: Option<Arc<dyn copyhound_report::MailTransport>>,
    /// Who to notify about a site (`[rdap]`), when lookups are configured:
    /// `GET /api/v1/sites/{site_id}/recipients` and the console's site page.
    pub recipients: Option<Arc<dyn copyhound_core::ports::RecipientLookup>>,
    /// What evidence bundles are made with (`[evidence]`), when a TSA is
    /// configured: `GET /api/v1/matches/{match_id}/evidence/bundle`.
    pub evidence: Option<copyhound_report::evidence::BundleMaker>,
}

/// Returns the whole application: `/api/v1`, `/health`, `/metrics` and the admin UI at `/`.
pub fn router(state: AppState) -> Router {
    router_with_console(state, ui::ConsoleState::default())
}

/// The same with the console's sessions and login throttle given (tests log in directly).
pub fn router_with_console(state: AppState, console: ui::ConsoleState) -> Router {
    // Install the recorder before the first request so no count is lost.
    let _ = metrics::handle();
    let limit = usize::try_from(state.config.max_upload_bytes).unwrap_or(usize::MAX);
    Router::new()
        .merge(routes::api_routes().into_router())
        .merge(ui::routes())
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(Extension(uploads::UploadPool::from_config(&state.config)))
        .layer(Extension(console))
        .layer(axum::middleware::from_fn(ui::nosniff))
        .layer(axum::middleware::from_fn(metrics::track_requests))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Binds `listen_addr` and serves until `shutdown` resolves, then drains in-flight requests.
pub async fn serve(
    state: AppState,
    listen_addr: &str,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let listener = TcpListener::bind(listen_addr).await.map_err(|error| {
        Error::with_source(
            ErrorKind::Config,
            format!("cannot listen on {listen_addr}"),
            error,
        )
    })?;
    serve_listener(state, listener, shutdown).await
}

/// Serves on an already bound listener (tests bind port 0) until `shutdown` resolves.
pub async fn serve_listener(
    state: AppState,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    serve_listener_within(state, listener, ConnectionLimits::default(), shutdown).await
}

/// The same within other connection limits (tests shorten the timeouts).
pub async fn serve_listener_within(
    state: AppState,
    listener: TcpListener,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let local = listener
        .local_addr()
        .map_err(|error| Error::with_source(ErrorKind::Internal, "no local address", error))?;
    tracing::info!(addr = %local, "http server listening");
    connections::serve(listener, router(state), limits, shutdown).await;
    tracing::info!(addr = %local, "http server stopped");
    Ok(())
}

async fn no_route(method: Method, uri: Uri) -> ApiError {
    Error::new(
        ErrorKind::NotFound,
        format!("no route {method} {}", uri.path()),
    )
    .into()
}

/// Answers a method the path does not serve: 405 with the JSON error body (axum
/// adds the `Allow` header listing the methods the path does serve).
async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    let message = format!("method {method} is not allowed on {}", uri.path());
    tracing::debug!(code = error::METHOD_NOT_ALLOWED_CODE, %message, "request refused");
    (
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        axum::Json(error::ErrorBody::new(
            error::METHOD_NOT_ALLOWED_CODE,
            message,
        )),
    )
        .into_response()
}

fn panic_response(_panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    ApiError(Error::internal("handler panicked")).into_response()
}
