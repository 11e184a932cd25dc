//! The infringement policy: read by any key of the publisher, edited by its
//! admin keys only, range-checked, per tenant; and the UI form that edits it.

use axum::http::StatusCode;
use serde_json::json;

use super::{ADMIN_KEY, Harness, assert_error};

async fn admin_key_of(harness: &Harness, publisher: &str) -> String {
    let (status, key) = harness
        .call(
            "POST",
            &format!("/api/v1/admin/publishers/{publisher}/keys"),
            ADMIN_KEY,
            Some(json!({"role": "admin"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key}");
    key["key"].as_str().unwrap().to_string()
}

async fn ui(harness: &Harness, key: &str, form: Option<&str>) -> (StatusCode, String) {
    let method = if form.is_some() { "POST" } else { "GET" };
    let answer = super::send(harness, method, "/ui/policy", key, form).await;
    (answer.status, answer.body)
}

#[tokio::test]
async fn admins_edit_the_policy_everyone_reads_it_per_tenant() {
    let harness = Harness::new().await;
    let (status, view) = harness
        .call("GET", "/api/v1/policy", &harness.key_a, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["policy"], json!({}));
    assert_eq!(view["effective"]["news"]["min_copied_chars"], 300);
    assert_eq!(view["defaults"]["min_chapter_coverage"], 0.5);

    let news = json!({"news": {"min_copied_chars": 150}});
    let (status, body) = harness
        .call("PUT", "/api/v1/policy", &harness.key_a, Some(news.clone()))
        .await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden", "admin");

    let admin_a = admin_key_of(&harness, "pub_a").await;
    let (status, view) = harness
        .call("PUT", "/api/v1/policy", &admin_a, Some(news))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["effective"]["news"]["min_copied_chars"], 150);
    assert_eq!(view["effective"]["novel"]["min_copied_chars"], 300);
    let (_, view) = harness
        .call("GET", "/api/v1/policy", &harness.key_a, None)
        .await;
    assert_eq!(view["policy"], json!({"news": {"min_copied_chars": 150}}));

    for bad in [
        json!({"news": {"min_copied_chars": 10}}),
        json!({"novel": {"min_chapter_coverage": 1.5}}),
        json!({"novel": {"min_chapter_coverage": 0}}),
        json!({"novel": {"min_copied_chars": -1}}),
        json!({"poetry": {}}),
        json!({"novel": [null, null]}),
        json!({"novel": null}),
        json!({"novel": {"min_copied_chars": 74.5}}),
        json!([]),
    ] {
        let (status, body) = harness
            .call("PUT", "/api/v1/policy", &admin_a, Some(bad.clone()))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    // An integral float is an integer, as the schema says.
    let (status, view) = harness
        .call(
            "PUT",
            "/api/v1/policy",
            &admin_a,
            Some(json!({"news": {"min_copied_chars": 150.0}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["effective"]["news"]["min_copied_chars"], 150);
    // Nothing of A's policy shows for B, and B's admin changes only B's.
    let (_, view) = harness
        .call("GET", "/api/v1/policy", &harness.key_b, None)
        .await;
    assert_eq!(view["policy"], json!({}));
    let admin_b = admin_key_of(&harness, "pub_b").await;
    let (status, _) = harness
        .call(
            "PUT",
            "/api/v1/policy",
            &admin_b,
            Some(json!({"novel": {"min_copied_chars": 1000}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, view) = harness
        .call("GET", "/api/v1/policy", &harness.key_a, None)
        .await;
    assert_eq!(view["effective"]["novel"]["min_copied_chars"], 300);

    // The UI form: shown read-only to a reviewer, editable by an admin.
    let (status, html) = ui(&harness, &harness.key_a, None).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("admin keys edit the policy"), "{html}");
    assert!(html.contains("150 characters"), "{html}");
    let (status, html) = ui(
        &harness,
        &admin_a,
        Some("novel_min_copied_chars=&novel_min_chapter_coverage=40&news_min_copied_chars=120&news_min_chapter_coverage="),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("id=\"policy-saved\""), "{html}");
    let (_, view) = harness
        .call("GET", "/api/v1/policy", &harness.key_a, None)
        .await;
    assert_eq!(
        view["policy"],
        json!({"novel": {"min_chapter_coverage": 0.4}, "news": {"min_copied_chars": 120}})
    );
    let (status, html) = ui(
        &harness,
        &admin_a,
        Some("novel_min_copied_chars=abc&novel_min_chapter_coverage=&news_min_copied_chars=&news_min_chapter_coverage="),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(html.contains("id=\"policy-error\""), "{html}");
    let (status, _) = ui(&harness, &harness.key_a, Some("news_min_copied_chars=60")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a reviewer cannot save");
}
