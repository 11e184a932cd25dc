//! The console in a new user's first hour: the login page names the operator
//! key and calls a wrong key unknown, the empty dashboard says where to
//! start, the upload preview keeps what was typed when its work id is
//! refused, takes a TXT's title from its front matter and shows warnings as
//! warnings, and unknown console URLs answer a page of the console.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

use super::console_test::upload;
use super::{ADMIN_KEY, Harness, SEC_FETCH_SITE, send};

/// Posts the login form with `key` from `client`, as the browser sends it from `site`.
async fn login(harness: &Harness, key: &str, client: &str, site: &str) -> Reply {
    let form = format!("key={}", super::console_test::encode(key));
    let mut request = Request::builder()
        .method("POST")
        .uri("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(SEC_FETCH_SITE, site)
        .body(Body::from(form))
        .unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo(client.parse::<SocketAddr>().unwrap()));
    answer(harness, request).await
}

/// A response as the tests read it.
struct Reply {
    status: StatusCode,
    location: Option<String>,
    content_type: Option<String>,
    body: String,
}

async fn answer(harness: &Harness, request: Request<Body>) -> Reply {
    let response = harness.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let header_text = |name| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
    };
    let location = header_text(header::LOCATION);
    let content_type = header_text(header::CONTENT_TYPE);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Reply {
        status,
        location,
        content_type,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// The text of the element with `id` (up to its first tag inside).
fn element_text(body: &str, id: &str) -> String {
    let marker = format!("id=\"{id}\"");
    let start = body
        .find(&marker)
        .unwrap_or_else(|| panic!("no #{id}: {body}"));
    let start = start + body[start..].find('>').unwrap() + 1;
    let end = start + body[start..].find('<').unwrap();
    body[start..end].to_string()
}

#[tokio::test]
async fn the_login_page_names_the_operator_key_and_calls_a_wrong_key_unknown() {
    let harness = Harness::new().await;
    let page = send(&harness, "GET", "/login", "", None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        element_text(&page.body, "login-help").contains("operator key"),
        "{}",
        page.body
    );

    // Any well-formed wrong key gets the same answer: an unknown key id, a
    // known id with a wrong secret, a revoked key.
    let revoked = harness.admin_key("pub_a", "Former").await;
    let (_, me) = harness.call("GET", "/api/v1/me", &revoked, None).await;
    let revoked_id = me["key_id"].as_str().unwrap().to_string();
    let (status, _) = harness
        .call(
            "DELETE",
            &format!("/api/v1/admin/keys/{revoked_id}"),
            ADMIN_KEY,
            None,
        )
        .await;
    assert!(status.is_success());
    let secret = "0".repeat(64);
    let (prefix, _) = harness.key_a.rsplit_once('_').unwrap();
    let well_formed = [
        format!("chk_key_0000000000000000_{secret}"),
        format!("{prefix}_{secret}"),
        revoked.clone(),
    ];
    let mut answers = Vec::new();
    for (number, key) in well_formed.iter().enumerate() {
        let refused = login(
            &harness,
            key,
            &format!("203.0.113.{number}:4000"),
            "same-origin",
        )
        .await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{key}");
        answers.push(element_text(&refused.body, "login-error"));
    }
    assert!(answers[0].starts_with("unknown key"), "{answers:?}");
    assert!(
        answers.iter().all(|answer| *answer == answers[0]),
        "{answers:?}"
    );

    // A mistyped operator key or a key cut short is unknown too, not "malformed".
    for (number, key) in [
        "test-admin-secreT",
        &harness.key_a[..harness.key_a.len() - 3],
    ]
    .into_iter()
    .enumerate()
    {
        let refused = login(
            &harness,
            key,
            &format!("198.51.100.{number}:4000"),
            "same-origin",
        )
        .await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{key}");
        let message = element_text(&refused.body, "login-error");
        assert!(message.starts_with("unknown key"), "{message}");
        assert!(!refused.body.contains("malformed"), "{}", refused.body);
    }

    // The operator key logs in; a login from another site is still refused.
    let operator = login(&harness, ADMIN_KEY, "192.0.2.1:4000", "same-origin").await;
    assert_eq!(operator.status, StatusCode::SEE_OTHER);
    assert_eq!(operator.location.as_deref(), Some("/ui/operator"));
    let forged = login(&harness, &harness.key_a, "192.0.2.2:4000", "cross-site").await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    // In Chinese, the help and the refusal too.
    let mut request = Request::builder()
        .method("POST")
        .uri("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, "copyhound_lang=zh")
        .header(SEC_FETCH_SITE, "same-origin")
        .body(Body::from(format!("key={}", well_formed[0])))
        .unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo("192.0.2.3:4000".parse::<SocketAddr>().unwrap()));
    let chinese = answer(&harness, request).await;
    assert!(element_text(&chinese.body, "login-help").contains("运维密钥"));
    assert!(element_text(&chinese.body, "login-error").contains("未知密钥"));
}

#[tokio::test]
async fn an_empty_dashboard_says_where_to_start() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let empty = send(&harness, "GET", "/", &key, None).await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.body);
    assert!(empty.body.contains("id=\"start-here\""), "{}", empty.body);
    assert!(
        empty
            .body
            .contains("id=\"start-work\" href=\"/ui/works#upload-form\""),
        "{}",
        empty.body
    );
    assert!(
        empty
            .body
            .contains("id=\"start-site\" href=\"/ui/sites#site-form\""),
        "{}",
        empty.body
    );
    harness.register_work_a("w_first").await;
    let one_work = send(&harness, "GET", "/", &key, None).await;
    assert!(
        !one_work.body.contains("id=\"start-work\""),
        "{}",
        one_work.body
    );
    assert!(
        one_work.body.contains("id=\"start-site\""),
        "{}",
        one_work.body
    );
    harness.create_site_a().await;
    let started = send(&harness, "GET", "/", &key, None).await;
    assert!(
        !started.body.contains("id=\"start-here\""),
        "{}",
        started.body
    );
}

