//! `GET /api/v1/matches/{match_id}/evidence/bundle`: unavailable without a
//! TSA; with one (made at test time with `openssl`), a tar archive that
//! verifies offline and names the match.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use copyhound_report::evidence::test_tsa::OpensslTsa;
use copyhound_report::evidence::{BundleMaker, BundleOptions, tar, verify_bundle};
use tower::ServiceExt;

use super::{Harness, assert_error, send};

#[tokio::test]
async fn a_matchs_bundle_verifies_offline_and_needs_a_tsa() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_bundle").await;
    let site = harness.create_site_a().await;
    let found = harness
        .insert_match(&work, &site, "http://127.0.0.1:8001/c/1.html", 0.9, 1)
        .await;
    let path = format!("/api/v1/matches/{found}/evidence/bundle");
    let (status, body) = harness.call("GET", &path, &harness.key_a, None).await;
    assert_error(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "",
    );

    // The console links the bundle only when it can be made.
    let page = format!("/ui/matches/{found}");
    let without = send(&harness, "GET", &page, &harness.key_a, None).await;
    assert_eq!(without.status, StatusCode::OK);
    assert!(
        !without.body.contains("evidence-bundle"),
        "{}",
        without.body
    );

    let dir = tempfile::tempdir().unwrap();
    let Some(tsa) = OpensslTsa::new(dir.path()) else {
        return;
    };
    let maker = BundleMaker {
        options: BundleOptions {
            tsa_certificates: tsa.ca_der(),
            chromium: None,
        },
        tsa: Arc::new(tsa),
    };
    let state = crate::AppState {
        evidence: Some(maker),
        ..harness.state.clone()
    };
    let request = Request::get(&path)
        .header(header::AUTHORIZATION, format!("Bearer {}", harness.key_a))
        .body(Body::empty())
        .unwrap();
    let response = crate::router(state.clone()).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/x-tar"
    );
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    verify_bundle(&bytes, None).unwrap();
    let (entries, _) = tar::read_canonical(&bytes).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(&entries[0].1).unwrap();
    assert_eq!(manifest["subject"]["match_ids"][0], found.to_string());
    // Stored before receive times were kept: the log says so.
    let log = &entries
        .iter()
        .find(|(name, _)| name == "capture-log.json")
        .unwrap()
        .1;
    let log: serde_json::Value = serde_json::from_slice(log).unwrap();
    assert_eq!(log["captures"][0]["peer_address"], "not recorded");

    let key = harness.key_a.clone();
    let console = harness.console.clone();
    let with_tsa = Harness {
        router: crate::router_with_console(state, console),
        ..harness
    };
    let shown = send(&with_tsa, "GET", &page, &key, None).await;
    assert!(
        shown
            .body
            .contains(&format!("href=\"/ui/matches/{found}/evidence/bundle\"")),
        "{}",
        shown.body
    );
    let download = send(
        &with_tsa,
        "GET",
        &format!("{page}/evidence/bundle"),
        &key,
        None,
    )
    .await;
    assert_eq!(download.status, StatusCode::OK);
    assert!(
        download
            .disposition
            .is_some_and(|value| value.contains(&format!("match-{found}-evidence.tar"))),
    );
}
