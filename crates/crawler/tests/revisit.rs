//! Chapter pages that do not change are visited less often: a page stable for
//! a time t is fetched again after t / 2 (at most `crawler.max_revisit_hours`);
//! list pages and seeds are fetched on every run.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::IntoResponse;
use chrono::{Duration, Utc};
use common::{RequestLog, harness, serve_logged, site, test_config};
use copyhound_core::ids::{PageId, sha256_hex};
use copyhound_core::model::{CrawlRunStatus, FetchMeta, Page};

async fn serve(State(log): State<RequestLog>, request: Request) -> axum::response::Response {
    let path = request.uri().path().to_string();
    log.lock().unwrap().push(path.clone());
    let body = match path.as_str() {
        "/" => "<html><body><ul><li><a href=\"/old.html\">旧章</a></li><li><a href=\"/due.html\">到期</a></li></ul></body></html>".to_string(),
        "/old.html" | "/due.html" => format!(
            "<html><body><div id=\"content\"><p>{}</p></div></body></html>",
            "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(12)
        ),
        _ => return axum::http::StatusCode::NOT_FOUND.into_response(),
    };
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// A chapter page as an earlier crawl stored it: unchanged from `first_seen`
/// to `last_seen`.
fn stored_chapter(
    url: &str,
    site: &copyhound_core::model::Site,
    first_seen: i64,
    last_seen: i64,
) -> Page {
    let body = format!(
        "<html><body><div id=\"content\"><p>{}</p></div></body></html>",
        "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(12)
    );
    let text = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(12);
    let now = Utc::now();
    Page {
        id: PageId::for_url(url),
        url: url.into(),
        site_id: site.id.clone(),
        title: "旧章".into(),
        body_sha256: sha256_hex(body.as_bytes()),
        body_truncated: false,
        charset: "utf-8".into(),
        content_sha256: sha256_hex(text.as_bytes()),
        text,
        first_seen: now - Duration::days(first_seen),
        last_seen: now - Duration::days(last_seen),
        fetch: FetchMeta {
            status: 200,
            final_url: url.into(),
            content_type: Some("text/html; charset=utf-8".into()),
            ..FetchMeta::default()
        },
        previous_versions: Vec::new(),
        raw_body: body.into_bytes(),
    }
}

#[tokio::test]
async fn stable_chapters_wait_for_their_turn() {
    let (origin, log) = serve_logged(serve).await;
    let test = harness(test_config()).await;
    let site = site(&format!("{origin}/"));
    test.sites.put_site(&site).await.unwrap();
    // Both chapters unchanged for ten days; one visited a day ago, one six days ago.
    let old = stored_chapter(&format!("{origin}/old.html"), &site, 10, 1);
    let due = stored_chapter(&format!("{origin}/due.html"), &site, 10, 6);
    test.pages.upsert_page(&old).await.unwrap();
    test.pages.upsert_page(&due).await.unwrap();
    let run = test.crawl(&site).await;
    let fetched = log.lock().unwrap().clone();
    assert!(!fetched.contains(&"/old.html".to_string()), "{fetched:?}");
    assert!(fetched.contains(&"/due.html".to_string()), "{fetched:?}");
    assert!(
        fetched.contains(&"/".to_string()),
        "the list page is fetched every run"
    );
    assert_eq!(run.status, CrawlRunStatus::Succeeded, "{run:?}");
    assert_eq!(
        run.counters.skipped.get("fresh"),
        Some(&1),
        "{:?}",
        run.counters
    );
    let kept = test.pages.get_page(&old.id).await.unwrap();
    assert_eq!(
        kept.last_seen, old.last_seen,
        "a page not fetched keeps its last visit"
    );
}

#[tokio::test]
async fn a_zero_revisit_pause_fetches_every_page() {
    let (origin, log) = serve_logged(serve).await;
    let mut config = test_config();
    config.max_revisit_hours = 0;
    let test = harness(config).await;
    let site = site(&format!("{origin}/"));
    test.sites.put_site(&site).await.unwrap();
    let old = stored_chapter(&format!("{origin}/old.html"), &site, 10, 1);
    test.pages.upsert_page(&old).await.unwrap();
    test.crawl(&site).await;
    assert!(log.lock().unwrap().contains(&"/old.html".to_string()));
}

/// A targeted visit whose run record was lost (the process died between
/// queuing its task and recording its run) still crawls only its scope: the
/// task carries it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_run_without_its_record_crawls_only_its_scope() {
    let (origin, log) = serve_logged(serve).await;
    let test = harness(test_config()).await;
    let site = site(&format!("{origin}/"));
    test.sites.put_site(&site).await.unwrap();
    let scope = copyhound_core::model::RunScope {
        reason: "release burst".into(),
        seeds: vec![format!("{origin}/due.html")],
        max_depth: 0,
        new_links_only: true,
        rate_limit_per_second: None,
    };
    let run_id = copyhound_core::ids::CrawlRunId::generate();
    let run = test
        .crawler
        .run_crawl_in(
            &site.id,
            &run_id,
            Some(&scope),
            &copyhound_crawler::NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(run.status, CrawlRunStatus::Succeeded);
    assert_eq!(
        run.scope.as_ref(),
        Some(&scope),
        "the run records its scope"
    );
    let fetched: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|path| path.as_str() != "/robots.txt")
        .cloned()
        .collect();
    assert_eq!(fetched, ["/due.html"], "the site's seeds are not crawled");
}
