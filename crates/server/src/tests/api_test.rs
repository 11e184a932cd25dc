use axum::http::StatusCode;
use copyhound_core::model::TaskKind;
use serde_json::json;

use super::{ADMIN_KEY, Harness, assert_error};

#[tokio::test]
async fn authentication_errors_are_401_or_403_with_the_reason() {
    for harness in Harness::each().await {
        let (status, body) = harness.call("GET", "/api/v1/works", "", None).await;
        assert_error(
            status,
            &body,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing `Authorization",
        );
        let (status, body) = harness.call("GET", "/api/v1/works", "nonsense", None).await;
        assert_error(
            status,
            &body,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "malformed api key",
        );
        let mut forged = harness.key_a.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == '0' { '1' } else { '0' });
        let (status, body) = harness.call("GET", "/api/v1/works", &forged, None).await;
        assert_error(
            status,
            &body,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "invalid or revoked",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/admin/publishers", &harness.key_a, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::FORBIDDEN,
            "forbidden",
            "admin key",
        );
        let (status, body) = harness.call("GET", "/api/v1/works", ADMIN_KEY, None).await;
        assert_error(
            status,
            &body,
            StatusCode::FORBIDDEN,
            "forbidden",
            "acts for no publisher",
        );
        let (status, me) = harness
            .call("GET", "/api/v1/me", &harness.key_a, None)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(me["publisher_id"], "pub_a");
        assert_eq!(me["role"], "publisher");
        let key_id = me["key_id"].as_str().unwrap().to_string();
        let (status, _) = harness
            .call(
                "DELETE",
                &format!("/api/v1/admin/keys/{key_id}"),
                ADMIN_KEY,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (status, body) = harness
            .call("GET", "/api/v1/works", &harness.key_a, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "invalid or revoked",
        );
    }
}

#[tokio::test]
async fn bad_input_is_a_clear_400() {
    for harness in Harness::each().await {
        let key = &harness.key_a;
        let (status, body) = harness
            .send(
                "POST",
                "/api/v1/works",
                key,
                "application/json",
                Some(b"{not json".to_vec()),
            )
            .await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid_input", "");
        let (status, body) = harness
            .call(
                "POST",
                "/api/v1/works",
                key,
                Some(json!({"title": "t", "colour": "red"})),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "unknown field `colour`",
        );
        let (status, body) = harness
            .send(
                "POST",
                "/api/v1/works",
                key,
                "text/plain",
                Some(b"{}".to_vec()),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "Content-Type: application/json",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/works/bad%20id", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "`work_id`",
        );
        let long = "w".repeat(300);
        let (status, body) = harness
            .call("GET", &format!("/api/v1/works/{long}"), key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "longer than",
        );
        let (status, body) = harness
            .call(
                "GET",
                "/api/v1/matches?limit=99999999999999999999999",
                key,
                None,
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "limit",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/matches?limit=0", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "at least 1",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/matches?limit=1000000", key, None)
            .await;
        assert_eq!(status, StatusCode::OK, "huge limits are capped: {body}");
        let (status, body) = harness
            .call("GET", "/api/v1/matches?after=garbage", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "`after`",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/matches?page=2", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "unknown field `page`",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/matches?status=bogus", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "unknown status `bogus`",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/matches?min_score=3", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "min_score",
        );
        let (status, body) = harness
            .call("GET", "/api/v1/matches?since=yesterday", key, None)
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "`since`",
        );
        let (status, body) = harness.call("GET", "/api/v1/nothing-here", key, None).await;
        assert_error(
            status,
            &body,
            StatusCode::NOT_FOUND,
            "not_found",
            "no route GET /api/v1/nothing-here",
        );
        let (status, body) = harness.call("PATCH", "/api/v1/works", key, None).await;
        assert_error(
            status,
            &body,
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "not allowed",
        );
    }
}

#[tokio::test]
async fn sites_validate_and_crawls_are_enqueued() {
    for harness in Harness::each().await {
        let key = &harness.key_a;
        for (body, fragment) in [
            (json!({"name": "x", "seeds": ["ftp://a/"]}), "http(s)"),
            (json!({"name": "x", "seeds": []}), "at least one"),
            (
                json!({"name": "x", "seeds": ["http://a/"], "schedule": "every day"}),
                "cron",
            ),
            (
                json!({"name": "x", "seeds": ["http://a/"], "concurrency": 0}),
                "concurrency",
            ),
            (
                json!({"name": "x", "seeds": ["http://a/"], "charset_override": "klingon"}),
                "charset",
            ),
        ] {
            let (status, response) = harness.call("POST", "/api/v1/sites", key, Some(body)).await;
            assert_error(
                status,
                &response,
                StatusCode::BAD_REQUEST,
                "invalid_input",
                fragment,
            );
        }
        let site_id = harness.create_site_a().await;
        let (status, run) = harness
            .call(
                "POST",
                &format!("/api/v1/sites/{site_id}/crawls"),
                key,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{run}");
        assert_eq!(run["status"], "queued");
        let run_id = run["id"].as_str().unwrap();
        let tasks = harness.enqueued().await;
        assert!(
            matches!(&tasks[0].kind, TaskKind::CrawlSite { run_id: queued, .. } if queued.as_str() == run_id)
        );
        let (status, fetched) = harness
            .call("GET", &format!("/api/v1/crawls/{run_id}"), key, None)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(fetched["counters"]["fetched"], 0);
        // One run per site at a time.
        let (status, body) = harness
            .call(
                "POST",
                &format!("/api/v1/sites/{site_id}/crawls"),
                key,
                None,
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::CONFLICT,
            "conflict",
            "crawl queued",
        );
        assert_eq!(
            harness.enqueued().await.len(),
            tasks.len(),
            "nothing more queued"
        );
        let (status, site) = harness
            .call(
                "PATCH",
                &format!("/api/v1/sites/{site_id}"),
                key,
                Some(json!({"enabled": false, "schedule": null})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{site}");
        assert_eq!(site["enabled"], false);
        assert_eq!(site["schedule"], json!(null));
        let (status, body) = harness
            .call(
                "POST",
                &format!("/api/v1/sites/{site_id}/crawls"),
                key,
                None,
            )
            .await;
        assert_error(status, &body, StatusCode::CONFLICT, "conflict", "disabled");
        let (status, runs) = harness
            .call("GET", &format!("/api/v1/sites/{site_id}/crawls"), key, None)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(runs["items"].as_array().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn matches_filter_paginate_show_evidence_and_keep_an_audit_trail() {
    for harness in Harness::each().await {
        let key = &harness.key_a;
        let work_id = harness.register_work_a("w1").await;
        let site_id = harness.create_site_a().await;
        let mut ids = Vec::new();
        for number in 0..5 {
            ids.push(
                harness
                    .insert_match(
                        &work_id,
                        &site_id,
                        &format!("http://pirate.example/{number}.html"),
                        0.5 + number as f32 / 10.0,
                        number,
                    )
                    .await,
            );
        }
        let (status, page) = harness
            .call("GET", "/api/v1/matches?limit=2", key, None)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(page["items"].as_array().unwrap().len(), 2);
        assert_eq!(page["items"][0]["id"], ids[0].as_str(), "newest first");
        let next = page["next"].as_str().unwrap();
        let (_, second) = harness
            .call(
                "GET",
                &format!("/api/v1/matches?limit=2&after={next}"),
                key,
                None,
            )
            .await;
        assert_eq!(second["items"][0]["id"], ids[2].as_str());
        let (_, filtered) = harness
            .call(
                "GET",
                &format!("/api/v1/matches?min_score=0.75&work_id={work_id}&site_id={site_id}"),
                key,
                None,
            )
            .await;
        assert_eq!(filtered["items"].as_array().unwrap().len(), 2);
        let since = (chrono::Utc::now() - chrono::Duration::hours(36)).format("%Y-%m-%dT%H:%M:%SZ");
        let (_, recent) = harness
            .call("GET", &format!("/api/v1/matches?since={since}"), key, None)
            .await;
        assert_eq!(recent["items"].as_array().unwrap().len(), 2);

        let (status, detail) = harness
            .call("GET", &format!("/api/v1/matches/{}", ids[0]), key, None)
            .await;
        assert_eq!(status, StatusCode::OK, "{detail}");
        assert_eq!(detail["work_title"], "风起青萍");
        assert_eq!(
            detail["chapter_segments"][0],
            json!({"text": "天色已晚，林中起了大风。\n少年背着柴往回走。", "copied": true})
        );
        assert_eq!(detail["page_segments"][1]["copied"], true);
        assert_eq!(detail["page_segments"][0]["text"], "广告：免费小说\n");

        let review = json!({"action": "confirm", "note": "整章复制"});
        let (status, reviewed) = harness
            .call(
                "POST",
                &format!("/api/v1/matches/{}/review", ids[0]),
                key,
                Some(review),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{reviewed}");
        assert_eq!(reviewed["status"], "confirmed");
        assert_eq!(reviewed["reviews"][0]["note"], "整章复制");
        assert!(
            reviewed["reviews"][0]["by"]
                .as_str()
                .unwrap()
                .starts_with("key_")
        );
        let (_, dismissed) = harness
            .call(
                "POST",
                &format!("/api/v1/matches/{}/review", ids[1]),
                key,
                Some(json!({"action": "mark_licensed"})),
            )
            .await;
        assert_eq!(dismissed["status"], "licensed");
        let (_, confirmed) = harness
            .call(
                "GET",
                "/api/v1/matches?status=confirmed,licensed",
                key,
                None,
            )
            .await;
        assert_eq!(confirmed["items"].as_array().unwrap().len(), 2);
        let (status, body) = harness
            .call(
                "POST",
                &format!("/api/v1/matches/{}/review", ids[0]),
                key,
                Some(json!({"action": "approve"})),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "unknown variant `approve`",
        );
    }
}

#[tokio::test]
async fn reports_are_queued() {
    for harness in Harness::each().await {
        let (status, report) = harness
            .call(
                "POST",
                "/api/v1/reports",
                &harness.key_a,
                Some(json!({"format": "html"})),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
        let id = report["id"].as_str().unwrap();
        let (status, body) = harness
            .call(
                "GET",
                &format!("/api/v1/reports/{id}/artifact"),
                &harness.key_a,
                None,
            )
            .await;
        assert_error(status, &body, StatusCode::CONFLICT, "conflict", "not ready");
        assert!(matches!(
            harness.enqueued().await[0].kind,
            TaskKind::GenerateReport { .. }
        ));
    }
}

/// A publisher has at most `MAX_QUEUED_REPORTS` waiting; the next is refused
/// until one is rendered, and another tenant is not held back.
#[tokio::test]
async fn queued_reports_are_capped_per_publisher() {
    let harness = Harness::new().await;
    let limit = crate::api::reports::MAX_QUEUED_REPORTS;
    for _ in 0..limit {
        let (status, report) = harness
            .call(
                "POST",
                "/api/v1/reports",
                &harness.key_a,
                Some(json!({"format": "csv"})),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    }
    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/reports",
            &harness.key_a,
            Some(json!({"format": "csv"})),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::CONFLICT,
        "conflict",
        "reports are queued",
    );
    assert_eq!(harness.enqueued().await.len(), limit, "nothing more queued");
    let (status, _) = harness
        .call(
            "POST",
            "/api/v1/reports",
            &harness.key_b,
            Some(json!({"format": "csv"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "the other tenant");
    harness.render_queued_reports().await;
    let (status, report) = harness
        .call(
            "POST",
            "/api/v1/reports",
            &harness.key_a,
            Some(json!({"format": "csv"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
}

#[tokio::test]
async fn a_matchs_evidence_package_is_a_warc_and_a_manifest_that_describes_it() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_ev").await;
    let site = harness.create_site_a().await;
    let found = harness
        .insert_match(&work, &site, "http://127.0.0.1:8001/c/1.html", 0.9, 1)
        .await;
    let path = format!("/api/v1/matches/{found}/evidence");
    let (status, warc) = harness.call("GET", &path, &harness.key_a, None).await;
    assert_eq!(status, StatusCode::OK);
    let warc = warc.as_str().unwrap().to_owned();
    assert!(
        warc.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
        "{warc}"
    );
    assert!(warc.contains("WARC-Target-URI: http://127.0.0.1:8001/c/1.html\r\n"));
    assert!(warc.contains("天色已晚，林中起了大风。"));
    let (status, manifest) = harness
        .call(
            "GET",
            &format!("{path}?part=manifest"),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // Dated by the capture, so the manifest describes the very file served.
    assert_eq!(
        manifest["warc_sha256"],
        copyhound_core::ids::sha256_hex(warc.as_bytes())
    );
    assert_eq!(
        manifest["captures"][0]["matches"][0]["match_id"],
        found.to_string()
    );
    assert_eq!(manifest["captures"][0]["headers"], "reconstructed");
    let (status, body) = harness
        .call("GET", &format!("{path}?part=zip"), &harness.key_a, None)
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "part",
    );
}

#[tokio::test]
async fn a_report_in_warc_format_is_the_evidence_package_of_its_matches() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_rw").await;
    let site = harness.create_site_a().await;
    for n in 0..2 {
        harness
            .insert_match(
                &work,
                &site,
                &format!("http://127.0.0.1:8001/c/{n}.html"),
                0.9,
                1,
            )
            .await;
    }
    let (status, report) = harness
        .call(
            "POST",
            "/api/v1/reports",
            &harness.key_a,
            Some(json!({"format": "warc"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let id = report["id"].as_str().unwrap();
    harness.render_queued_reports().await;
    let (status, warc) = harness
        .call(
            "GET",
            &format!("/api/v1/reports/{id}/artifact"),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let warc = warc.as_str().unwrap();
    assert!(
        warc.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
        "{warc}"
    );
    assert_eq!(warc.matches("WARC-Type: response\r\n").count(), 2, "{warc}");
    for n in 0..2 {
        assert!(warc.contains(&format!(
            "WARC-Target-URI: http://127.0.0.1:8001/c/{n}.html\r\n"
        )));
    }
}

/// A queue that is down: every call answers `Unavailable`.
#[derive(Debug)]
struct DownQueue;

#[async_trait::async_trait]
impl copyhound_core::ports::TaskQueue for DownQueue {
    async fn check_connectivity(&self) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn enqueue(&self, _: Vec<copyhound_core::model::Task>) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn receive(
        &self,
        _: usize,
        _: std::time::Duration,
    ) -> copyhound_core::Result<Vec<copyhound_core::ports::ReceivedTask>> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn acknowledge(&self, _: &[copyhound_core::ports::AckId]) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn fail(&self, _: &copyhound_core::ports::AckId, _: &str) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn extend(
        &self,
        _: &copyhound_core::ports::AckId,
        _: std::time::Duration,
    ) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn defer(
        &self,
        _: &copyhound_core::ports::AckId,
        _: std::time::Duration,
    ) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn acquire_slot(
        &self,
        _: &str,
        _: &str,
        _: u32,
        _: std::time::Duration,
    ) -> copyhound_core::Result<bool> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn release_slot(&self, _: &str, _: &str) -> copyhound_core::Result<()> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn reserve_turn(
        &self,
        _: &str,
        _: std::time::Duration,
    ) -> copyhound_core::Result<std::time::Duration> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn stats(&self) -> copyhound_core::Result<copyhound_core::ports::QueueStats> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn dead_letters(
        &self,
        _: usize,
    ) -> copyhound_core::Result<Vec<copyhound_core::ports::DeadTask>> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
    async fn retry_dead(&self, _: usize) -> copyhound_core::Result<u64> {
        Err(copyhound_core::Error::unavailable("the queue is down"))
    }
}

/// A crawl the queue refused leaves no run that no task will ever execute
/// (the task is queued before its run is recorded), and the next request can
/// start one.
#[tokio::test]
async fn a_crawl_the_queue_refused_leaves_no_queued_run() {
    let harness = Harness::new().await;
    let site_id = harness.create_site_a().await;
    let mut state = harness.state.clone();
    state.ports.queue = std::sync::Arc::new(DownQueue);
    let site = state.ports.sites.get_site(&site_id).await.unwrap();
    let error = crate::api::sites::enqueue_crawl(&state, &site)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), copyhound_core::ErrorKind::Unavailable);
    let runs = state
        .ports
        .sites
        .list_crawl_runs(
            &site_id,
            &copyhound_core::ports::PageRequest {
                after: None,
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert!(runs.items.is_empty(), "{:?}", runs.items);
    // With the queue back, the site is not blocked by the run that never ran.
    crate::api::sites::enqueue_crawl(&harness.state, &site)
        .await
        .unwrap();
}
