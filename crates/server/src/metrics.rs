//! Prometheus metrics. The recorder is process-wide (the `metrics` facade has one
//! global recorder), so it is installed once and every router renders the same
//! registry; if the embedding binary installed its own recorder first, the
//! server's handle still renders, just without the facade's counts.

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Requests by route template, method and status.
pub const HTTP_REQUESTS_TOTAL: &str = "copyhound_http_requests_total";
/// Request latency by route template, seconds.
pub const HTTP_REQUEST_SECONDS: &str = "copyhound_http_request_duration_seconds";

/// Tasks in the queue by state (queued, in_flight, retrying, dead), read at scrape time.
pub const QUEUE_TASKS: &str = "copyhound_queue_tasks";

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Returns the handle of the process-wide Prometheus recorder, installing it on first use.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was already installed; /metrics shows only the server's registry");
        }
        handle
    })
}

/// Middleware counting every request by route template (never the raw path, which
/// would make one series per id) and status.
pub async fn track_requests(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let method = request.method().as_str().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!(HTTP_REQUESTS_TOTAL, "route" => route.clone(), "method" => method, "status" => status)
        .increment(1);
    metrics::histogram!(HTTP_REQUEST_SECONDS, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}
