//! Site registration refuses what the crawler would refuse, with a 400 naming
//! the field: non-public addresses (unless the deployment allows them),
//! credentials (never echoed), bad patterns, selectors and schedules. The
//! same rules apply to `POST` and `PATCH`.

use axum::http::StatusCode;
use chrono::Utc;
use copyhound_core::ids::SiteId;
use copyhound_core::model::{ExtractionHints, Site};
use copyhound_core::site::SitePolicy;
use serde_json::{Value, json};

use super::{Harness, assert_error};

/// A harness whose server runs with the production address policy.
async fn strict_harness() -> Harness {
    Harness::with_policy(SitePolicy::default()).await
}

async fn create(harness: &Harness, body: Value) -> (StatusCode, Value) {
    harness
        .call("POST", "/api/v1/sites", &harness.key_a, Some(body))
        .await
}

const NON_PUBLIC_SEEDS: [&str; 16] = [
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00::1]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://172.31.255.254/",
    "http://192.168.0.1/",
    "http://0.0.0.0/",
    "http://[::1]:8001/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://2130706433/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://127.0.0.1:8001/",
    "http://localhost:8001/",
];

#[tokio::test]
async fn non_public_addresses_are_refused_at_registration() {
    let harness = strict_harness().await;
    for seed in NON_PUBLIC_SEEDS {
        let (status, body) = create(
            &harness,
            json!({"name": "x", "seeds": ["https://www.example.com/", seed]}),
        )
        .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "`seeds[1]`",
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("not a public address"),
            "{seed}: {message}"
        );
    }
    let (status, body) = create(
        &harness,
        json!({"name": "x", "seeds": ["https://www.example.com/"]}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn private_addresses_are_accepted_when_the_deployment_allows_them() {
    let harness = Harness::new().await;
    for seed in NON_PUBLIC_SEEDS {
        let (status, body) = create(&harness, json!({"name": "x", "seeds": [seed]})).await;
        assert_eq!(status, StatusCode::CREATED, "{seed}: {body}");
    }
}

#[tokio::test]
async fn credentials_are_refused_and_never_echoed() {
    let harness = strict_harness().await;
    let site_id = {
        let (status, body) = create(
            &harness,
            json!({"name": "x", "seeds": ["https://www.example.com/"]}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    };
    for seed in [
        "http://admin:hunter2@www.example.com/",
        "https://admin:hunter2@www.example.com:8443/book/",
        "http:admin:hunter2@www.example.com/",
        "http://hunter2@www.example.com/",
    ] {
        let (status, body) = create(&harness, json!({"name": "x", "seeds": [seed]})).await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "credentials",
        );
        assert!(!body.to_string().contains("hunter2"), "{body}");
        let (status, body) = harness
            .call(
                "PATCH",
                &format!("/api/v1/sites/{site_id}"),
                &harness.key_a,
                Some(json!({"seeds": [seed]})),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "`seeds[0]`",
        );
        assert!(!body.to_string().contains("hunter2"), "{body}");
    }
    let (_, stored) = harness
        .call(
            "GET",
            &format!("/api/v1/sites/{site_id}"),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(stored["seeds"], json!(["https://www.example.com/"]));
}

#[tokio::test]
async fn patterns_selectors_and_schedules_are_validated() {
    let harness = strict_harness().await;
    let seed = "https://www.example.com/";
    for (extra, field) in [
        (
            json!({"allow_patterns": ["re:(unclosed"]}),
            "`allow_patterns[0]`",
        ),
        (
            json!({"deny_patterns": ["*.jpg", "re:a)"]}),
            "`deny_patterns[1]`",
        ),
        (
            json!({"allow_patterns": ["re:(a{1000}){1000}"]}),
            "`allow_patterns[0]`",
        ),
        (json!({"deny_patterns": [""]}), "`deny_patterns[0]`"),
        (
            json!({"extraction": {"content_selector": "div[", "next_page_selector": null}}),
            "`extraction.content_selector`",
        ),
        (
            json!({"extraction": {"content_selector": null, "next_page_selector": "a::::b"}}),
            "`extraction.next_page_selector`",
        ),
        (json!({"schedule": "0 3 30 2 *"}), "never fires"),
        (json!({"schedule": "0 0 31 6 *"}), "never fires"),
        (json!({"schedule": "not a cron"}), "`schedule`"),
        (
            json!({"rate_limit_per_second": -1.0}),
            "`rate_limit_per_second`",
        ),
        (json!({"max_depth": 1000}), "`max_depth`"),
    ] {
        let mut body = json!({"name": "x", "seeds": [seed]});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        let (status, response) = create(&harness, body).await;
        assert_error(
            status,
            &response,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            field,
        );
    }
    let (status, body) = create(
        &harness,
        json!({"name": "x", "seeds": [seed], "schedule": "0 3 29 2 *",
               "allow_patterns": ["https://www.example.com/book/*", "re:^https://m\\.example\\.com/"],
               "extraction": {"content_selector": "div#content > p", "next_page_selector": "a.next"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn a_site_stored_before_the_rules_can_still_be_disabled() {
    let harness = strict_harness().await;
    let legacy = Site {
        id: SiteId::generate(),
        publisher_id: harness.publisher_a.clone(),
        name: "legacy".into(),
        seeds: vec!["http://169.254.169.254/".into()],
        allow_patterns: Vec::new(),
        deny_patterns: Vec::new(),
        max_depth: 3,
        max_pages_per_run: 10,
        schedule: None,
        rate_limit_per_second: 1.0,
        concurrency: 1,
        charset_override: None,
        extraction: ExtractionHints::default(),
        enabled: true,
        created_at: Utc::now(),
        audience: None,
        search_url: None,
    };
    harness.state.ports.sites.put_site(&legacy).await.unwrap();
    let path = format!("/api/v1/sites/{}", legacy.id);
    let (status, body) = harness
        .call(
            "PATCH",
            &path,
            &harness.key_a,
            Some(json!({"name": "renamed"})),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "`seeds[0]`",
    );
    let (status, body) = harness
        .call(
            "PATCH",
            &path,
            &harness.key_a,
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["enabled"], false);
    let (status, body) = harness
        .call(
            "PATCH",
            &path,
            &harness.key_a,
            Some(json!({"enabled": true})),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "`seeds[0]`",
    );
}
