//! A work's release timetable: set and cleared by its publisher, refused when
//! malformed or faster than hourly, invisible to other tenants; each setting
//! queues the burst of its next slot, and adding chapters is a release too.

use axum::http::StatusCode;
use copyhound_core::model::TaskKind;
use serde_json::json;

use super::{Harness, assert_error};

fn bursts(tasks: &[copyhound_core::model::Task]) -> Vec<(u32, chrono::DateTime<chrono::Utc>)> {
    tasks
        .iter()
        .filter_map(|task| match &task.kind {
            TaskKind::RevisitWatch { step, due, .. } => Some((*step, *due)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_timetable_queues_its_next_release_and_bad_ones_are_refused() {
    let harness = Harness::new().await;
    let work_id = harness.register_work_a("w_timed").await;
    let path = format!("/api/v1/works/{work_id}/release-schedule");
    let (status, view) = harness.call("GET", &path, &harness.key_a, None).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["cron"], serde_json::Value::Null);
    assert_eq!(view["next_release"], serde_json::Value::Null);

    let before = bursts(&harness.enqueued().await).len();
    let (status, view) = harness
        .call(
            "PUT",
            &path,
            &harness.key_a,
            Some(json!({"cron": "0 8 * * *"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["cron"], "0 8 * * *");
    let next: chrono::DateTime<chrono::Utc> =
        view["next_release"].as_str().unwrap().parse().unwrap();
    assert_eq!(next.format("%H:%M").to_string(), "08:00");
    let queued = bursts(&harness.enqueued().await);
    assert_eq!(queued.len(), before + 1, "{queued:?}");
    assert!(
        queued.contains(&(0, next)),
        "the next slot's burst: {queued:?}"
    );

    for bad in [
        json!({"cron": "* * * * *"}),
        json!({"cron": "*/10 * * * *"}),
        json!({"cron": "not a cron"}),
        json!({"cron": "0 8 31 2 *"}),
        json!({"cron": "x".repeat(201)}),
        json!({"when": "0 8 * * *"}),
        json!({"cron": 8}),
        json!({"cron": ""}),
        json!({"cron": "0 8 * * * *"}),
    ] {
        let (status, body) = harness
            .call("PUT", &path, &harness.key_a, Some(bad.clone()))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    // Unchanged by the refusals; another tenant sees no such work.
    let (_, view) = harness.call("GET", &path, &harness.key_a, None).await;
    assert_eq!(view["cron"], "0 8 * * *");
    let (status, body) = harness.call("GET", &path, &harness.key_b, None).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found", "w_timed");

    let (status, view) = harness
        .call("PUT", &path, &harness.key_a, Some(json!({"cron": null})))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["cron"], serde_json::Value::Null);
}

#[tokio::test]
async fn adding_chapters_is_a_release_and_registering_the_same_ones_is_not() {
    let harness = Harness::new().await;
    let work_id = harness.register_work_a("w_grows").await;
    assert!(bursts(&harness.enqueued().await).is_empty());
    let (status, work) = harness
        .call(
            "GET",
            &format!("/api/v1/works/{work_id}"),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut chapters: Vec<serde_json::Value> = Vec::new();
    for chapter in work["chapters"].as_array().unwrap() {
        let id = chapter["id"].as_str().unwrap();
        let (_, full) = harness
            .call(
                "GET",
                &format!("/api/v1/works/{work_id}/chapters/{id}"),
                &harness.key_a,
                None,
            )
            .await;
        chapters.push(json!({"id": id, "title": full["title"], "text": full["text"]}));
    }
    let body = |chapters: &[serde_json::Value]| {
        json!({"title": work["title"], "author": work["author"], "kind": work["kind"],
               "language": work["language"], "chapters": chapters})
    };
    let (status, view) = harness
        .call(
            "PUT",
            &format!("/api/v1/works/{work_id}"),
            &harness.key_a,
            Some(body(&chapters)),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert!(
        bursts(&harness.enqueued().await).is_empty(),
        "no new chapter, no release"
    );

    chapters.push(
        json!({"id": "c_new", "title": "新的一章", "text": "这是新发布的一章，内容与前文不同。"}),
    );
    let (status, view) = harness
        .call(
            "PUT",
            &format!("/api/v1/works/{work_id}"),
            &harness.key_a,
            Some(body(&chapters)),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(
        bursts(&harness.enqueued().await).len(),
        1,
        "a release starts a burst"
    );
    assert!(view["released_at"].is_string(), "{view}");
}
