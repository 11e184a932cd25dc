//! A legal desk reads titles, not ids: the header names the publisher and
//! the person, the dashboard, the match list and the match page name works,
//! chapters and sites by title (ids as tooltips), and a match whose work was
//! deleted still renders, showing the id.

use axum::http::StatusCode;

use super::{Harness, send};

/// The text of the element with `id` (up to its first child tag).
fn element_text(body: &str, id: &str) -> String {
    let marker = format!("id=\"{id}\"");
    let start = body.find(&marker).unwrap_or_else(|| panic!("no #{id}"));
    let start = start + body[start..].find('>').unwrap() + 1;
    let end = start + body[start..].find('<').unwrap();
    body[start..end].trim().to_string()
}

#[tokio::test]
async fn the_console_names_works_chapters_sites_and_people_by_title() {
    let harness = Harness::new().await;
    let work_id = harness.register_work_a("w_feng").await;
    let site_id = harness.create_site_a().await;
    let match_id = harness
        .insert_match(&work_id, &site_id, "http://127.0.0.1:8001/1.html", 0.9, 0)
        .await;
    let gone: copyhound_core::ids::WorkId = "w_gone".parse().unwrap();
    let orphan = harness
        .insert_match(&gone, &site_id, "http://127.0.0.1:8001/2.html", 0.8, 0)
        .await;
    let admin = harness.admin_key("pub_a", "李伟").await;

    for path in ["/", "/ui/matches"] {
        let page = send(&harness, "GET", path, &admin, None).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
        assert_eq!(
            element_text(&page.body, "viewer"),
            "Publisher A · 李伟",
            "{path}"
        );
        assert!(
            !page.body.contains(">pub_a<"),
            "{path}: the header names the publisher"
        );
        assert!(
            page.body.contains(&format!(
                "<a href=\"/ui/works/{work_id}\" title=\"{work_id}\">风起青萍</a> / <span title=\"c_0001\">第一章 风起</span>"
            )),
            "{path}: {}",
            page.body
        );
        assert!(!page.body.contains(&format!(">{work_id}<")), "{path}");
        // The deleted work's match is listed, by id.
        assert!(page.body.contains(&format!(">{gone}</span>")), "{path}");
    }

    let page = send(
        &harness,
        "GET",
        &format!("/ui/matches/{match_id}"),
        &admin,
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("<title>风起青萍 · 第一章 风起 · CopyHound</title>"),
        "{}",
        page.body
    );
    assert_eq!(element_text(&page.body, "copying-site"), "盗版小说网");
    assert!(
        page.body
            .contains(&format!("title=\"{work_id}\">风起青萍</a>"))
    );
    let page = send(
        &harness,
        "GET",
        &format!("/ui/matches/{orphan}"),
        &admin,
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains(&format!("<title>{gone} · c_0001 · CopyHound</title>"))
    );

    // The site page lists what the site copied by title.
    let page = send(
        &harness,
        "GET",
        &format!("/ui/sites/{site_id}"),
        &admin,
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains(&format!(
            "<a href=\"/ui/works/{work_id}\" title=\"{work_id}\">风起青萍</a>"
        )),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("title=\"c_0001\">第一章 风起</a>"),
        "{}",
        page.body
    );
    assert!(page.body.contains(&format!(">{gone}</span>")));

    // The work page names its matches' chapters; a report's scope names its work and site.
    let page = send(
        &harness,
        "GET",
        &format!("/ui/works/{work_id}"),
        &admin,
        None,
    )
    .await;
    assert!(
        page.body.contains("<td title=\"c_0001\">第一章 风起</td>"),
        "{}",
        page.body
    );
    let (status, _) = harness
        .call(
            "POST",
            "/api/v1/reports",
            &admin,
            Some(serde_json::json!({"format": "csv", "work_id": work_id, "site_id": site_id})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let page = send(&harness, "GET", "/ui/reports", &admin, None).await;
    assert!(
        page.body.contains(&format!(
            "<span class=\"scope-work\" title=\"{work_id}\">风起青萍</span>"
        )),
        "{}",
        page.body
    );
    assert!(page.body.contains(&format!(
        "<span class=\"scope-site\" title=\"{site_id}\">盗版小说网</span>"
    )));

    // A key without a name: the publisher alone.
    let page = send(&harness, "GET", "/", &harness.key_a, None).await;
    assert_eq!(element_text(&page.body, "viewer"), "Publisher A");
}
