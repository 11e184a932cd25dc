//! Forged console requests: a post from another origin (another site, a sibling
//! subdomain, another port on the same host) is refused before its handler
//! runs, `/login` included, while the console's own forms and the JSON API
//! keep working.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::json;
use tower::ServiceExt;

use super::{ADMIN_KEY, Harness, SEC_FETCH_SITE};
use crate::ui::SESSION_COOKIE;

/// The host the console is served on in these tests.
const HOST: &str = "console.example:8080";

/// A form post as a browser sends it (in a session of `key`), with the origin headers it computed.
async fn post_form(
    harness: &Harness,
    path: &str,
    key: Option<&str>,
    origin_headers: &[(&str, &str)],
    form: &str,
) -> axum::response::Response {
    let mut builder = Request::builder()
        .method("POST")
        .uri(path)
        .header(header::HOST, HOST)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(key) = key {
        let session = harness.session(key).await;
        builder = builder.header(header::COOKIE, format!("{SESSION_COOKIE}={session}"));
    }
    for (name, value) in origin_headers {
        builder = builder.header(*name, *value);
    }
    let request = builder.body(Body::from(form.to_string())).unwrap();
    harness.router.clone().oneshot(request).await.unwrap()
}

/// What forged posts carry: a browser's verdict, or only an origin.
const FORGED: [&[(&str, &str)]; 6] = [
    &[
        (SEC_FETCH_SITE, "cross-site"),
        ("origin", "https://evil.example"),
    ],
    &[
        (SEC_FETCH_SITE, "same-site"),
        ("origin", "http://blog.console.example:8080"),
    ],
    &[(SEC_FETCH_SITE, "none")],
    &[("origin", "http://console.example:9999")],
    &[("origin", "null")],
    &[],
];

#[tokio::test]
async fn a_cross_site_login_is_refused_and_sets_no_session() {
    let harness = Harness::new().await;
    let form = format!("key={}", harness.key_a);
    for forged in FORGED {
        let response = post_form(&harness, "/login", None, forged, &form).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{forged:?}");
        assert!(
            response.headers().get(header::SET_COOKIE).is_none(),
            "{forged:?} logged in"
        );
    }
    for same_origin in [
        &[(SEC_FETCH_SITE, "same-origin")][..],
        &[("origin", "http://console.example:8080")][..],
    ] {
        let response = post_form(&harness, "/login", None, same_origin, &form).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{same_origin:?}");
        assert!(response.headers().get(header::SET_COOKIE).is_some());
    }
}

#[tokio::test]
async fn cross_origin_console_forms_are_refused_and_change_nothing() {
    let harness = Harness::new().await;
    let session = harness.key_a.clone();
    let form = "name=x&seeds=http%3A%2F%2F127.0.0.1%3A8001%2F";
    for forged in FORGED {
        let response = post_form(&harness, "/ui/sites", Some(&session), forged, form).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{forged:?}");
    }
    let (_, sites) = harness.call("GET", "/api/v1/sites", &session, None).await;
    assert_eq!(sites["items"], json!([]), "{sites}");
    let logout = post_form(&harness, "/logout", Some(&session), FORGED[0], "").await;
    assert_eq!(logout.status(), StatusCode::FORBIDDEN);

    let own = [(SEC_FETCH_SITE, "same-origin")];
    let response = post_form(&harness, "/ui/sites", Some(&session), &own, form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, sites) = harness.call("GET", "/api/v1/sites", &session, None).await;
    assert_eq!(sites["items"].as_array().unwrap().len(), 1, "{sites}");
}

#[tokio::test]
async fn every_console_post_refuses_a_cross_site_request() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_csrf").await;
    let site = harness.create_site_a().await;
    let publisher_posts = [
        "/logout".to_string(),
        "/ui/works/preview".to_string(),
        "/ui/works/confirm".to_string(),
        format!("/ui/works/{work}/delete"),
        format!("/ui/works/{work}/replace"),
        format!("/ui/works/{work}/licensed-hosts"),
        "/ui/sites".to_string(),
        format!("/ui/sites/{site}/crawl"),
        format!("/ui/sites/{site}/edit"),
        format!("/ui/sites/{site}/enabled"),
        "/ui/reports".to_string(),
        "/ui/reports/schedules".to_string(),
        "/ui/alerts".to_string(),
        "/ui/policy".to_string(),
        "/ui/keys".to_string(),
        "/ui/keys/key_x/revoke".to_string(),
        "/ui/matches/review".to_string(),
        "/ui/matches/m_x/review".to_string(),
    ];
    let operator_posts = [
        "/ui/operator/publishers".to_string(),
        "/ui/operator/publishers/pub_a/keys".to_string(),
    ];
    let key_a = harness.key_a.clone();
    let cases = publisher_posts
        .iter()
        .map(|path| (path, key_a.as_str()))
        .chain(operator_posts.iter().map(|path| (path, ADMIN_KEY)));
    for (path, session) in cases {
        let response = post_form(&harness, path, Some(session), FORGED[0], "").await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
    }
    // Nothing was deleted, crawled or switched off.
    let (status, _) = harness
        .call("GET", &format!("/api/v1/works/{work}"), &key_a, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, crawls) = harness
        .call("GET", &format!("/api/v1/sites/{site}/crawls"), &key_a, None)
        .await;
    assert_eq!(crawls["items"], json!([]), "{crawls}");
}

#[tokio::test]
async fn the_json_api_ignores_where_a_keyed_request_comes_from() {
    let harness = Harness::new().await;
    let request = Request::builder()
        .method("POST")
        .uri("/api/v1/sites")
        .header(header::HOST, HOST)
        .header(header::AUTHORIZATION, format!("Bearer {}", harness.key_a))
        .header(header::CONTENT_TYPE, "application/json")
        .header("origin", "https://evil.example")
        .header(SEC_FETCH_SITE, "cross-site")
        .body(Body::from(
            json!({"name": "x", "seeds": ["http://127.0.0.1:8001/"]}).to_string(),
        ))
        .unwrap();
    let response = harness.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
}
