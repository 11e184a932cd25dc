//! A crawl whose process is killed mid-run resumes when its task is delivered
//! again: the pages the killed delivery stored are read back from the store,
//! not fetched again, and the run ends with every page.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use common::{harness, site, test_config};
use copyhound_core::ids::CrawlRunId;
use copyhound_core::model::CrawlRunStatus;
use copyhound_crawler::NoProgress;

const PAGES: usize = 40;

async fn page(
    State(hits): State<Arc<AtomicUsize>>,
    Path(name): Path<String>,
) -> axum::response::Response {
    let Some(Ok(number)) = name.strip_suffix(".html").map(str::parse::<usize>) else {
        return axum::http::StatusCode::NOT_FOUND.into_response();
    };
    hits.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let next = if number + 1 < PAGES {
        format!("<a href=\"/{}.html\">下一章</a>", number + 1)
    } else {
        String::new()
    };
    let body = format!(
        "<html><body><div id=\"content\"><p>第{number}章 {}</p>{next}</div></body></html>",
        "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(10)
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

#[tokio::test]
async fn a_killed_crawl_resumes_without_fetching_again() {
    let hits = Arc::new(AtomicUsize::new(0));
    let router = Router::new()
        .route("/{name}", get(page))
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let test = Arc::new(harness(test_config()).await);
    let mut site = site(&format!("{origin}/0.html"));
    site.max_depth = PAGES as u32 + 1;
    site.concurrency = 1;
    test.sites.put_site(&site).await.unwrap();
    let run_id = CrawlRunId::generate();

    // The first delivery is killed once it has fetched half of the pages.
    let first = {
        let (test, site_id, run_id) = (test.clone(), site.id.clone(), run_id.clone());
        tokio::spawn(async move {
            test.crawler
                .run_crawl(&site_id, &run_id, &NoProgress)
                .await
                .unwrap()
        })
    };
    while hits.load(Ordering::SeqCst) < PAGES / 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    first.abort();
    let _ = first.await;
    let stored_before = test.all_pages().await.len();
    let fetched_before = hits.load(Ordering::SeqCst);
    assert!(stored_before >= PAGES / 4, "{stored_before}");
    assert_eq!(
        test.sites.get_crawl_run(&run_id).await.unwrap().status,
        CrawlRunStatus::Running
    );

    let run = test
        .crawler
        .run_crawl(&site.id, &run_id, &NoProgress)
        .await
        .unwrap();
    assert_eq!(run.status, CrawlRunStatus::Succeeded, "{run:?}");
    assert_eq!(test.all_pages().await.len(), PAGES);
    // Only what was in flight when the process died is fetched twice.
    let fetched_again = hits.load(Ordering::SeqCst) - fetched_before;
    assert!(
        fetched_again <= PAGES - stored_before + 1,
        "{fetched_again} fetches after a kill that left {stored_before} of {PAGES} pages stored"
    );
    assert_eq!(run.counters.fetched as usize, PAGES, "{:?}", run.counters);
}
