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
        json!({"email_to": [], "threshold_new_confirmed": 1})
    );
    assert_eq!(view["mail_server"], false);

    let wanted = json!({"email_to": ["legal@a.example", "Rights Desk <rights@a.example>"], "threshold_new_confirmed": 3});
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
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    assert_eq!(stored.alerts.email_to.len(), 2);

    for bad in [
        json!({"email_to": ["not an address"]}),
        json!({"email_to": [""]}),
        json!({"email_to": [" legal@a.example"]}),
        json!({"email_to": ["a@b.example\r\nBcc: all@victim.example"]}),
        json!({"email_to": ["a@b@c"]}),
        json!({"email_to": vec!["x@a.example"; 21]}),
        json!({"threshold_new_confirmed": 0}),
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
