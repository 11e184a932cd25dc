//! Reports a legal team can send: scope by review status and period, takedown
//! notices signed with the publisher's profile, from the API and the console.

use axum::http::StatusCode;
use serde_json::json;

use super::{Harness, assert_error, send};

#[tokio::test]
async fn a_report_is_scoped_by_review_status_and_period() {
    let harness = Harness::new().await;
    let key = &harness.key_a;
    let (status, notice) = harness
        .call(
            "POST",
            "/api/v1/reports",
            key,
            Some(json!({"format": "takedown"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{notice}");
    assert_eq!(
        notice["scope"]["review"], "confirmed",
        "notices list confirmed matches by default"
    );
    let (status, csv) = harness
        .call(
            "POST",
            "/api/v1/reports",
            key,
            Some(
                json!({"format": "csv", "review": "confirmed_and_unreviewed",
                        "since": "2026-01-01T00:00:00Z", "until": "2026-02-01T00:00:00Z"}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{csv}");
    assert_eq!(csv["scope"]["review"], "confirmed_and_unreviewed");
    assert_eq!(csv["scope"]["until"], "2026-02-01T00:00:00Z");
    let (_, html) = harness
        .call(
            "POST",
            "/api/v1/reports",
            key,
            Some(json!({"format": "html"})),
        )
        .await;
    assert_eq!(
        html["scope"]["review"], "all",
        "other formats list every status"
    );

    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/reports",
            key,
            Some(json!({"format": "csv", "since": "2026-02-01T00:00:00Z",
                        "until": "2026-01-01T00:00:00Z"})),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "until",
    );
    let (status, body) = harness
        .call(
            "POST",
            "/api/v1/reports",
            key,
            Some(json!({"format": "csv", "review": "everything"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn takedown_notices_list_confirmed_copies_by_title_signed_by_the_rights_holder() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_td").await;
    let site = harness.create_site_a().await;
    let confirmed = harness
        .insert_match(&work, &site, "http://127.0.0.1:8001/c/1.html", 0.9, 1)
        .await;
    harness
        .insert_match(
            &work,
            &site,
            "http://127.0.0.1:8001/c/unreviewed.html",
            0.9,
            1,
        )
        .await;
    let (status, reviewed) = harness
        .call(
            "POST",
            &format!("/api/v1/matches/{confirmed}/review"),
            &harness.key_a,
            Some(json!({"action": "confirm"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reviewed}");

    let admin = harness.admin_key("pub_a", "legal desk").await;
    let profile = json!({"language": "en", "legal_name": "青萍文化传媒有限公司",
                         "address": "北京市海淀区示例路 1 号", "email": "legal@qingping.example"});
    let (status, stored) = harness
        .call("PUT", "/api/v1/profile", &admin, Some(profile.clone()))
        .await;
    assert_eq!(status, StatusCode::OK, "{stored}");
    assert_eq!(stored, profile);
    let (status, body) = harness
        .call("PUT", "/api/v1/profile", &harness.key_a, Some(profile))
        .await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden", "admin");

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
    let (status, document) = harness
        .call(
            "GET",
            &format!("/api/v1/reports/{}/artifact", ids[0]),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let document = document.as_str().unwrap();
    for needle in [
        "http://127.0.0.1:8001/c/1.html",
        "风起青萍",
        "第一章 风起",
        "Rights holder: 青萍文化传媒有限公司",
        "权利人：青萍文化传媒有限公司",
        "E-mail: legal@qingping.example",
        "Notice of copyright infringement",
        "删除通知",
    ] {
        assert!(document.contains(needle), "{needle} in {document}");
    }
    assert!(
        !document.contains("unreviewed.html"),
        "an unreviewed copy is not in a notice: {document}"
    );
    assert!(
        document.find("Infringing pages").unwrap() < document.find("侵权网页清单").unwrap(),
        "the publisher reads English first"
    );
    let (status, mbox) = harness
        .call(
            "GET",
            &format!("/api/v1/reports/{}/artifact", ids[1]),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let mbox = mbox.as_str().unwrap();
    assert!(mbox.starts_with("From copyhound "), "{mbox}");
    assert!(mbox.contains("\nX-Unsent: 1\n"), "{mbox}");
    assert!(mbox.contains("\n <legal@qingping.example>\n"), "{mbox}");
}

#[tokio::test]
async fn the_console_scopes_reports_offers_notices_and_edits_the_profile() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let page = send(&harness, "GET", "/ui/reports", &key, None).await;
    for needle in [
        "value=\"takedown\"",
        "value=\"takedown_email\"",
        "name=\"review\"",
        "name=\"until\"",
    ] {
        assert!(page.body.contains(needle), "{needle}");
    }
    let queued = send(
        &harness,
        "POST",
        "/ui/reports",
        &key,
        Some("format=takedown&work_id=&site_id=&review=confirmed_and_unreviewed&since=2026-01-01&until=2026-02-01"),
    )
    .await;
    assert_eq!(queued.status, StatusCode::SEE_OTHER, "{}", queued.body);
    let reports = harness
        .state
        .ports
        .reports
        .list_reports(
            &harness.publisher_a,
            &copyhound_core::ports::PageRequest {
                after: None,
                limit: 10,
            },
        )
        .await
        .unwrap();
    let scope = &reports.items[0].scope;
    assert_eq!(
        scope.review,
        Some(copyhound_core::model::ReviewScope::ConfirmedAndUnreviewed)
    );
    assert_eq!(
        scope.until.unwrap().to_rfc3339(),
        "2026-02-01T00:00:00+00:00"
    );
    let listed = send(&harness, "GET", "/ui/reports", &key, None).await;
    assert!(listed.body.contains("before 2026-02-01"), "{}", listed.body);
    let bad = send(
        &harness,
        "POST",
        "/ui/reports",
        &key,
        Some("format=csv&until=soon"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);

    let admin = harness.admin_key("pub_a", "legal desk").await;
    let saved = send(
        &harness,
        "POST",
        "/ui/alerts/profile",
        &admin,
        Some("language=zh&legal_name=%E9%9D%92%E8%90%8D%E6%96%87%E5%8C%96&address=&contact_name=&email=legal%40qingping.example&phone="),
    )
    .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert!(
        saved.body.contains("id=\"profile-saved\""),
        "{}",
        saved.body
    );
    let publisher = harness
        .state
        .ports
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    assert_eq!(publisher.profile.legal_name, "青萍文化");
    assert_eq!(
        publisher.profile.language,
        Some(copyhound_core::model::Language::Zh)
    );
    let refused = send(
        &harness,
        "POST",
        "/ui/alerts/profile",
        &admin,
        Some("language=en&email=not-an-address"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("id=\"profile-error\""));
    let denied = send(
        &harness,
        "POST",
        "/ui/alerts/profile",
        &key,
        Some("language=en"),
    )
    .await;
    assert_eq!(denied.status, StatusCode::BAD_REQUEST, "{}", denied.body);
}

/// A schedule is set to e-mail its reports to the alert recipients from the
/// API and from the console; it is off unless asked for.
#[tokio::test]
async fn a_schedule_is_set_to_e_mail_its_reports() {
    let harness = Harness::new().await;
    let admin = harness.admin_key("pub_a", "Admin A").await;
    let body = json!({"schedules": [
        {"cron": "0 6 * * 1", "format": "pdf", "email": true},
        {"cron": "0 3 * * *", "format": "csv"}
    ]});
    let (status, view) = harness
        .call("PUT", "/api/v1/report-schedules", &admin, Some(body))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["schedules"][0]["email"], true);
    assert_eq!(view["schedules"][1]["email"], false);
    let stored = harness
        .state
        .ports
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    assert!(stored.report_schedules[0].email);
    assert!(!stored.report_schedules[1].email);
    let page = send(&harness, "GET", "/ui/reports", &admin, None).await;
    assert!(
        page.body
            .contains("name=\"email_0\" value=\"on\" id=\"email_0\" checked"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("id=\"email_1\" checked"));

    let saved = send(
        &harness,
        "POST",
        "/ui/reports/schedules",
        &admin,
        Some("cron_0=0+6+*+*+1&format_0=pdf&cron_1=0+3+*+*+*&format_1=csv&email_1=on"),
    )
    .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    let stored = harness
        .state
        .ports
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    let emailed: Vec<bool> = stored.report_schedules.iter().map(|s| s.email).collect();
    assert_eq!(emailed, [false, true]);
}
