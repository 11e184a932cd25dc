use axum::http::StatusCode;
use copyhound_core::ErrorKind;

use super::{Harness, assert_error};

#[tokio::test]
async fn health_reports_each_backend_and_metrics_count_requests() {
    let harness = Harness::new().await;
    let (status, health) = harness.call("GET", "/health", "", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["checks"]["store"], "ok");
    assert_eq!(health["checks"]["queue"], "ok");
    *harness.memory.as_ref().unwrap().fail_with.lock().unwrap() = Some(ErrorKind::Unavailable);
    let (status, health) = harness.call("GET", "/health", "", None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health["status"], "degraded");
    assert!(
        health["checks"]["store"]
            .as_str()
            .unwrap()
            .starts_with("unavailable")
    );
    let (status, body) = harness
        .call("GET", "/api/v1/works", &harness.key_a, None)
        .await;
    assert_error(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "retry later",
    );
    *harness.memory.as_ref().unwrap().fail_with.lock().unwrap() = None;
    let (status, metrics) = harness.call("GET", "/metrics", "", None).await;
    assert_eq!(status, StatusCode::OK);
    let text = metrics.as_str().unwrap();
    assert!(text.contains("copyhound_http_requests_total"), "{text}");
    assert!(text.contains(r#"route="/health""#), "{text}");
    assert!(
        text.contains(r#"copyhound_queue_tasks{state="queued"}"#),
        "{text}"
    );
}
