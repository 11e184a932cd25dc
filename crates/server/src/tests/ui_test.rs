//! Every admin UI page, walked as a logged-in reviewer with more than one page
//! of data, following "next page" links to the end.

use axum::http::StatusCode;

use super::Harness;

/// More matches than one UI page (the default page is 50).
const MATCHES: usize = 120;

async fn get_page(harness: &Harness, path: &str, key: &str) -> (StatusCode, String) {
    let answer = super::send(harness, "GET", path, key, None).await;
    (answer.status, answer.body)
}

/// Returns the target of the page's "next page" link, unescaped.
fn next_link(html: &str) -> Option<String> {
    let end = html.find("\">Next page")?;
    let start = html[..end].rfind("href=\"")? + "href=\"".len();
    Some(html[start..end].replace("&amp;", "&"))
}

#[tokio::test]
async fn every_ui_page_renders_with_several_pages_of_data() {
    for harness in Harness::each().await {
        let work = harness.register_work_a("w_ui").await;
        harness.register_work_a("w_ui_2").await;
        let site = harness.create_site_a().await;
        let mut ids = Vec::new();
        for number in 0..MATCHES {
            let url = format!("http://pirate.example/{number}.html");
            ids.push(
                harness
                    .insert_match(&work, &site, &url, 0.5 + (number % 5) as f32 / 10.0, 0)
                    .await,
            );
        }
        let key = harness.key_a.clone();
        let fixed = [
            "/".to_string(),
            "/ui/works".to_string(),
            format!("/ui/works/{work}"),
            "/ui/sites".to_string(),
            format!("/ui/sites/{site}"),
            format!("/ui/matches/{}", ids[0]),
            "/ui/matches?status=new".to_string(),
            "/ui/matches?limit=7".to_string(),
            "/ui/policy".to_string(),
            "/ui/reports".to_string(),
            format!("/ui/matches?work_id={work}&site_id={site}&min_score=0.6&status="),
        ];
        for path in &fixed {
            let (status, html) = get_page(&harness, path, &key).await;
            assert_eq!(status, StatusCode::OK, "{path}: {html}");
            assert!(!html.contains("internal error"), "{path}");
        }

        // The match list, page after page.
        let mut path = "/ui/matches".to_string();
        let mut seen = 0;
        let mut pages = 0;
        loop {
            let (status, html) = get_page(&harness, &path, &key).await;
            assert_eq!(status, StatusCode::OK, "{path}: {html}");
            seen += html.matches("href=\"/ui/matches/m_").count();
            pages += 1;
            match next_link(&html) {
                Some(next) => path = next,
                None => break,
            }
            assert!(pages < 20, "the match list pages forever");
        }
        assert!(pages >= 3, "{pages} pages");
        assert_eq!(seen, MATCHES);

        // Another tenant's ids: the UI answers like the API, 404, not 500.
        let (status, _) =
            get_page(&harness, &format!("/ui/matches/{}", ids[0]), &harness.key_b).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = get_page(&harness, &format!("/ui/works/{work}"), &harness.key_b).await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // The match page links its evidence package, which downloads for its
        // tenant only.
        let (_, html) =
            get_page(&harness, &format!("/ui/matches/{}", ids[0]), &harness.key_a).await;
        let evidence = format!("/ui/matches/{}/evidence", ids[0]);
        assert!(html.contains(&format!("href=\"{evidence}\"")), "{html}");
        let (status, warc) = get_page(&harness, &evidence, &harness.key_a).await;
        assert_eq!(status, StatusCode::OK);
        assert!(warc.starts_with("WARC/1.1\r\n"), "{warc}");
        let (status, manifest) = get_page(
            &harness,
            &format!("{evidence}?part=manifest"),
            &harness.key_a,
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert!(manifest.contains("\"warc_sha256\""), "{manifest}");
        let (status, _) = get_page(&harness, &evidence, &harness.key_b).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}
