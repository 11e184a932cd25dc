//! A run has a wall-clock budget (`crawler.max_run_seconds`): a slow site
//! cannot hold a crawl slot for ever. Past it, what was waiting counts as
//! failed (`time_budget`) and the run ends partial.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::time::Duration;

use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use common::{harness, serve_at, site, test_config};
use copyhound_core::model::CrawlRunStatus;
use copyhound_crawler::crawl::TIME_BUDGET;

/// Every page links ten more and answers after a pause.
async fn slow_page(Path(n): Path<u32>) -> axum::response::Response {
    tokio::time::sleep(Duration::from_millis(400)).await;
    let links: String = (1..=10)
        .map(|k| format!("<a href=\"/p/{}\">next</a>", n * 10 + k))
        .collect();
    let body = format!(
        "<html><body><div id=\"content\"><p>{}</p>{links}</div></body></html>",
        "叔宝众人出了酒店，行至街上。".repeat(10)
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

#[tokio::test]
async fn a_run_out_of_time_ends_partial_with_what_waited_counted() {
    let origin = serve_at(|_| axum::Router::new().route("/p/{n}", get(slow_page))).await;
    let mut config = test_config();
    config.max_run_seconds = 1;
    config.total_timeout_ms = 5_000;
    let test = harness(config).await;
    let mut site = site(&format!("{origin}/p/0"));
    site.concurrency = 1;
    test.sites.put_site(&site).await.unwrap();
    let run = test.crawl(&site).await;
    assert_eq!(run.status, CrawlRunStatus::Partial, "{run:?}");
    let waited = run.counters.failed.get(TIME_BUDGET).copied().unwrap_or(0);
    assert!(waited >= 1, "{:?}", run.counters);
    assert!(
        run.counters.fetched < 10,
        "a second of 400 ms pages: {:?}",
        run.counters
    );
    assert!(run.recent_errors.join(" ").contains(TIME_BUDGET), "{run:?}");
}
