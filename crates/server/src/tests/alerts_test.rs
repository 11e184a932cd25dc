//! A publisher's own e-mail alerts: read by any key of the publisher, edited
//! by its admins, addresses checked (no header injection), per tenant; the
//! console form edits them and says when no mail server is configured.

use axum::http::StatusCode;
use serde_json::json;

use super::{Harness, assert_error};

#[tokio::test]
async fn admins_set_who_gets_e_mail_alerts() {
    let harness = Harness::new().await;
    let (status, view) = harness
        .call("GET", "/api/v1/alerts", &harness.key_a, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(
        view["settings"],
        json!({"email_to": [], "threshold_new_confirmed": 1, "alert_on": "confirmed"})
    );
    assert_eq!(view["mail_server"], false);

    let wanted = json!({"email_to": ["legal@a.example", "Rights Desk <rights@a.example>"], "threshold_new_confirmed": 3, "alert_on": "detected"});
    let (status, body) = harness
        .call(
            "PUT",
            "/api/v1/alerts",
            &harness.key_a,
            Some(wanted.clone()),
        )
        .await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden", "admin");
    let admin = harness.admin_key("pub_a", "Admin A").await;
    let (status, view) = harness
        .call("PUT", "/api/v1/alerts", &admin, Some(wanted.clone()))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["settings"], wanted);
    let stored = harness
        .state
        .ports
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    assert_eq!(stored.alerts.email_to.len(), 2);
    assert_eq!(
        stored.alerts.alert_on,
        copyhound_core::model::AlertOn::Detected
    );

    for bad in [
        json!({"email_to": ["not an address"]}),
        json!({"email_to": [""]}),
        json!({"email_to": [" legal@a.example"]}),
        json!({"email_to": ["a@b.example\r\nBcc: all@victim.example"]}),
        json!({"email_to": ["a@b@c"]}),
        json!({"email_to": vec!["x@a.example"; 21]}),
        json!({"threshold_new_confirmed": 0}),
        json!({"alert_on": "sometimes"}),
        json!({"email_to": "legal@a.example"}),
        json!([]),
    ] {
        let (status, body) = harness
            .call("PUT", "/api/v1/alerts", &admin, Some(bad.clone()))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, view) = harness
        .call(
            "PUT",
            "/api/v1/alerts",
            &admin,
            Some(json!({"email_to": ["legal@a.example"], "threshold_new_confirmed": 2.0})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "an integral float is an integer: {view}"
    );
    // B sees its own (none).
    let (_, view) = harness
        .call("GET", "/api/v1/alerts", &harness.key_b, None)
        .await;
    assert_eq!(view["settings"]["email_to"], json!([]));

    // The console form: one address per line.
    let answer = super::send(
        &harness,
        "POST",
        "/ui/alerts",
        &admin,
        Some("email_to=legal%40a.example%0D%0Adesk%40a.example%0D%0A&threshold_new_confirmed=5"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let html = answer.body;
    assert!(html.contains("id=\"alerts-saved\""), "{html}");
    assert!(html.contains("id=\"no-mail-server\""), "{html}");
    let stored = harness
        .state
        .ports
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    assert_eq!(
        stored.alerts.email_to,
        ["legal@a.example", "desk@a.example"]
    );
    assert_eq!(stored.alerts.threshold_new_confirmed, 5);
}

/// Records what it is asked to send; refuses every message when `refuse` is set.
#[derive(Debug, Default)]
struct Outbox {
    sent: std::sync::Mutex<Vec<copyhound_report::AlertEmail>>,
    refuse: bool,
}

#[async_trait::async_trait]
impl copyhound_report::MailTransport for Outbox {
    async fn send(&self, email: &copyhound_report::AlertEmail) -> copyhound_core::Result<()> {
        if self.refuse {
            return Err(copyhound_core::Error::invalid(
                "SMTP delivery failed: 550 mailbox unavailable",
            ));
        }
        self.sent.lock().unwrap().push(email.clone());
        Ok(())
    }
}

/// An admin sends a test e-mail from the alerts page and sees whether the
/// mail server took it; once a minute per publisher; admins only; the form
/// is refused from another site like every console post.
#[tokio::test]
async fn the_alerts_page_sends_a_test_e_mail_and_shows_the_outcome() {
    use super::send;
    let outbox = std::sync::Arc::new(Outbox::default());
    let harness = Harness::with_mail(outbox.clone()).await;
    let admin = harness.admin_key("pub_a", "Li Wei").await;
    let page = send(&harness, "GET", "/ui/alerts", &admin, None).await;
    assert!(page.body.contains("id=\"send-test-mail\""), "{}", page.body);
    let reader = send(&harness, "GET", "/ui/alerts", &harness.key_a, None).await;
    assert!(!reader.body.contains("id=\"send-test-mail\""));

    // No recipients yet: nothing goes out, and the page says why.
    let answer = send(&harness, "POST", "/ui/alerts/test", &admin, Some("")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        answer.body.contains("id=\"test-mail-refused\""),
        "{}",
        answer.body
    );
    assert!(answer.body.contains("no recipients are saved"));
    assert!(outbox.sent.lock().unwrap().is_empty());

    // Within the minute, a second test is refused whatever it would do.
    let form = "email_to=legal%40a.example&threshold_new_confirmed=1";
    let saved = send(&harness, "POST", "/ui/alerts", &admin, Some(form)).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    let answer = send(&harness, "POST", "/ui/alerts/test", &admin, Some("")).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        answer.body.contains("one test e-mail a minute"),
        "{}",
        answer.body
    );
    assert!(outbox.sent.lock().unwrap().is_empty());

    // A minute later (the throttle forgets), it is delivered.
    harness.console.test_mail.forget(&harness.publisher_a);
    let answer = send(&harness, "POST", "/ui/alerts/test", &admin, Some("")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        answer.body.contains("id=\"test-mail-delivered\""),
        "{}",
        answer.body
    );
    assert!(answer.body.contains("legal@a.example"));
    let sent = outbox.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].to, ["legal@a.example"]);
    assert_eq!(sent[0].subject, "[CopyHound] Test e-mail for Publisher A");
    assert!(sent[0].text.contains("Li Wei"), "{}", sent[0].text);

    // Readers may not; another site may not post it.
    harness.console.test_mail.forget(&harness.publisher_a);
    let answer = send(
        &harness,
        "POST",
        "/ui/alerts/test",
        &harness.key_a,
        Some(""),
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    let session = harness.session(&admin).await;
    let request = axum::http::Request::builder()
        .method("POST")
        .uri("/ui/alerts/test")
        .header(
            axum::http::header::COOKIE,
            format!("{}={session}", crate::ui::SESSION_COOKIE),
        )
        .header(super::SEC_FETCH_SITE, "cross-site")
        .header(
            axum::http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(axum::body::Body::empty())
        .unwrap();
    let response = tower::ServiceExt::oneshot(harness.router.clone(), request)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(outbox.sent.lock().unwrap().len(), 1);
}

/// A mail server that refuses the message: the page shows its reason.
#[tokio::test]
async fn a_refused_test_e_mail_shows_the_servers_reason() {
    use super::send;
    let outbox = std::sync::Arc::new(Outbox {
        refuse: true,
        ..Outbox::default()
    });
    let harness = Harness::with_mail(outbox).await;
    let admin = harness.admin_key("pub_a", "Li Wei").await;
    let form = "email_to=legal%40a.example&threshold_new_confirmed=1";
    send(&harness, "POST", "/ui/alerts", &admin, Some(form)).await;
    let answer = send(&harness, "POST", "/ui/alerts/test", &admin, Some("")).await;
    assert!(
        answer.body.contains("id=\"test-mail-refused\""),
        "{}",
        answer.body
    );
    assert!(
        answer.body.contains("550 mailbox unavailable"),
        "{}",
        answer.body
    );
}