/// The `value` of the input named `name` on `body`.
fn input_value(body: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = body
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name}: {body}"))
        + marker.len();
    let end = start + body[start..].find('"').unwrap();
    body[start..end].to_string()
}

#[tokio::test]
async fn a_refused_work_id_gives_the_form_back_as_typed() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    harness.register_work_a("w_taken").await;
    let encode = super::console_test::encode;
    let form = |id: &str| {
        format!(
            "count=3&filename=book.txt&format=TXT&encoding=utf-8&title={}&author={}&kind=news&id={id}\
             &keep_0=on&title_0={}&text_0={}\
             &title_1={}&text_1={}\
             &keep_2=on&merge_2=on&title_2={}&text_2={}",
            encode("我的书"),
            encode("张三"),
            encode("第一章 改过的标题"),
            encode("第一章的正文。"),
            encode("目录"),
            encode("第一章 第二章"),
            encode("第二章"),
            encode("第二章的正文。"),
        )
    };
    for (id, status) in [
        ("w_taken", StatusCode::CONFLICT),
        ("not%20an%20id%21", StatusCode::BAD_REQUEST),
    ] {
        let refused = send(&harness, "POST", "/ui/works/confirm", &key, Some(&form(id))).await;
        assert_eq!(refused.status, status, "{}", refused.body);
        assert!(
            !element_text(&refused.body, "id-error").is_empty(),
            "{}",
            refused.body
        );
        assert_eq!(input_value(&refused.body, "title"), "我的书");
        assert_eq!(input_value(&refused.body, "author"), "张三");
        assert!(refused.body.contains("<option value=\"news\" selected>"));
        assert_eq!(input_value(&refused.body, "title_0"), "第一章 改过的标题");
        assert!(refused.body.contains(">第二章的正文。</textarea>"));
        // What was dropped stays dropped, what was merged stays merged.
        assert!(
            refused
                .body
                .contains("name=\"keep_0\" value=\"on\" checked")
        );
        assert!(
            !refused
                .body
                .contains("name=\"keep_1\" value=\"on\" checked")
        );
        assert!(
            refused
                .body
                .contains("name=\"merge_2\" value=\"on\" checked")
        );
        assert!(refused.body.contains("book.txt"), "{}", refused.body);
        assert!(refused.body.contains("id=\"confirm-form\""));
    }
    // Another refusal of what was typed comes back above the form.
    let untitled = form("w_mine").replace(&format!("title={}", encode("我的书")), "title=");
    let refused = send(&harness, "POST", "/ui/works/confirm", &key, Some(&untitled)).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(element_text(&refused.body, "form-error").contains("title"));
    assert!(!refused.body.contains("id=\"id-error\""));
    assert_eq!(input_value(&refused.body, "id"), "w_mine");
    let registered = send(
        &harness,
        "POST",
        "/ui/works/confirm",
        &key,
        Some(&form("w_mine")),
    )
    .await;
    assert_eq!(
        registered.status,
        StatusCode::SEE_OTHER,
        "{}",
        registered.body
    );
    let (_, work) = harness
        .call("GET", "/api/v1/works/w_mine", &key, None)
        .await;
    assert_eq!(work["title"], "我的书");
    assert_eq!(work["chapters"].as_array().unwrap().len(), 1, "{work}");
}

