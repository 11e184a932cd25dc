//! Who to notify: `GET /api/v1/sites/{site_id}/recipients`, the console's site
//! page and takedown notices addressed to the recipients, on a fixed lookup
//! (the RDAP lookup itself is tested against a local RDAP server in the
//! crawler crate).

use std::sync::Arc;

use axum::http::StatusCode;
use copyhound_core::model::{CdnFront, HostingNetwork, Recipients, Registrar};
use copyhound_core::ports::MemoryRecipientLookup;
use serde_json::json;

use super::{Harness, assert_error, send};

/// The recipients of the loopback sites `create_site_a` registers.
fn recipients() -> Recipients {
    Recipients {
        host: "127.0.0.1".into(),
        domain: None,
        registrar: Some(Registrar {
            name: "Example Names Registrar Co., Ltd.".into(),
            iana_id: Some("1068".into()),
            abuse_email: Some("abuse@registrar.example".into()),
            abuse_phone: Some("+86.2088886666".into()),
            url: None,
        }),
        hosting: Some(HostingNetwork {
            address: "104.16.10.20".into(),
            name: Some("CLOUDFLARENET".into()),
            cidr: Some("104.16.0.0/12".into()),
            organization: Some("Cloudflare, Inc.".into()),
            abuse_email: Some("abuse@cloudflare.com".into()),
            ..HostingNetwork::default()
        }),
        cdn: Some(CdnFront {
            name: "Cloudflare".into(),
            detected_by: "network CLOUDFLARENET".into(),
            abuse_email: Some("abuse@cloudflare.com".into()),
            abuse_url: Some("https://abuse.cloudflare.com/".into()),
        }),
        looked_up_at: chrono::Utc::now(),
        sources: vec!["http://127.0.0.1:9/ip/104.16.10.20".into()],
        problems: vec!["no registry record for 127.0.0.1".into()],
    }
}

/// Downloads report `id`'s artifact as publisher A.
async fn artifact(harness: &Harness, id: &str) -> (StatusCode, serde_json::Value) {
    let path = format!("/api/v1/reports/{id}/artifact");
    harness.call("GET", &path, &harness.key_a, None).await
}

/// A harness whose server and report stage look recipients up in `recipients()`.
async fn harness_with_lookup() -> Harness {
    let mut harness = Harness::new().await;
    let lookup = MemoryRecipientLookup::default();
    lookup.insert(recipients());
    harness.state.recipients = Some(Arc::new(lookup));
    harness.router = crate::router_with_console(harness.state.clone(), harness.console.clone());
    harness
}

#[tokio::test]
async fn the_api_answers_who_to_notify_for_the_callers_sites_only() {
    let harness = harness_with_lookup().await;
    let site = harness.create_site_a().await;
    let path = format!("/api/v1/sites/{site}/recipients");
    let (status, body) = harness.call("GET", &path, &harness.key_a, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["registrar"]["abuse_email"], "abuse@registrar.example");
    assert_eq!(body["hosting"]["cidr"], "104.16.0.0/12");
    assert_eq!(body["cdn"]["name"], "Cloudflare");
    assert_eq!(
        body["problems"],
        json!(["no registry record for 127.0.0.1"])
    );
    let parsed: Recipients = serde_json::from_value(body).unwrap();
    assert_eq!(parsed.primary_email(), Some("abuse@cloudflare.com"));

    let (status, body) = harness.call("GET", &path, &harness.key_b, None).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found", "");

    let unconfigured = Harness::new().await;
    let site = unconfigured.create_site_a().await;
    let (status, body) = unconfigured
        .call(
            "GET",
            &format!("/api/v1/sites/{site}/recipients"),
            &unconfigured.key_a,
            None,
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "",
    );
}

#[tokio::test]
async fn takedown_e_mails_are_addressed_to_the_abuse_contact() {
    let harness = harness_with_lookup().await;
    let work = harness.register_work_a("w_notify").await;
    let site = harness.create_site_a().await;
    let found = harness
        .insert_match(&work, &site, "http://127.0.0.1:8001/c/1.html", 0.9, 1)
        .await;
    let (status, reviewed) = harness
        .call(
            "POST",
            &format!("/api/v1/matches/{found}/review"),
            &harness.key_a,
            Some(json!({"action": "confirm"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reviewed}");
    let mut ids = Vec::new();
    for format in ["takedown", "takedown_email"] {
        let (status, report) = harness
            .call(
                "POST",
                "/api/v1/reports",
                &harness.key_a,
                Some(json!({"format": format})),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
        ids.push(report["id"].as_str().unwrap().to_string());
    }
    harness.render_queued_reports().await;
    let (status, document) = artifact(&harness, &ids[0]).await;
    assert_eq!(status, StatusCode::OK);
    let document = document.as_str().unwrap();
    assert!(
        document.contains("收件人 / Send to: abuse@cloudflare.com"),
        "{document}"
    );
    assert!(document.contains("CDN: Cloudflare"), "{document}");
    let (status, mbox) = artifact(&harness, &ids[1]).await;
    assert_eq!(status, StatusCode::OK);
    let mbox = mbox.as_str().unwrap();
    assert!(mbox.contains("\nTo: abuse@cloudflare.com\n"), "{mbox}");
    assert!(mbox.contains("\nX-Unsent: 1\n"), "{mbox}");
}

#[tokio::test]
async fn the_console_site_page_looks_up_who_to_notify_on_demand() {
    let harness = harness_with_lookup().await;
    let site = harness.create_site_a().await;
    let key = harness.key_a.clone();
    let page = send(&harness, "GET", &format!("/ui/sites/{site}"), &key, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("id=\"look-up-recipients\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains("abuse@cloudflare.com"));
    let page = send(
        &harness,
        "GET",
        &format!("/ui/sites/{site}?notify=1"),
        &key,
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    for needle in [
        "id=\"recipients\"",
        "abuse@cloudflare.com",
        "abuse@registrar.example",
        "CLOUDFLARENET 104.16.0.0",
        "no registry record for 127.0.0.1",
    ] {
        assert!(page.body.contains(needle), "{needle} in {}", page.body);
    }
    let other = send(
        &harness,
        "GET",
        &format!("/ui/sites/{site}?notify=1"),
        &harness.key_b,
        None,
    )
    .await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);

    let unconfigured = Harness::new().await;
    let site = unconfigured.create_site_a().await;
    let key = unconfigured.key_a.clone();
    let page = send(
        &unconfigured,
        "GET",
        &format!("/ui/sites/{site}?notify=1"),
        &key,
        None,
    )
    .await;
    assert!(page.body.contains("id=\"notify-error\""), "{}", page.body);
    assert!(page.body.contains("rdap.bootstrap"), "{}", page.body);
}
