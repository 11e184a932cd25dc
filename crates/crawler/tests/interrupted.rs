//! A crawl killed between storing a page and enqueueing its fingerprint task
//! (two stores, two writes) must not leave that page unfingerprinted forever:
//! the next crawl sees the page unchanged, so it re-enqueues the pages of runs
//! left `running` and marks those runs failed.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use common::{harness, local_queue, serve, site, test_config};
use copyhound_core::ids::CrawlRunId;
use copyhound_core::model::{CrawlRunStatus, TaskKind};
use copyhound_crawler::{Crawler, HttpFetcher, NoProgress};
use copyhound_queue::LocalTaskQueue;

async fn chapter() -> axum::response::Response {
    let text = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(8);
    let body = format!("<html><body><div id=\"content\"><p>{text}</p></div></body></html>");
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

async fn fingerprint_tasks(queue: &LocalTaskQueue) -> usize {
    queue
        .ready_tasks(usize::MAX)
        .await
        .unwrap()
        .iter()
        .filter(|task| matches!(task.kind, TaskKind::FingerprintPage { .. }))
        .count()
}

#[tokio::test]
async fn pages_of_a_run_cut_short_are_fingerprinted_again() {
    let address = serve(Router::new().route("/", get(chapter))).await;
    let test = harness(test_config()).await;
    let site = site(&format!("http://{address}/"));
    test.sites.put_site(&site).await.unwrap();
    let first = CrawlRunId::generate();
    test.crawler
        .run_crawl(&site.id, &first, &NoProgress)
        .await
        .unwrap();
    assert_eq!(fingerprint_tasks(&test.queue).await, 1);
    // The process died after storing the page, before its task was durable
    // and before the run finished.
    let mut cut = test.sites.get_crawl_run(&first).await.unwrap();
    cut.status = CrawlRunStatus::Running;
    cut.finished_at = None;
    test.sites.put_crawl_run(&cut).await.unwrap();
    let lost_dir = tempfile::tempdir().unwrap();
    let lost = local_queue(lost_dir.path()).await;
    let config = test_config();
    let restarted = Crawler::new(
        config.clone(),
        Arc::new(HttpFetcher::new(config).unwrap()),
        test.sites.clone(),
        test.pages.clone(),
        lost.clone(),
    );
    let second = CrawlRunId::generate();
    restarted
        .run_crawl(&site.id, &second, &NoProgress)
        .await
        .unwrap();
    assert_eq!(
        fingerprint_tasks(&lost).await,
        1,
        "the unchanged page is enqueued again"
    );
    let failed = test.sites.get_crawl_run(&first).await.unwrap();
    assert_eq!(failed.status, CrawlRunStatus::Failed);
    assert!(
        failed.recent_errors.join(" ").contains("interrupted"),
        "{failed:?}"
    );
    // With no run cut short, an unchanged page is not fingerprinted again.
    restarted
        .run_crawl(&site.id, &CrawlRunId::generate(), &NoProgress)
        .await
        .unwrap();
    assert_eq!(fingerprint_tasks(&lost).await, 1);
}
