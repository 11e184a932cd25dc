//! Suggested sites through the API: listed by status, accepted (a watched site
//! with its first crawl queued) or dismissed by admin keys only, fed by
//! book-source files; bad ids and bodies answer 400.

use axum::http::StatusCode;
use copyhound_core::model::TaskKind;
use serde_json::json;

use super::{Harness, assert_error};

const SOURCES: &str = r#"[
  {"bookSourceName": "书屋", "bookSourceUrl": "http://127.0.0.1:9/#镜像",
   "searchUrl": "/s.php?q={{key}}"},
  {"bookSourceName": "另一家", "bookSourceUrl": "https://other.example"},
  {"bookSourceName": "坏的", "bookSourceUrl": "ftp://x.example"}
]"#;

#[tokio::test]
async fn book_sources_become_suggestions_an_admin_accepts_or_dismisses() {
    let harness = Harness::new().await;
    let admin = harness
        .admin_key(harness.publisher_a.as_str(), "legal")
        .await;
    let sources: serde_json::Value = serde_json::from_str(SOURCES).unwrap();
    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/suggestions/book-sources",
            &harness.key_a,
            Some(sources.clone()),
        )
        .await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden", "admin");
    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/suggestions/book-sources",
            &admin,
            Some(sources.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body, json!({"new": 2, "updated": 0, "skipped": 1}));
    let checks = harness
        .enqueued()
        .await
        .into_iter()
        .filter(|task| matches!(task.kind, TaskKind::VerifySuggestion { .. }))
        .count();
    assert_eq!(checks, 2, "each new suggestion is queued for its check");
    // The same file again is no news.
    let (_, body) = harness
        .call(
            "POST",
            "/api/v1/suggestions/book-sources",
            &admin,
            Some(sources),
        )
        .await;
    assert_eq!(body["new"], 0, "{body}");

    let (status, listing) = harness
        .call(
            "GET",
            "/api/v1/suggestions?status=pending",
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{listing}");
    let items = listing["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    let mirror = items
        .iter()
        .find(|item| item["origin"] == "http://127.0.0.1:9")
        .unwrap();
    assert_eq!(mirror["search_url"], "http://127.0.0.1:9/s.php?q={{key}}");
    assert_eq!(mirror["reasons"][0]["kind"], "book_source");
    let mirror_id = mirror["id"].as_str().unwrap().to_string();
    let other_id = items
        .iter()
        .find(|item| item["origin"] == "https://other.example")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    let accept = format!("/api/v1/suggestions/{mirror_id}/accept");
    let (status, body) = harness.call("POST", &accept, &harness.key_a, None).await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden", "admin");
    let (status, accepted) = harness.call("POST", &accept, &admin, None).await;
    assert_eq!(status, StatusCode::OK, "{accepted}");
    assert_eq!(accepted["suggestion"]["status"], "accepted");
    assert_eq!(accepted["site"]["seeds"], json!(["http://127.0.0.1:9/"]));
    let site_id = accepted["site"]["id"].as_str().unwrap().to_string();
    let (status, runs) = harness
        .call(
            "GET",
            &format!("/api/v1/sites/{site_id}/crawls"),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        runs["items"].as_array().unwrap().len(),
        1,
        "first crawl queued"
    );
    let (_, again) = harness.call("POST", &accept, &admin, None).await;
    assert_eq!(
        again["site"]["id"],
        site_id.as_str(),
        "accepting twice is one site"
    );
    let (status, body) = harness
        .call(
            "POST",
            &format!("/api/v1/suggestions/{mirror_id}/dismiss"),
            &admin,
            None,
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::CONFLICT,
        "conflict",
        "delete the site",
    );

    let (status, dismissed) = harness
        .call(
            "POST",
            &format!("/api/v1/suggestions/{other_id}/dismiss"),
            &admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{dismissed}");
    assert_eq!(dismissed["status"], "dismissed");
    let (_, pending) = harness
        .call(
            "GET",
            "/api/v1/suggestions?status=pending",
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(pending["items"], json!([]));
}

#[tokio::test]
async fn bad_suggestion_ids_queries_and_files_answer_400() {
    let harness = Harness::new().await;
    let admin = harness
        .admin_key(harness.publisher_a.as_str(), "legal")
        .await;
    for path in [
        "/api/v1/suggestions/sg_XYZ",
        "/api/v1/suggestions/site_1",
        "/api/v1/suggestions/sg_0123456789abcdef0123456",
    ] {
        let (status, body) = harness.call("GET", path, &harness.key_a, None).await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "suggestion_id",
        );
    }
    let (status, body) = harness
        .call(
            "GET",
            "/api/v1/suggestions/sg_0123456789abcdef01234567",
            &harness.key_a,
            None,
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::NOT_FOUND,
        "not_found",
        "not found",
    );
    let (status, body) = harness
        .call(
            "GET",
            "/api/v1/suggestions?status=maybe",
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/suggestions/book-sources",
            &admin,
            Some(json!("not an array")),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // Every source names its site; other fields are read as reader apps write them.
    for bad in [
        json!([{"bookSourceName": "no url"}]),
        json!([{"bookSourceUrl": 7}]),
        json!([{"bookSourceUrl": "http://a.example", "searchUrl": ["x"]}]),
        json!({"bookSourceUrl": "http://a.example"}),
    ] {
        let (status, body) = harness
            .call(
                "POST",
                "/api/v1/suggestions/book-sources",
                &admin,
                Some(bad.clone()),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/suggestions/book-sources",
            &admin,
            Some(json!([{"bookSourceUrl": "http://a.example", "ruleSearch": {"x": 1}, "enabled": true}])),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn the_console_lists_suggestions_by_what_they_carry_and_admins_decide() {
    use copyhound_core::model::{
        ReasonKind, SiteSuggestion, SuggestionReason, SuggestionStatus, Verification,
    };

    use super::send;
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_console").await;
    let site = harness.create_site_a().await;
    let reason = |detail: &str| SuggestionReason {
        kind: ReasonKind::Link,
        from: "http://127.0.0.1:8001/".into(),
        site_id: Some(site.clone()),
        detail: detail.into(),
        at: chrono::Utc::now(),
    };
    let mut carrying = SiteSuggestion::new(
        harness.publisher_a.clone(),
        "http://mirror.example".into(),
        reason("友情链接 书屋"),
    );
    carrying.status = SuggestionStatus::Verified;
    carrying.verification = Some(Verification {
        at: chrono::Utc::now(),
        url: "http://mirror.example/".into(),
        status: Some(200),
        error: None,
        title: Some("书屋 最新章节".into()),
        han_chars: 812,
        carries: vec![work.clone()],
    });
    let plain = SiteSuggestion::new(
        harness.publisher_a.clone(),
        "http://portal.example".into(),
        reason("门户"),
    );
    for suggestion in [&plain, &carrying] {
        harness
            .state
            .ports
            .sites
            .put_suggestion(suggestion)
            .await
            .unwrap();
    }
    let page = send(&harness, "GET", "/ui/suggestions", &harness.key_a, None).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let first = page.body.find("mirror.example").unwrap();
    let second = page.body.find("portal.example").unwrap();
    assert!(
        first < second,
        "what names the publisher's works comes first"
    );
    assert!(page.body.contains("names your works"), "{}", page.body);
    assert!(
        !page.body.contains("/accept"),
        "a reviewer key sees no actions"
    );
    let refused = send(
        &harness,
        "POST",
        &format!("/ui/suggestions/{}/accept", carrying.id),
        &harness.key_a,
        Some(""),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    let admin = harness
        .admin_key(harness.publisher_a.as_str(), "legal")
        .await;
    let page = send(&harness, "GET", "/ui/suggestions", &admin, None).await;
    assert!(
        page.body
            .contains(&format!("/ui/suggestions/{}/accept", carrying.id))
    );
    let accepted = send(
        &harness,
        "POST",
        &format!("/ui/suggestions/{}/accept", carrying.id),
        &admin,
        Some(""),
    )
    .await;
    assert_eq!(accepted.status, StatusCode::SEE_OTHER, "{}", accepted.body);
    assert!(accepted.location.unwrap().starts_with("/ui/sites/site_"));
    let dismissed = send(
        &harness,
        "POST",
        &format!("/ui/suggestions/{}/dismiss", plain.id),
        &admin,
        Some(""),
    )
    .await;
    assert_eq!(dismissed.status, StatusCode::SEE_OTHER);
    let open = send(&harness, "GET", "/ui/suggestions", &admin, None).await;
    assert!(open.body.contains("id=\"no-suggestions\""), "{}", open.body);
    let done = send(
        &harness,
        "GET",
        "/ui/suggestions?status=accepted",
        &admin,
        None,
    )
    .await;
    assert!(done.body.contains("mirror.example") && done.body.contains("watched site"));
}
