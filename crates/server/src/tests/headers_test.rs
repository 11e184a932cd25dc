//! What every answer says about itself (no sniffing, no framing, no caching
//! of keys), where the language switch may send a browser back to, and how
//! much work text one editor page may echo.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::json;
use tower::ServiceExt;

use super::{ADMIN_KEY, Harness, SEC_FETCH_SITE, send};
use crate::ui::SESSION_COOKIE;

#[tokio::test]
async fn every_answer_is_nosniff_and_console_pages_refuse_framing_and_caching() {
    let harness = Harness::new().await;
    let health = send(&harness, "GET", "/health", "", None).await;
    assert_eq!(health.status, StatusCode::OK);
    for path in ["/login", "/ui/works", "/ui/sites"] {
        let request = Request::builder()
            .uri(path)
            .header(
                header::COOKIE,
                format!("{SESSION_COOKIE}={}", harness.session(&harness.key_a).await),
            )
            .body(Body::empty())
            .unwrap();
        let response = harness.router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let headers = response.headers();
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
        assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY", "{path}");
        assert_eq!(headers[header::CACHE_CONTROL], "no-store", "{path}");
        let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(policy.contains("default-src 'none'"), "{policy}");
        assert!(policy.contains("form-action 'self'"), "{policy}");
    }
    let request = Request::builder()
        .uri("/health")
        .body(Body::empty())
        .unwrap();
    let response = harness.router.clone().oneshot(request).await.unwrap();
    assert_eq!(
        response.headers()[header::X_CONTENT_TYPE_OPTIONS],
        "nosniff"
    );
}

#[tokio::test]
async fn api_answers_that_carry_a_key_are_never_stored() {
    let harness = Harness::new().await;
    for (path, body) in [
        ("/api/v1/admin/publishers/pub_a/keys", json!({})),
        (
            "/api/v1/admin/publishers",
            json!({"id": "pub_c", "name": "C", "kind": "books"}),
        ),
    ] {
        let request = Request::builder()
            .method("POST")
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {ADMIN_KEY}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let response = harness.router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED, "{path}");
        assert_eq!(
            response.headers()[header::CACHE_CONTROL],
            "no-store",
            "{path}"
        );
        assert_eq!(
            response.headers()[header::X_CONTENT_TYPE_OPTIONS],
            "nosniff"
        );
    }
}

#[tokio::test]
async fn the_language_switch_only_goes_back_to_a_page_of_this_site() {
    let harness = Harness::new().await;
    for (referer, expected) in [
        ("http://127.0.0.1:8080/ui/sites?x=1", "/ui/sites?x=1"),
        ("http://127.0.0.1:8080/\\evil.example/", "/"),
        ("http://127.0.0.1:8080//evil.example/", "/"),
        ("/\\evil.example/", "/"),
        ("https://evil.example", "/"),
    ] {
        let request = Request::builder()
            .uri("/ui/lang/zh")
            .header(header::REFERER, referer)
            .body(Body::empty())
            .unwrap();
        let response = harness.router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[header::LOCATION], expected, "{referer}");
    }
}

/// A router over the harness's state that takes uploads of 16 MiB.
fn large_upload_router(harness: &Harness) -> Router {
    let mut state = harness.state.clone();
    state.config.max_upload_bytes = 16 << 20;
    crate::router_with_console(state, harness.console.clone())
}

#[tokio::test]
async fn the_editor_refuses_a_work_it_would_echo_past_its_cap() {
    let harness = Harness::new().await;
    let router = large_upload_router(&harness);
    // Escaped as `&#x2f;`, 1.5 MiB of slashes become 9 MiB of HTML.
    let slashes = "/".repeat(3 << 19);
    let body =
        json!({"id": "w_slashes", "title": "斜线", "chapters": [{"title": "一", "text": slashes}]});
    let request = Request::builder()
        .method("POST")
        .uri("/api/v1/works")
        .header(header::AUTHORIZATION, format!("Bearer {}", harness.key_a))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let session = harness.session(&harness.key_a).await;
    let request = Request::builder()
        .uri("/ui/works/w_slashes/edit")
        .header(header::COOKIE, format!("{SESSION_COOKIE}={session}"))
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let page = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert!(page.len() < 64 << 10, "{} bytes", page.len());
    let page = String::from_utf8_lossy(&page);
    assert!(
        page.contains("PUT &#x2f;api&#x2f;v1&#x2f;works&#x2f;w_slashes"),
        "{page}"
    );

    // The same text uploaded for a preview.
    let (content_type, upload) =
        super::console_test::multipart("slashes.txt", slashes.as_bytes(), &[("title", "斜线")]);
    let request = Request::builder()
        .method("POST")
        .uri("/ui/works/preview")
        .header(header::COOKIE, format!("{SESSION_COOKIE}={session}"))
        .header(SEC_FETCH_SITE, "same-origin")
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(upload))
        .unwrap();
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let page = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert!(page.len() < 64 << 10, "{} bytes", page.len());
}
