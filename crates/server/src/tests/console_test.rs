//! The console's self-service flows over HTTP, as a browser sends them: add a
//! site (and see why a bad one is refused), crawl it now, switch it off; see
//! what a site copied; filter matches and review several at once; generate a
//! report and download it.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use copyhound_core::model::TaskKind;
use copyhound_core::model::{MatchStatus, ReportStatus};
use tower::ServiceExt;

use super::{Answer, Harness, send, send_once};
use crate::ui::SESSION_COOKIE;

#[tokio::test]
async fn sites_are_added_crawled_and_switched_off_from_the_console() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let refused = send(
        &harness,
        "POST",
        "/ui/sites",
        &key,
        Some("name=%E7%9B%97%E7%89%88%E7%AB%99&seeds=ftp%3A%2F%2Fpirate.example%2F&schedule=&max_pages_per_run=&rate_limit_per_second="),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(
        refused.body.contains("id=\"site-error\""),
        "{}",
        refused.body
    );
    assert!(
        refused
            .body
            .contains(">ftp:&#x2f;&#x2f;pirate.example&#x2f;</textarea>"),
        "the form keeps what was typed: {}",
        refused.body
    );
    let bad_number = send(
        &harness,
        "POST",
        "/ui/sites",
        &key,
        Some("name=x&seeds=http%3A%2F%2F127.0.0.1%3A8001%2F&max_pages_per_run=many"),
    )
    .await;
    assert_eq!(bad_number.status, StatusCode::BAD_REQUEST);
    assert!(
        bad_number.body.contains("pages per run must be a number"),
        "{}",
        bad_number.body
    );

    let added = send(
        &harness,
        "POST",
        "/ui/sites",
        &key,
        Some("name=%E7%9B%97%E7%89%88%E7%AB%99&seeds=http%3A%2F%2F127.0.0.1%3A8001%2F%0D%0Ahttp%3A%2F%2F127.0.0.1%3A8001%2Fbook%2F&schedule=0+3+*+*+*&max_pages_per_run=500&rate_limit_per_second=2&render=never"),
    )
    .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let site_path = added.location.unwrap();
    let site_id = site_path.rsplit('/').next().unwrap().to_string();
    let (_, site) = harness
        .call("GET", &format!("/api/v1/sites/{site_id}"), &key, None)
        .await;
    assert_eq!(site["seeds"].as_array().unwrap().len(), 2);
    assert_eq!(site["max_pages_per_run"], 500);
    assert_eq!(site["schedule"], "0 3 * * *");
    assert_eq!(site["extraction"]["render"], "never");
    let page = send(&harness, "GET", &site_path, &key, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Nothing found on this site yet."));

    // Edited from its page: a bad seed is refused beside the form; then renamed, schedule cleared.
    let refused_edit = send(
        &harness,
        "POST",
        &format!("{site_path}/edit"),
        &key,
        Some("name=x&seeds=javascript%3Aalert(1)&schedule=&max_pages_per_run=500&rate_limit_per_second=2"),
    )
    .await;
    assert_eq!(
        refused_edit.status,
        StatusCode::BAD_REQUEST,
        "{}",
        refused_edit.body
    );
    assert!(refused_edit.body.contains("id=\"site-error\""));
    assert!(
        refused_edit.body.contains("<details open>"),
        "the edit form stays open"
    );
    let edited = send(
        &harness,
        "POST",
        &format!("{site_path}/edit"),
        &key,
        Some("name=%E6%96%B0%E5%90%8D&seeds=http%3A%2F%2F127.0.0.1%3A8001%2F&schedule=&max_pages_per_run=700&rate_limit_per_second=2"),
    )
    .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER, "{}", edited.body);
    let (_, site) = harness
        .call("GET", &format!("/api/v1/sites/{site_id}"), &key, None)
        .await;
    assert_eq!(site["name"], "新名");
    assert_eq!(site["schedule"], serde_json::Value::Null);
    assert_eq!(site["max_pages_per_run"], 700);
    assert_eq!(
        site["extraction"]["render"], "never",
        "an edit keeps how pages are read"
    );
    let foreign_edit = send(
        &harness,
        "POST",
        &format!("{site_path}/edit"),
        &harness.key_b,
        Some("name=x&seeds=http%3A%2F%2F127.0.0.1%3A8001%2F"),
    )
    .await;
    assert_eq!(foreign_edit.status, StatusCode::NOT_FOUND);

    let crawl = send(
        &harness,
        "POST",
        &format!("{site_path}/crawl"),
        &key,
        Some(""),
    )
    .await;
    assert_eq!(crawl.status, StatusCode::SEE_OTHER, "{}", crawl.body);
    assert!(harness.enqueued().await.iter().any(|task| matches!(
        &task.kind,
        TaskKind::CrawlSite { site_id: queued, .. } if queued.as_str() == site_id
    )));
    let off = send(
        &harness,
        "POST",
        &format!("{site_path}/enabled"),
        &key,
        Some("enabled=false"),
    )
    .await;
    assert_eq!(off.status, StatusCode::SEE_OTHER);
    let (_, site) = harness
        .call("GET", &format!("/api/v1/sites/{site_id}"), &key, None)
        .await;
    assert_eq!(site["enabled"], false);
    let refused = send(
        &harness,
        "POST",
        &format!("{site_path}/crawl"),
        &key,
        Some(""),
    )
    .await;
    assert_eq!(
        refused.status,
        StatusCode::CONFLICT,
        "a disabled site is not crawled"
    );
    // Another tenant can neither see nor switch it.
    let other = send(
        &harness,
        "POST",
        &format!("{site_path}/enabled"),
        &harness.key_b,
        Some("enabled=true"),
    )
    .await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_site_page_shows_what_the_site_copied_and_matches_are_reviewed_in_bulk() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let work = harness.register_work_a("w_console").await;
    let other_work = harness.register_work_a("w_other").await;
    let site = harness.create_site_a().await;
    let mut ids = Vec::new();
    for number in 0..4 {
        ids.push(
            harness
                .insert_match(
                    &work,
                    &site,
                    &format!("http://pirate.example/{number}.html"),
                    0.9,
                    number,
                )
                .await,
        );
    }
    let unrelated = harness
        .insert_match(
            &other_work,
            &site,
            "http://pirate.example/other.html",
            0.7,
            0,
        )
        .await;
    let page = send(&harness, "GET", &format!("/ui/sites/{site}"), &key, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("id=\"copied-works\">2<"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("id=\"copied-pages\">5<"),
        "{}",
        page.body
    );

    // Filtered by work: the other work's match is not listed.
    let listed = send(
        &harness,
        "GET",
        &format!("/ui/matches?work_id={work}&status="),
        &key,
        None,
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(listed.body.matches("class=\"pick\"").count(), 4);
    assert!(!listed.body.contains(unrelated.as_str()));

    let back = format!("/ui/matches?work_id={work}");
    let form = format!(
        "back={}&note=%E6%95%B4%E7%AB%A0&action=confirm&pick%3A{}=on&pick%3A{}=on&pick%3A{}=on",
        back.replace('?', "%3F").replace('=', "%3D"),
        ids[0],
        ids[1],
        ids[2]
    );
    let reviewed = send(&harness, "POST", "/ui/matches/review", &key, Some(&form)).await;
    assert_eq!(reviewed.status, StatusCode::SEE_OTHER, "{}", reviewed.body);
    assert_eq!(reviewed.location.as_deref(), Some(back.as_str()));
    for (index, id) in ids.iter().enumerate() {
        let stored = harness
            .state
            .ports
            .matches
            .get_match(&harness.publisher_a, id)
            .await
            .unwrap();
        let expected = if index < 3 {
            MatchStatus::Confirmed
        } else {
            MatchStatus::New
        };
        assert_eq!(stored.status, expected, "match {index}");
        if index < 3 {
            assert_eq!(stored.reviews[0].note.as_deref(), Some("整章"));
        }
    }
    let confirmed = send(&harness, "GET", "/ui/matches?status=confirmed", &key, None).await;
    assert_eq!(confirmed.body.matches("class=\"pick\"").count(), 3);

    let nothing = send(
        &harness,
        "POST",
        "/ui/matches/review",
        &key,
        Some("action=dismiss&back=%2Fui%2Fmatches"),
    )
    .await;
    assert_eq!(nothing.status, StatusCode::BAD_REQUEST);
    assert!(
        nothing.body.contains("select at least one match"),
        "{}",
        nothing.body
    );
    // B cannot review A's match by picking its id.
    let foreign = format!("action=dismiss&pick%3A{}=on", ids[3]);
    let refused = send(
        &harness,
        "POST",
        "/ui/matches/review",
        &harness.key_b,
        Some(&foreign),
    )
    .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn reports_are_generated_listed_and_downloaded_from_the_console() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let work = harness.register_work_a("w_report").await;
    let bad = send(
        &harness,
        "POST",
        "/ui/reports",
        &key,
        Some("format=html&since=yesterday"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("is not a date"), "{}", bad.body);
    let queued = send(
        &harness,
        "POST",
        "/ui/reports",
        &key,
        Some(&format!(
            "format=csv&work_id={work}&site_id=&since=2026-01-31"
        )),
    )
    .await;
    assert_eq!(queued.status, StatusCode::SEE_OTHER, "{}", queued.body);
    let listed = send(&harness, "GET", "/ui/reports", &key, None).await;
    assert!(listed.body.contains("queued"), "{}", listed.body);
    assert!(
        listed.body.contains(&format!(
            "work <span class=\"scope-work\" title=\"{work}\">"
        )),
        "the scope names its work (by title, the id as its tooltip)"
    );
    assert!(!listed.body.contains("class=\"download\""));

    // A worker renders it; the console then offers the download.
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
    let mut report = reports.items[0].clone();
    harness
        .state
        .ports
        .reports
        .put_artifact(&report.id, b"match_id,page_url\n")
        .await
        .unwrap();
    report.status = ReportStatus::Ready {
        artifact: report.id.to_string(),
        bytes: 18,
    };
    harness
        .state
        .ports
        .reports
        .put_report(&report)
        .await
        .unwrap();
    let listed = send(&harness, "GET", "/ui/reports", &key, None).await;
    let link = format!("/ui/reports/{}/artifact", report.id);
    assert!(listed.body.contains(&link), "{}", listed.body);
    let file = send(&harness, "GET", &link, &key, None).await;
    assert_eq!(file.status, StatusCode::OK);
    assert_eq!(file.body, "match_id,page_url\n");
    assert_eq!(
        file.disposition.as_deref(),
        Some(format!("attachment; filename=\"copyhound-{}.csv\"", report.id).as_str())
    );
    let foreign = send(&harness, "GET", &link, &harness.key_b, None).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
}

/// A multipart upload as a browser sends it: one file and some text fields.
pub(super) fn multipart(
    file_name: &str,
    file: &[u8],
    fields: &[(&str, &str)],
) -> (String, Vec<u8>) {
    let boundary = "----copyhoundconsoletest";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

pub(super) async fn upload(
    harness: &Harness,
    key: &str,
    file_name: &str,
    file: &[u8],
    fields: &[(&str, &str)],
) -> Answer {
    let (content_type, body) = multipart(file_name, file, fields);
    let session = harness.session(key).await;
    let request = Request::builder()
        .method("POST")
        .uri("/ui/works/preview")
        .header(header::COOKIE, format!("{SESSION_COOKIE}={session}"))
        .header(super::SEC_FETCH_SITE, "same-origin")
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .unwrap();
    let response = harness.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        location: None,
        disposition: None,
        cache_control: None,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

pub(super) fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn a_work_is_uploaded_previewed_edited_and_registered_from_the_console() {
    let harness = Harness::new().await;
    let key = harness.key_a.clone();
    let txt = "序言\n这是一部小说。\n第一章 风起\n天色已晚，林中起了大风。\n第二章 云涌\n少年背着柴往回走。\n第三章 雨落\n雨下了一夜。\n";
    // GBK bytes: the preview decodes them as the API would.
    let (gbk, _, _) = encoding_rs::GBK.encode(txt);
    let preview = upload(
        &harness,
        &key,
        "风起青萍.txt",
        &gbk,
        &[
            ("title", "风起青萍"),
            ("author", "佚名"),
            ("kind", "novel"),
            ("pattern", ""),
        ],
    )
    .await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert!(preview.body.contains("gb18030"), "{}", preview.body);
    assert!(preview.body.contains("天色已晚"), "{}", preview.body);
    let count = preview.body.matches("name=\"text_").count();
    assert!(count >= 3, "{count} chapters: {}", preview.body);

    // The reviewer drops the preface, retitles chapter one, merges chapter three into two.
    let titles: Vec<String> = (0..count)
        .map(|index| {
            let marker = format!("name=\"title_{index}\" value=\"");
            let start = preview.body.find(&marker).unwrap() + marker.len();
            let end = start + preview.body[start..].find('"').unwrap();
            preview.body[start..end].to_string()
        })
        .collect();
    let first = titles
        .iter()
        .position(|title| title.contains("风起"))
        .unwrap();
    let mut form = format!(
        "count={count}&title={}&author=&kind=novel&id=w_upload",
        encode("风起青萍")
    );
    for (index, stored_title) in titles.iter().enumerate().skip(first) {
        form.push_str(&format!("&keep_{index}=on"));
        let title = if index == first {
            "第一章 大风".to_string()
        } else {
            stored_title.clone()
        };
        let text = match index - first {
            0 => "天色已晚，林中起了大风。",
            1 => "少年背着柴往回走。",
            _ => "雨下了一夜。",
        };
        form.push_str(&format!(
            "&title_{index}={}&text_{index}={}",
            encode(&title),
            encode(text)
        ));
        if index - first == 2 {
            form.push_str(&format!("&merge_{index}=on"));
        }
    }
    let registered = send(&harness, "POST", "/ui/works/confirm", &key, Some(&form)).await;
    assert_eq!(
        registered.status,
        StatusCode::SEE_OTHER,
        "{}",
        registered.body
    );
    assert_eq!(registered.location.as_deref(), Some("/ui/works/w_upload"));
    let (_, work) = harness
        .call("GET", "/api/v1/works/w_upload", &key, None)
        .await;
    let chapters = work["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), 2, "{work}");
    assert_eq!(chapters[0]["title"], "第一章 大风");
    let (_, second) = harness
        .call(
            "GET",
            &format!(
                "/api/v1/works/w_upload/chapters/{}",
                chapters[1]["id"].as_str().unwrap()
            ),
            &key,
            None,
        )
        .await;
    assert_eq!(
        second["text"], "少年背着柴往回走。\n雨下了一夜。",
        "{second}"
    );

    // JSON uploads preview too; a bad file is a clear error, and nothing is stored.
    let json = br#"{"title": "News", "kind": "news", "chapters": [{"title": "A", "text": "first article"}]}"#;
    let preview = upload(&harness, &key, "feed.json", json, &[]).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert!(preview.body.contains("first article"));
    assert!(
        preview.body.contains("<option value=\"news\" selected>"),
        "{}",
        preview.body
    );
    let broken = upload(&harness, &key, "broken.json", b"{\"title\": ", &[]).await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST);
    assert!(broken.body.contains("is not valid JSON"), "{}", broken.body);

    // The release timetable, on the work's page too: refused when faster than hourly.
    let fast = send(
        &harness,
        "POST",
        "/ui/works/w_upload/release-schedule",
        &key,
        Some("cron=*+*+*+*+*"),
    )
    .await;
    assert_eq!(fast.status, StatusCode::BAD_REQUEST, "{}", fast.body);
    let timed = send(
        &harness,
        "POST",
        "/ui/works/w_upload/release-schedule",
        &key,
        Some("cron=0+8+*+*+*"),
    )
    .await;
    assert_eq!(timed.status, StatusCode::SEE_OTHER, "{}", timed.body);
    let page = send(&harness, "GET", "/ui/works/w_upload", &key, None).await;
    assert!(page.body.contains("value=\"0 8 * * *\""), "{}", page.body);
    assert!(page.body.contains("id=\"watched\""), "{}", page.body);

    // Licensed hosts, edited on the work's page; a bad host is refused beside the form.
    let bad = send(
        &harness,
        "POST",
        "/ui/works/w_upload/licensed-hosts",
        &key,
        Some("hosts=not+a+host%21"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert!(bad.body.contains("id=\"hosts-error\""), "{}", bad.body);
    let saved = send(
        &harness,
        "POST",
        "/ui/works/w_upload/licensed-hosts",
        &key,
        Some("hosts=partner.example%0D%0Ahttps%3A%2F%2Fbooks.partner.example%2Fshelf%0D%0A"),
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let (_, hosts) = harness
        .call("GET", "/api/v1/works/w_upload/licensed-hosts", &key, None)
        .await;
    assert_eq!(
        hosts["hosts"],
        serde_json::json!(["books.partner.example", "partner.example"])
    );
    let foreign = send(
        &harness,
        "POST",
        "/ui/works/w_upload/licensed-hosts",
        &harness.key_b,
        Some("hosts=x.example"),
    )
    .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);

    // Deleting from the console; another tenant cannot.
    let refused = send(
        &harness,
        "POST",
        "/ui/works/w_upload/delete",
        &harness.key_b,
        Some(""),
    )
    .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    let deleted = send(
        &harness,
        "POST",
        "/ui/works/w_upload/delete",
        &key,
        Some(""),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    let (status, _) = harness
        .call("GET", "/api/v1/works/w_upload", &key, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn admins_add_named_people_whose_reviews_carry_their_name() {
    let harness = Harness::new().await;
    let admin = harness.admin_key("pub_a", "Admin A").await;
    let reviewer_page = send(&harness, "GET", "/ui/keys", &harness.key_a, None).await;
    assert_eq!(reviewer_page.status, StatusCode::FORBIDDEN);

    let created = send_once(
        &harness,
        "/ui/keys",
        "/ui/keys",
        &admin,
        "name=%E6%9D%8E%E4%BC%9F&role=publisher",
    )
    .await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    let start =
        created.body.find("id=\"new-key-secret\">").unwrap() + "id=\"new-key-secret\">".len();
    let end = start + created.body[start..].find('<').unwrap();
    let secret = created.body[start..end].to_string();
    assert!(secret.starts_with("chk_"), "{secret}");
    let listed = send(&harness, "GET", "/ui/keys", &admin, None).await;
    assert!(listed.body.contains("李伟"));
    assert!(!listed.body.contains(&secret), "the secret is shown once");

    let work = harness.register_work_a("w_people").await;
    let site = harness.create_site_a().await;
    let found = harness
        .insert_match(&work, &site, "http://pirate.example/people.html", 0.9, 0)
        .await;
    let (status, _) = harness
        .call(
            "POST",
            &format!("/api/v1/matches/{found}/review"),
            &secret,
            Some(serde_json::json!({"action": "confirm"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let stored = harness
        .state
        .ports
        .matches
        .get_match(&harness.publisher_a, &found)
        .await
        .unwrap();
    let by = &stored.reviews[0].by;
    assert!(by.starts_with("李伟 (key_") && by.ends_with(')'), "{by}");

    // Revoked from the console: the key authenticates nobody; B's admin cannot revoke A's keys.
    let key_id = secret
        .trim_start_matches("chk_")
        .rsplit_once('_')
        .unwrap()
        .0
        .to_string();
    let (_, b_admin) = harness
        .call(
            "POST",
            "/api/v1/admin/publishers/pub_b/keys",
            super::ADMIN_KEY,
            Some(serde_json::json!({"role": "admin"})),
        )
        .await;
    let b_admin = b_admin["key"].as_str().unwrap().to_string();
    let foreign = send(
        &harness,
        "POST",
        &format!("/ui/keys/{key_id}/revoke"),
        &b_admin,
        Some(""),
    )
    .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let revoked = send(
        &harness,
        "POST",
        &format!("/ui/keys/{key_id}/revoke"),
        &admin,
        Some(""),
    )
    .await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER, "{}", revoked.body);
    let (status, _) = harness.call("GET", "/api/v1/me", &secret, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, keys) = harness
        .call("GET", "/api/v1/admin/publishers/pub_a/keys", &admin, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let revoked = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|key| key["name"] == "李伟")
        .unwrap();
    assert_eq!(revoked["revoked"], true);
    assert!(!keys.to_string().contains("secret"), "{keys}");
}

#[tokio::test]
async fn the_console_speaks_chinese_when_asked() {
    let harness = Harness::new().await;
    let session = harness.session(&harness.key_a).await;
    let ask = |accept: Option<&str>, cookie: &str| {
        let mut builder = Request::builder().uri("/ui/sites").header(
            header::COOKIE,
            format!("{SESSION_COOKIE}={session}{cookie}"),
        );
        if let Some(accept) = accept {
            builder = builder.header(header::ACCEPT_LANGUAGE, accept);
        }
        builder.body(Body::empty()).unwrap()
    };
    let body = |response: axum::response::Response| async move {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    };
    let english = body(harness.router.clone().oneshot(ask(None, "")).await.unwrap()).await;
    assert!(english.contains("Add a site") && english.contains("<html lang=\"en\">"));
    let chinese = body(
        harness
            .router
            .clone()
            .oneshot(ask(Some("zh-CN,zh;q=0.9"), ""))
            .await
            .unwrap(),
    )
    .await;
    assert!(chinese.contains("添加站点"), "{chinese}");
    assert!(chinese.contains("<html lang=\"zh-CN\">"));
    assert!(chinese.contains(">站点<") && chinese.contains(">English<"));
    // The cookie set by the switch link wins over the browser's language.
    let switch = harness
        .router
        .clone()
        .oneshot(
            Request::builder()
                .uri("/ui/lang/en")
                .header(header::REFERER, "http://127.0.0.1:8080/ui/sites?x=1")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(switch.status(), StatusCode::SEE_OTHER);
    assert_eq!(switch.headers()[header::LOCATION], "/ui/sites?x=1");
    let cookie = switch.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .to_string();
    assert!(cookie.starts_with("copyhound_lang=en;"), "{cookie}");
    let english = body(
        harness
            .router
            .clone()
            .oneshot(ask(Some("zh-CN"), "; copyhound_lang=en"))
            .await
            .unwrap(),
    )
    .await;
    assert!(english.contains("Add a site"));
    // A foreign referer never redirects off the console.
    let switch = harness
        .router
        .clone()
        .oneshot(
            Request::builder()
                .uri("/ui/lang/zh")
                .header(header::REFERER, "//evil.example/")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let location = switch.headers()[header::LOCATION].to_str().unwrap();
    assert!(
        location.starts_with('/') && !location.starts_with("//"),
        "{location}"
    );
}

/// Text of the element with `id` in a console page.
fn element_text(body: &str, id: &str) -> String {
    let marker = format!("id=\"{id}\">");
    let start = body.find(&marker).map(|at| at + marker.len()).unwrap();
    let end = start + body[start..].find('<').unwrap();
    body[start..end].to_string()
}

#[tokio::test]
async fn the_operator_creates_a_publisher_and_its_first_admin_from_the_console() {
    let harness = Harness::new().await;
    let operator = super::ADMIN_KEY;
    // The operator's login lands on the publishers page; its session has no publisher console.
    let request = Request::builder()
        .method("POST")
        .uri("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(super::SEC_FETCH_SITE, "same-origin")
        .body(Body::from(format!("key={operator}")))
        .unwrap();
    let login = harness.router.clone().oneshot(request).await.unwrap();
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
    assert_eq!(login.headers()[header::LOCATION], "/ui/operator");
    let home = send(&harness, "GET", "/", operator, None).await;
    assert_eq!(home.location.as_deref(), Some("/ui/operator"));
    let listed = send(&harness, "GET", "/ui/operator", operator, None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert!(listed.body.contains("pub_a") && listed.body.contains("pub_b"));

    let created = send_once(
        &harness,
        "/ui/operator",
        "/ui/operator/publishers",
        operator,
        "name=%E9%9D%92%E8%90%8D%E6%96%87%E5%AD%A6&kind=books&id=pub_qp&holder=Wang+Fang",
    )
    .await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    assert_eq!(created.cache_control.as_deref(), Some("no-store"));
    assert_eq!(element_text(&created.body, "new-publisher-id"), "pub_qp");
    let secret = element_text(&created.body, "new-key-secret");
    let (status, me) = harness.call("GET", "/api/v1/me", &secret, None).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["publisher_id"], "pub_qp");
    assert_eq!(me["role"], "admin");
    // The new admin's console is their own, empty publisher's.
    let works = send(&harness, "GET", "/ui/works", &secret, None).await;
    assert_eq!(works.status, StatusCode::OK);
    let again = send(&harness, "GET", "/ui/operator", operator, None).await;
    assert!(again.body.contains("青萍文学"));
    assert!(!again.body.contains(&secret), "the secret is shown once");

    // A taken id is refused beside the form, which keeps what was typed.
    let taken = send_once(
        &harness,
        "/ui/operator",
        "/ui/operator/publishers",
        operator,
        "name=Other&kind=news&id=pub_qp&holder=Li",
    )
    .await;
    assert_eq!(taken.status, StatusCode::OK);
    assert!(element_text(&taken.body, "publisher-error").contains("exists"));
    assert!(taken.body.contains("value=\"Other\""));
    assert!(!taken.body.contains("new-key-secret"));
    let bad_kind = send_once(
        &harness,
        "/ui/operator",
        "/ui/operator/publishers",
        operator,
        "name=Other&kind=films",
    )
    .await;
    assert!(element_text(&bad_kind.body, "publisher-error").contains("kind"));

    // Another admin key for a publisher whose admin lost theirs; none for an unknown one.
    let reissued = send_once(
        &harness,
        "/ui/operator",
        "/ui/operator/publishers/pub_qp/keys",
        operator,
        "holder=Zhao+Lei",
    )
    .await;
    let second = element_text(&reissued.body, "new-key-secret");
    assert_ne!(second, secret);
    let (_, me) = harness.call("GET", "/api/v1/me", &second, None).await;
    assert_eq!(me["publisher_id"], "pub_qp");
    let unknown = send_once(
        &harness,
        "/ui/operator",
        "/ui/operator/publishers/pub_nobody/keys",
        operator,
        "holder=X",
    )
    .await;
    assert!(!unknown.body.contains("new-key-secret"));
    assert!(unknown.body.contains("id=\"publisher-error\""));

    // A publisher's admin is sent to its own console and creates nothing.
    let refused = send(
        &harness,
        "POST",
        "/ui/operator/publishers",
        &secret,
        Some("name=Sneaky&kind=books&id=pub_sneaky"),
    )
    .await;
    assert_eq!(refused.location.as_deref(), Some("/"));
    let (status, _) = harness
        .call("GET", "/api/v1/admin/publishers", operator, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        harness
            .state
            .ports
            .publishers
            .get_publisher(&"pub_sneaky".parse().unwrap())
            .await
            .is_err()
    );
    let page = send(&harness, "GET", "/ui/operator", &harness.key_a, None).await;
    assert_eq!(page.location.as_deref(), Some("/"));
}

#[tokio::test]
async fn admins_schedule_reports_from_the_api_and_the_console() {
    use serde_json::json;
    let harness = Harness::new().await;
    let admin_key = harness.admin_key("pub_a", "Admin A").await;
    let (status, view) = harness
        .call("GET", "/api/v1/report-schedules", &harness.key_a, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view, json!({"schedules": []}));
    let weekly = json!({"schedules": [{"cron": "0 6 * * 1", "format": "csv"}]});
    let (status, _) = harness
        .call(
            "PUT",
            "/api/v1/report-schedules",
            &harness.key_a,
            Some(weekly.clone()),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "reviewers read schedules only"
    );
    let (status, view) = harness
        .call("PUT", "/api/v1/report-schedules", &admin_key, Some(weekly))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["schedules"][0]["cron"], "0 6 * * 1");
    assert!(
        view["schedules"][0]["next_run"].as_str().is_some(),
        "{view}"
    );
    for bad in [
        json!({"schedules": [{"cron": "*/5 * * * *", "format": "html"}]}),
        json!({"schedules": [{"cron": "0 0 * * * *", "format": "html"}]}),
        json!({"schedules": [{"cron": "0 6 * * 1", "format": "docx"}]}),
        json!({"schedules": vec![json!({"cron": "0 6 * * 1", "format": "html"}); 11]}),
    ] {
        let (status, body) = harness
            .call(
                "PUT",
                "/api/v1/report-schedules",
                &admin_key,
                Some(bad.clone()),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (_, other) = harness
        .call("GET", "/api/v1/report-schedules", &harness.key_b, None)
        .await;
    assert_eq!(other, json!({"schedules": []}), "B has its own");

    // The console form: rows of cron and format; a blank row is dropped.
    let saved = send(
        &harness,
        "POST",
        "/ui/reports/schedules",
        &admin_key,
        Some("cron_0=0+6+*+*+1&format_0=csv&cron_1=0+3+*+*+*&format_1=html&cron_2=&format_2=html"),
    )
    .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert!(saved.body.contains("id=\"schedules-saved\""));
    assert_eq!(saved.body.matches("class=\"muted next-run\">20").count(), 2);
    let stored = harness
        .state
        .ports
        .publishers
        .get_publisher(&harness.publisher_a)
        .await
        .unwrap();
    assert_eq!(stored.report_schedules.len(), 2);
    let refused = send(
        &harness,
        "POST",
        "/ui/reports/schedules",
        &admin_key,
        Some("cron_0=*+*+*+*+*&format_0=pdf"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(element_text(&refused.body, "schedule-error").contains("once an hour"));
    assert!(
        refused.body.contains("value=\"* * * * *\""),
        "the typed row stays"
    );
    let reviewer = send(
        &harness,
        "POST",
        "/ui/reports/schedules",
        &harness.key_a,
        Some("cron_0=0+6+*+*+1&format_0=csv"),
    )
    .await;
    assert_eq!(reviewer.status, StatusCode::FORBIDDEN);
    let page = send(&harness, "GET", "/ui/reports", &harness.key_a, None).await;
    assert!(page.body.contains("value=\"0 3 * * *\""));
    assert!(
        !page.body.contains("id=\"save-schedules\""),
        "reviewers see, not edit"
    );
}

#[tokio::test]
async fn matches_sort_by_score_in_the_api_and_the_console() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_sorted").await;
    let site = harness.create_site_a().await;
    for (number, score, age) in [(1, 0.62, 0), (2, 0.97, 3), (3, 0.81, 1), (4, 0.55, 2)] {
        harness
            .insert_match(
                &work,
                &site,
                &format!("http://pirate.example/sorted/{number}.html"),
                score,
                age,
            )
            .await;
    }
    let (status, listed) = harness
        .call(
            "GET",
            "/api/v1/matches?sort=score&limit=3",
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let scores: Vec<f64> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["score"].as_f64().unwrap())
        .collect();
    assert_eq!(scores.len(), 3);
    assert!(
        scores.windows(2).all(|pair| pair[0] >= pair[1]),
        "{scores:?}"
    );
    assert!((scores[0] - 0.97).abs() < 1e-6, "{scores:?}");
    let next = listed["next"].as_str().unwrap();
    let (_, rest) = harness
        .call(
            "GET",
            &format!("/api/v1/matches?sort=score&limit=3&after={next}"),
            &harness.key_a,
            None,
        )
        .await;
    assert_eq!(rest["items"].as_array().unwrap().len(), 1);
    assert!((rest["items"][0]["score"].as_f64().unwrap() - 0.55).abs() < 1e-6);
    let (status, body) = harness
        .call("GET", "/api/v1/matches?sort=loudest", &harness.key_a, None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // The console keeps the order in its filters and its links.
    let page = send(
        &harness,
        "GET",
        "/ui/matches?sort=score",
        &harness.key_a,
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    // Pages escape `/` as `&#x2f;`.
    let order: Vec<usize> = ["2", "3", "1", "4"]
        .map(|number| format!("sorted&#x2f;{number}.html"))
        .iter()
        .map(|url| page.body.find(url).unwrap())
        .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{order:?}");
    assert!(page.body.contains("<option value=\"score\" selected>"));
    let newest = send(&harness, "GET", "/ui/matches", &harness.key_a, None).await;
    assert!(
        newest.body.find("sorted&#x2f;1.html").unwrap()
            < newest.body.find("sorted&#x2f;2.html").unwrap(),
        "newest first by default"
    );
}

#[tokio::test]
async fn a_registered_work_is_retitled_and_its_chapters_edited_from_the_console() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_edit").await;
    let (status, _) = harness
        .call(
            "PUT",
            &format!("/api/v1/works/{work}/licensed-hosts"),
            &harness.key_a,
            Some(serde_json::json!({"hosts": ["partner.example"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let editor = send(
        &harness,
        "GET",
        &format!("/ui/works/{work}/edit"),
        &harness.key_a,
        None,
    )
    .await;
    assert_eq!(editor.status, StatusCode::OK, "{}", editor.body);
    let count = editor.body.matches("name=\"text_").count();
    assert!(count >= 1, "{}", editor.body);
    assert!(
        editor.body.contains(&format!(
            "action=\"&#x2f;ui&#x2f;works&#x2f;{work}&#x2f;replace\""
        )),
        "{}",
        editor.body
    );

    // Retitle the work and its first chapter, and add a line to its text.
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("count", "1")
        .append_pair("title", "新书名")
        .append_pair("author", "佚名")
        .append_pair("kind", "novel")
        .append_pair("keep_0", "on")
        .append_pair("title_0", "第一章 新题")
        .append_pair(
            "text_0",
            "天色已晚，林中起了大风。\n少年背着柴往回走。\n远处传来钟声。",
        );
    let saved = send(
        &harness,
        "POST",
        &format!("/ui/works/{work}/replace"),
        &harness.key_a,
        Some(&form.finish()),
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    assert_eq!(
        saved.location.as_deref(),
        Some(format!("/ui/works/{work}").as_str())
    );
    let stored = harness
        .state
        .ports
        .works
        .get_work(&harness.publisher_a, &work)
        .await
        .unwrap();
    assert_eq!(stored.title, "新书名");
    assert_eq!(
        stored.licensed_hosts,
        ["partner.example"],
        "licensed hosts stay"
    );
    let chapters = harness
        .state
        .ports
        .works
        .list_chapters(&work)
        .await
        .unwrap();
    assert_eq!(chapters.len(), 1);
    assert_eq!(chapters[0].title, "第一章 新题");
    assert!(chapters[0].text.contains("远处传来钟声"));

    // Another tenant's work is not found; an empty editor is refused.
    let foreign = send(
        &harness,
        "GET",
        &format!("/ui/works/{work}/edit"),
        &harness.key_b,
        None,
    )
    .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let foreign = send(
        &harness,
        "POST",
        &format!("/ui/works/{work}/replace"),
        &harness.key_b,
        Some("count=1&title=x&author=&kind=novel&keep_0=on&title_0=a&text_0=b"),
    )
    .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let empty = send(
        &harness,
        "POST",
        &format!("/ui/works/{work}/replace"),
        &harness.key_a,
        Some("count=1&title=x&author=&kind=novel"),
    )
    .await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", empty.body);
    assert_eq!(
        harness
            .state
            .ports
            .works
            .list_chapters(&work)
            .await
            .unwrap()
            .len(),
        1,
        "nothing changed"
    );
}

#[tokio::test]
async fn a_sites_audience_is_set_and_its_matches_are_compared_again() {
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_reach").await;
    let site = harness.create_site_a().await;
    harness
        .insert_match(&work, &site, "http://pirate.example/reach.html", 0.8, 0)
        .await;
    let compares = |tasks: Vec<copyhound_core::model::Task>| {
        tasks
            .into_iter()
            .filter(|task| matches!(task.kind, TaskKind::ComparePage { .. }))
            .count()
    };
    let path = format!("/api/v1/sites/{site}");
    let patch = |audience: serde_json::Value| {
        harness.call(
            "PATCH",
            &path,
            &harness.key_a,
            Some(serde_json::json!({ "audience": audience })),
        )
    };
    let before = compares(harness.enqueued().await);
    let (status, body) = patch(serde_json::json!(5_000_000)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["audience"], 5_000_000);
    assert_eq!(
        compares(harness.enqueued().await),
        before + 1,
        "the site's matched page is compared again, to rescore"
    );
    // The same estimate again changes nothing; too large is refused; null clears it.
    patch(serde_json::json!(5_000_000)).await;
    assert_eq!(compares(harness.enqueued().await), before + 1);
    let (status, _) = patch(serde_json::json!(2_000_000_000_000_u64)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // The console's edit form: an empty field clears the estimate.
    let edit = |audience: &str| {
        let form = format!(
            "name=Pirate&seeds=http%3A%2F%2Fpirate.example%2F&schedule=&max_pages_per_run=&rate_limit_per_second=&audience={audience}"
        );
        let path = format!("/ui/sites/{site}/edit");
        let harness = &harness;
        async move { send(harness, "POST", &path, &harness.key_a, Some(&form)).await }
    };
    let cleared = edit("").await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER, "{}", cleared.body);
    let stored = harness.state.ports.sites.get_site(&site).await.unwrap();
    assert_eq!(stored.audience, None);
    let set = edit("120000").await;
    assert_eq!(set.status, StatusCode::SEE_OTHER, "{}", set.body);
    let page = send(
        &harness,
        "GET",
        &format!("/ui/sites/{site}"),
        &harness.key_a,
        None,
    )
    .await;
    assert!(
        page.body
            .contains("name=\"audience\" min=\"0\" step=\"1\" value=\"120000\""),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn a_reloaded_or_resent_key_form_creates_one_publisher_and_one_key() {
    let harness = Harness::new().await;
    let operator = super::ADMIN_KEY;
    let named = |name: &'static str| {
        let harness = &harness;
        async move {
            let (_, listed) = harness
                .call("GET", "/api/v1/admin/publishers", operator, None)
                .await;
            listed["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|publisher| publisher["name"] == name)
                .count()
        }
    };
    // No id: each creation would mint a new publisher.
    let page = send(&harness, "GET", "/ui/operator", operator, None).await;
    let form = format!(
        "name=%E9%9D%92%E8%90%8D&kind=books&holder=Wang&once={}",
        super::form_token(&page.body)
    );
    let first = send(
        &harness,
        "POST",
        "/ui/operator/publishers",
        operator,
        Some(&form),
    )
    .await;
    assert_eq!(first.status, StatusCode::SEE_OTHER, "{}", first.body);
    assert_eq!(first.location.as_deref(), Some("/ui/operator"));
    assert!(
        !first.body.contains("chk_"),
        "the secret is not on the post's answer"
    );
    // A double click, or the browser sending the form again.
    let again = send(
        &harness,
        "POST",
        "/ui/operator/publishers",
        operator,
        Some(&form),
    )
    .await;
    assert_eq!(again.status, StatusCode::SEE_OTHER);
    assert_eq!(named("青萍").await, 1);
    // The page after the redirect shows the key once; reloading it shows nothing more.
    let shown = send(&harness, "GET", "/ui/operator", operator, None).await;
    let secret = element_text(&shown.body, "new-key-secret");
    assert!(secret.starts_with("chk_"), "{secret}");
    assert_eq!(shown.cache_control.as_deref(), Some("no-store"));
    let reloaded = send(&harness, "GET", "/ui/operator", operator, None).await;
    assert!(!reloaded.body.contains("new-key-secret"));
    assert_eq!(named("青萍").await, 1);
    // A form from before tokens (or forged without one) creates nothing.
    let stale = send(
        &harness,
        "POST",
        "/ui/operator/publishers",
        operator,
        Some("name=%E9%9D%92%E8%90%8D&kind=books"),
    )
    .await;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST);
    assert_eq!(named("青萍").await, 1);

    // The same for a publisher admin's people page.
    let admin = harness.admin_key("pub_a", "Admin A").await;
    let page = send(&harness, "GET", "/ui/keys", &admin, None).await;
    let form = format!(
        "name=Li+Wei&role=publisher&once={}",
        super::form_token(&page.body)
    );
    for _ in 0..2 {
        let posted = send(&harness, "POST", "/ui/keys", &admin, Some(&form)).await;
        assert_eq!(posted.status, StatusCode::SEE_OTHER, "{}", posted.body);
    }
    let shown = send(&harness, "GET", "/ui/keys", &admin, None).await;
    assert!(element_text(&shown.body, "new-key-secret").starts_with("chk_"));
    let reloaded = send(&harness, "GET", "/ui/keys", &admin, None).await;
    assert!(!reloaded.body.contains("new-key-secret"));
    let (_, keys) = harness
        .call("GET", "/api/v1/admin/publishers/pub_a/keys", &admin, None)
        .await;
    let li_wei = keys
        .as_array()
        .unwrap()
        .iter()
        .filter(|key| key["name"] == "Li Wei")
        .count();
    assert_eq!(li_wei, 1, "{keys}");
}

/// A run's rendered pages, their cost and its unreadable pages (by reason,
/// said in words) are on the site's page.
#[tokio::test]
async fn a_sites_runs_show_rendered_and_unreadable_pages() {
    let harness = Harness::new().await;
    let site_id = harness.create_site_a().await;
    let mut run = copyhound_core::model::CrawlRun {
        id: copyhound_core::ids::CrawlRunId::generate(),
        site_id: site_id.clone(),
        status: copyhound_core::model::CrawlRunStatus::Succeeded,
        created_at: chrono::Utc::now(),
        started_at: Some(chrono::Utc::now()),
        finished_at: Some(chrono::Utc::now()),
        counters: copyhound_core::model::CrawlCounters::default(),
        recent_errors: vec![
            "http://127.0.0.1:8001/f.html: unreadable: text drawn by a site font".into(),
        ],
        scope: None,
    };
    run.counters.fetched = 9;
    run.counters.rendered = 3;
    run.counters.render_ms = 1_500;
    run.counters.unreadable.insert("private_use".into(), 2);
    run.counters.unreadable.insert("script_not_run".into(), 1);
    harness.state.ports.sites.put_crawl_run(&run).await.unwrap();
    let page = send(
        &harness,
        "GET",
        &format!("/ui/sites/{site_id}"),
        &harness.key_a.clone(),
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("3 (1.5 s)"), "{}", page.body);
    assert!(
        page.body
            .contains("text drawn by a site font that could not be decoded: 2"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("text written by a script that did not run: 1")
    );
}

/// A match on text read through the site's web font, after its scripts ran,
/// says so on its page: the raw page holds other code points.
#[tokio::test]
async fn a_match_page_says_how_the_text_was_read() {
    let harness = Harness::new().await;
    let work_id = harness.register_work_a("w_reading").await;
    let site_id = harness.create_site_a().await;
    let match_id = harness
        .insert_match(&work_id, &site_id, "http://127.0.0.1:8001/r.html", 0.9, 0)
        .await;
    let key = harness.key_a.clone();
    let plain = send(
        &harness,
        "GET",
        &format!("/ui/matches/{match_id}"),
        &key,
        None,
    )
    .await;
    assert_eq!(plain.status, StatusCode::OK, "{}", plain.body);
    assert!(
        !plain.body.contains("id=\"text-reading\""),
        "plain text says nothing"
    );
    let mut found = harness
        .state
        .ports
        .matches
        .get_match(&harness.publisher_a, &match_id)
        .await
        .unwrap();
    found.page_reading.rendered = true;
    found.page_reading.font_decoded_chars = 640;
    harness
        .state
        .ports
        .matches
        .upsert_match(&found)
        .await
        .unwrap();
    let page = send(
        &harness,
        "GET",
        &format!("/ui/matches/{match_id}"),
        &key,
        None,
    )
    .await;
    assert!(page.body.contains("id=\"text-reading\""), "{}", page.body);
    assert!(
        page.body
            .contains("640 characters decoded through the site"),
        "{}",
        page.body
    );
    assert!(page.body.contains("scripts ran in a browser"));
}
