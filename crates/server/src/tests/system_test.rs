use super::{Harness, assert_error};
use axum::http::StatusCode;

/// A state whose stores are a MongoDB that is not there: every store call
/// fails as a down backend does.
async fn state_with_a_dead_store(harness: &Harness) -> crate::AppState {
    let dead = copyhound_store::Stores::mongo(
        "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=300",
        "copyhound_dead",
    )
    .await
    .unwrap();
    let live = &harness.state.ports;
    crate::AppState {
        ports: dead.ports(live.index.clone(), live.queue.clone()),
        ..harness.state.clone()
    }
}

#[tokio::test]
async fn health_reports_each_backend_and_metrics_count_requests() {
    let harness = Harness::new().await;
    let (status, health) = harness.call("GET", "/health", "", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["checks"]["store"], "ok");
    assert_eq!(health["checks"]["queue"], "ok");

    let down = Harness {
        router: crate::router(state_with_a_dead_store(&harness).await),
        ..harness
    };
    let (status, health) = down.call("GET", "/health", "", None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health["status"], "degraded");
    assert!(
        health["checks"]["store"]
            .as_str()
            .unwrap()
            .starts_with("unavailable"),
        "{health}"
    );
    let (status, body) = down.call("GET", "/api/v1/works", &down.key_a, None).await;
    assert_error(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "retry later",
    );

    let (status, metrics) = down.call("GET", "/metrics", "", None).await;
    assert_eq!(status, StatusCode::OK);
    let text = metrics.as_str().unwrap();
    assert!(text.contains("copyhound_http_requests_total"), "{text}");
    assert!(text.contains(r#"route="/health""#), "{text}");
    assert!(
        text.contains(r#"copyhound_queue_tasks{state="queued"}"#),
        "{text}"
    );
}