#[tokio::test]
async fn a_txt_front_matter_titles_the_preview_and_warnings_show_as_warnings() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let txt = "书名：风起青萍\n作者：佚名\n\n第一章 风起\n天色已晚，林中起了大风。\n第三章 雨落\n雨下了一夜。\n";
    let preview = upload(&harness, &key, "book.txt", txt.as_bytes(), &[]).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert_eq!(input_value(&preview.body, "title"), "风起青萍");
    assert_eq!(input_value(&preview.body, "author"), "佚名");
    // The header is no text of the work.
    assert_eq!(preview.body.matches("name=\"text_").count(), 2);
    assert!(
        !preview.body.contains("before the first heading"),
        "{}",
        preview.body
    );
    // The numbering gap is a warning, labelled and styled as one.
    let label = element_text(&preview.body, "warnings-label");
    assert!(label.starts_with("Warnings"), "{label}");
    assert!(
        preview
            .body
            .contains("<li class=\"warning\">chapter numbers jump from 1 to 3 at line 6<"),
        "{}",
        preview.body
    );
    assert!(!preview.body.contains("class=\"error\">chapter numbers"));

    // English keys; a title typed in the form wins over the file's.
    let english = "Title: The Wind Rises\n\nChapter 1\nIt was late.\n";
    let preview = upload(&harness, &key, "wind.txt", english.as_bytes(), &[]).await;
    assert_eq!(input_value(&preview.body, "title"), "The Wind Rises");
    assert!(
        !preview.body.contains("id=\"preview-warnings\""),
        "{}",
        preview.body
    );
    let typed = upload(
        &harness,
        &key,
        "wind.txt",
        english.as_bytes(),
        &[("title", "Mine")],
    )
    .await;
    assert_eq!(input_value(&typed.body, "title"), "Mine");
}

#[tokio::test]
async fn unknown_console_urls_answer_a_console_page() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    for path in ["/ui/nothing", "/ui/works/w_1/nothing/here", "/ui/wrks"] {
        let page = send(&harness, "GET", path, &key, None).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
        assert!(
            page.body.starts_with("<!doctype html>"),
            "{path}: {}",
            page.body
        );
        assert!(page.body.contains("id=\"not-found\""), "{}", page.body);
        assert_eq!(
            element_text(&page.body, "not-found-path"),
            path.replace('/', "&#x2f;")
        );
        assert!(
            page.body.contains("href=\"/ui/works\""),
            "the menu: {}",
            page.body
        );
        assert!(
            page.body.contains("id=\"back-home\" href=\"/\""),
            "{}",
            page.body
        );
    }
    // In the reader's language, and without a session too.
    let request = Request::builder()
        .uri("/ui/nothing")
        .header(header::COOKIE, "copyhound_lang=zh")
        .body(Body::empty())
        .unwrap();
    let page = answer(&harness, request).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.content_type.unwrap().starts_with("text/html"));
    assert!(page.body.contains("页面不存在"), "{}", page.body);
    // The API keeps its JSON answer.
    let (status, body) = harness.call("GET", "/api/v1/nothing", &key, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "not_found");
}
