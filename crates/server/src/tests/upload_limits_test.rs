//! Hostile uploads through the real router: DOM bombs are refused while
//! `/health` stays fast, damaged UTF-8 decodes as UTF-8, and oversized
//! metadata fields are refused by name.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::json;

use super::{Harness, assert_error};

/// Returns how long `/health` takes, asked from a task on the runtime's workers
/// as a server connection is (the test body itself runs outside the workers).
async fn health_latency(harness: &Arc<Harness>) -> Duration {
    let harness = harness.clone();
    let started = Instant::now();
    let (status, body) =
        tokio::spawn(async move { harness.call("GET", "/health", "", None).await })
            .await
            .unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dom_bomb_uploads_are_refused_while_health_stays_fast() {
    let harness = Arc::new(Harness::new().await);
    let mut idle = Vec::new();
    for _ in 0..9 {
        idle.push(health_latency(&harness).await);
    }
    idle.sort();
    let idle_median = idle[idle.len() / 2];
    // Two million `<b>a</b>`: 16 MB of markup in a 30 KB upload.
    let bomb = copyhound_intake::formats::dom_bomb_epub_for_test(2_000_000);
    let uploads: Vec<_> = (0..2)
        .map(|_| {
            let harness = harness.clone();
            let bomb = bomb.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                let answer = harness
                    .send(
                        "POST",
                        "/api/v1/works/import/epub",
                        &harness.key_a,
                        "application/epub+zip",
                        Some(bomb),
                    )
                    .await;
                (answer, started.elapsed())
            })
        })
        .collect();
    let mut worst = Duration::ZERO;
    let mut probes = 0;
    while probes < 5 || !uploads.iter().all(|upload| upload.is_finished()) {
        worst = worst.max(health_latency(&harness).await);
        probes += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut answers = Vec::new();
    for upload in uploads {
        answers.push(upload.await.unwrap());
    }
    let bound = (idle_median * 200).max(Duration::from_millis(250));
    eprintln!(
        "health: idle median {idle_median:?}, worst {worst:?} during two bomb uploads ({probes} probes, ratio {:.0}); uploads answered in {:?}",
        worst.as_secs_f64() / idle_median.as_secs_f64().max(1e-9),
        answers
            .iter()
            .map(|(_, elapsed)| *elapsed)
            .collect::<Vec<_>>()
    );
    assert!(
        worst < bound,
        "/health took {worst:?} during bomb uploads (idle {idle_median:?}, bound {bound:?})"
    );
    for ((status, body), elapsed) in answers {
        assert_error(
            status,
            &body,
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "elements",
        );
        assert!(
            elapsed < Duration::from_secs(5),
            "bomb refused in {elapsed:?}"
        );
    }
}

#[tokio::test]
async fn utf8_with_a_bad_byte_decodes_as_utf8_with_a_warning() {
    let harness = Harness::new().await;
    let text = "第一章 风起\n　　天色已晚，林中起了大风。少年背着柴往回走。\n第二章 云涌\n　　第二天清晨，村口来了一个陌生人。";
    let mut bytes = text.as_bytes().to_vec();
    // One stray byte in the first chapter and a truncated sequence at the end.
    let at = text.find("林中").unwrap();
    bytes.insert(at, 0xff);
    bytes.extend_from_slice(&[0xe4, 0xb8]);
    let (status, preview) = harness
        .send(
            "POST",
            "/api/v1/works/preview/txt",
            &harness.key_a,
            "text/plain",
            Some(bytes),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["encoding"], "UTF-8", "{preview}");
    assert_eq!(preview["chapters"][0]["title"], "第一章 风起");
    assert_eq!(preview["chapters"][1]["title"], "第二章 云涌");
    assert!(
        preview["chapters"][0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("天色已晚，\u{fffd}林中起了大风"),
        "{preview}"
    );
    let warnings = preview["warnings"].to_string();
    assert!(
        warnings.contains("UTF-8 with 3 invalid bytes") && warnings.contains("U+FFFD"),
        "{warnings}"
    );
}

#[tokio::test]
async fn oversized_metadata_fields_are_refused_by_name() {
    let harness = Harness::new().await;
    let chapters = json!([{"title": "第一章", "text": "天色已晚。"}]);
    let long = "佚".repeat(100_000);
    for (field, body) in [
        (
            "`author`",
            json!({"title": "t", "author": long, "chapters": chapters}),
        ),
        (
            "`title`",
            json!({"title": long, "author": "a", "chapters": chapters}),
        ),
        (
            "licensed host",
            json!({"title": "t", "licensed_hosts": [format!("{}.com", "a".repeat(300_000))], "chapters": chapters}),
        ),
        (
            "title",
            json!({"title": "t", "chapters": [{"title": long, "text": "天色已晚。"}]}),
        ),
    ] {
        let (status, answer) = harness
            .call("POST", "/api/v1/works", &harness.key_a, Some(body))
            .await;
        assert_error(
            status,
            &answer,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            field,
        );
    }
    let (status, answer) = harness
        .send(
            "POST",
            &format!(
                "/api/v1/works/import/txt?title=t&author={}",
                "a".repeat(1000)
            ),
            &harness.key_a,
            "text/plain",
            Some("第一章\n天色已晚。".as_bytes().to_vec()),
        )
        .await;
    assert_error(
        status,
        &answer,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "`author`",
    );
}

#[tokio::test]
async fn routes_without_work_text_take_small_bodies_only() {
    let harness = Harness::new().await;
    let padding = "x".repeat(crate::routes::MAX_BODY_BYTES);
    for (method, path) in [
        ("POST", "/api/v1/sites"),
        ("POST", "/api/v1/reports"),
        ("PUT", "/api/v1/works/w1/licensed-hosts"),
        ("POST", "/api/v1/admin/publishers"),
    ] {
        let key = if path.contains("/admin/") {
            super::ADMIN_KEY
        } else {
            harness.key_a.as_str()
        };
        let (status, body) = harness
            .call(method, path, key, Some(json!({ "name": padding })))
            .await;
        assert_error(
            status,
            &body,
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "upload limit",
        );
    }
    // Work text still gets the upload limit (1 MiB in tests).
    let text = "天色已晚，林中起了大风。".repeat(20_000);
    let body = json!({"title": "t", "chapters": [{"title": "第一章", "text": text}]});
    let (status, answer) = harness
        .call("POST", "/api/v1/works", &harness.key_a, Some(body))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
}
