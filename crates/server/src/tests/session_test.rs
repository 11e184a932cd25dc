//! Console sessions: the cookie carries a random session id, never the key;
//! logging out and revoking the key end the session on the server; the cookie
//! is `Secure` behind an HTTPS proxy; login guesses are throttled.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use tower::ServiceExt;

use super::{ADMIN_KEY, Harness, SEC_FETCH_SITE};
use crate::ui::SESSION_COOKIE;

/// Posts the login form from `client` with `extra` headers.
async fn login(harness: &Harness, key: &str, client: &str, extra: &[(&str, &str)]) -> Response {
    let mut builder = Request::builder()
        .method("POST")
        .uri("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(SEC_FETCH_SITE, "same-origin");
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    let mut request = builder.body(Body::from(format!("key={key}"))).unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo(client.parse::<SocketAddr>().unwrap()));
    harness.router.clone().oneshot(request).await.unwrap()
}

/// The session cookie a login set.
fn session_cookie(response: &Response) -> String {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|value| value.to_str().unwrap().to_string())
        .find(|cookie| cookie.starts_with(&format!("{SESSION_COOKIE}=")))
        .expect("a session cookie")
}

/// Sends a console request with a raw cookie value.
async fn with_cookie(harness: &Harness, method: &str, path: &str, session: &str) -> Response {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::COOKIE, format!("{SESSION_COOKIE}={session}"))
        .header(SEC_FETCH_SITE, "same-origin")
        .body(Body::empty())
        .unwrap();
    harness.router.clone().oneshot(request).await.unwrap()
}

fn session_of(cookie: &str) -> String {
    let value = cookie.split(';').next().unwrap();
    value.split_once('=').unwrap().1.to_string()
}

fn location(response: &Response) -> Option<&str> {
    response
        .headers()
        .get(header::LOCATION)
        .and_then(|value| value.to_str().ok())
}

#[tokio::test]
async fn the_cookie_holds_a_session_id_not_the_key() {
    let harness = Harness::new().await;
    let response = login(&harness, &harness.key_a, "203.0.113.1:4000", &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = session_cookie(&response);
    assert!(!cookie.contains(&harness.key_a), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let session = session_of(&cookie);
    assert_eq!(session.len(), 64);
    let page = with_cookie(&harness, "GET", "/ui/works", &session).await;
    assert_eq!(page.status(), StatusCode::OK);
    // The key itself is no session.
    let page = with_cookie(&harness, "GET", "/ui/works", &harness.key_a).await;
    assert_eq!(location(&page), Some("/login?expired=1"));
}

#[tokio::test]
async fn logging_out_ends_the_session_on_the_server() {
    let harness = Harness::new().await;
    let response = login(&harness, &harness.key_a, "203.0.113.1:4000", &[]).await;
    let session = session_of(&session_cookie(&response));
    let logout = with_cookie(&harness, "POST", "/logout", &session).await;
    assert_eq!(logout.status(), StatusCode::SEE_OTHER);
    assert!(session_cookie(&logout).contains("Max-Age=0"));
    // A copy of the cookie kept elsewhere is worth nothing now.
    let page = with_cookie(&harness, "GET", "/ui/works", &session).await;
    assert_eq!(location(&page), Some("/login?expired=1"));
    assert!(harness.console.sessions.is_empty());
}

#[tokio::test]
async fn revoking_a_key_ends_its_sessions() {
    let harness = Harness::new().await;
    let admin = harness.admin_key("pub_a", "Li Wei").await;
    let (_, me) = harness.call("GET", "/api/v1/me", &admin, None).await;
    let key_id = me["key_id"].as_str().unwrap().to_string();
    let response = login(&harness, &admin, "203.0.113.1:4000", &[]).await;
    let session = session_of(&session_cookie(&response));
    let page = with_cookie(&harness, "GET", "/ui/keys", &session).await;
    assert_eq!(page.status(), StatusCode::OK);
    let (status, body) = harness
        .call(
            "DELETE",
            &format!("/api/v1/admin/keys/{key_id}"),
            ADMIN_KEY,
            None,
        )
        .await;
    assert!(status.is_success(), "{status} {body}");
    let page = with_cookie(&harness, "GET", "/ui/keys", &session).await;
    assert_eq!(location(&page), Some("/login?expired=1"));
    let (status, _) = harness.call("GET", "/api/v1/sites", &admin, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_cookie_is_secure_behind_an_https_proxy() {
    let harness = Harness::new().await;
    let plain = login(&harness, &harness.key_a, "127.0.0.1:4000", &[]).await;
    assert!(!session_cookie(&plain).contains("Secure"));
    let https = login(
        &harness,
        &harness.key_a,
        "127.0.0.1:4000",
        &[
            ("x-forwarded-proto", "https"),
            ("x-forwarded-for", "198.51.100.7"),
        ],
    )
    .await;
    assert_eq!(https.status(), StatusCode::SEE_OTHER);
    assert!(session_cookie(&https).contains("; Secure"));
}

#[tokio::test]
async fn login_guesses_are_throttled_per_client() {
    let harness = Harness::new().await;
    let guesser = "203.0.113.66:5000";
    let wrong = format!("{}0", &harness.key_a[..harness.key_a.len() - 1]);
    let mut refused = 0;
    let mut throttled = None;
    for _ in 0..50 {
        let response = login(&harness, &wrong, guesser, &[]).await;
        match response.status() {
            StatusCode::UNAUTHORIZED => refused += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                throttled = Some(response);
                break;
            }
            other => panic!("{other}"),
        }
    }
    assert_eq!(refused, crate::ui::LOGIN_BURST_PER_CLIENT);
    let throttled = throttled.expect("guessing was throttled");
    let retry = throttled.headers()[header::RETRY_AFTER].to_str().unwrap();
    assert!(retry.parse::<u64>().unwrap() >= 1, "{retry}");
    // Even the right key waits: the throttle answers before the key is read.
    let right = login(&harness, &harness.key_a, guesser, &[]).await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
    // Another client is not held back, and logging in costs nothing.
    for _ in 0..3 * crate::ui::LOGIN_BURST_PER_CLIENT {
        let other = login(&harness, &harness.key_a, "198.51.100.9:5000", &[]).await;
        assert_eq!(other.status(), StatusCode::SEE_OTHER);
    }
}
