//! Truthful crawl outcomes: a crawl that fetched nothing (robots.txt
//! unreachable or disallowing, host refusing connections, address refused) is
//! `failed` with its reasons in `recent_errors`; one where some pages failed is
//! `partial`; never a silent `succeeded`. Dead links (404 on a linked page)
//! are counted and fail nothing; a seed that is not there does.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use common::{harness, serve, site, test_config};
use copyhound_core::config::CrawlerConfig;
use copyhound_core::ids::CrawlRunId;
use copyhound_core::model::{CrawlRun, CrawlRunStatus, Site};
use copyhound_crawler::NoProgress;

const CHAPTER: &str = "<html><body><div id=\"content\"><p>叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。</p><a href=\"/gone.html\">next</a></div></body></html>";

fn page() -> axum::response::Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        CHAPTER,
    )
        .into_response()
}

async fn crawl(config: CrawlerConfig, site: Site) -> CrawlRun {
    let test = harness(config).await;
    test.sites.put_site(&site).await.unwrap();
    let started = Instant::now();
    let run = test
        .crawler
        .run_crawl(&site.id, &CrawlRunId::generate(), &NoProgress)
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let stored = test.sites.get_crawl_run(&run.id).await.unwrap();
    assert_eq!(stored, run, "the outcome is stored as returned");
    run
}

fn assert_failed_because(run: &CrawlRun, reason: &str, detail: &str) {
    assert_eq!(run.status, CrawlRunStatus::Failed, "{run:?}");
    assert_eq!(run.counters.fetched, 0, "{run:?}");
    let errors = run.recent_errors.join("\n");
    assert!(
        errors.contains("no page fetched") && errors.contains(reason),
        "the summary names {reason}: {errors}"
    );
    assert!(errors.contains(detail), "the errors say {detail}: {errors}");
}

/// Returns a loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_host_refusing_connections_fails_with_the_reason() {
    let seed = format!("http://127.0.0.1:{}/", closed_port());
    let run = crawl(test_config(), site(&seed)).await;
    assert_failed_because(&run, "robots_unreachable", "connection refused");
    assert_eq!(
        run.counters.failed.get("robots_unreachable"),
        Some(&1),
        "{run:?}"
    );
}

#[tokio::test]
async fn an_unreachable_robots_txt_fails_the_crawl_with_the_reason() {
    let router = Router::new()
        .route(
            "/robots.txt",
            get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
        )
        .route("/", get(|| async { page() }));
    let address = serve(router).await;
    let run = crawl(test_config(), site(&format!("http://{address}/"))).await;
    assert_failed_because(&run, "robots_unreachable", "robots.txt answered 503");
}

#[tokio::test]
async fn a_robots_txt_disallowing_everything_fails_the_crawl() {
    let router = Router::new()
        .route(
            "/robots.txt",
            get(|| async { "User-agent: *\nDisallow: /\n" }),
        )
        .route("/", get(|| async { page() }));
    let address = serve(router).await;
    let run = crawl(test_config(), site(&format!("http://{address}/"))).await;
    assert_failed_because(&run, "1 skipped (robots)", "robots");
}

#[tokio::test]
async fn a_private_address_is_refused_at_crawl_time_and_fails_the_crawl() {
    let router = Router::new().route("/", get(|| async { page() }));
    let address = serve(router).await;
    // A site stored before registration checked addresses (or by a node
    // configured differently) still never reaches a private address.
    let legacy = site(&format!("http://{address}/"));
    let strict = CrawlerConfig {
        allow_private_addresses: false,
        ..test_config()
    };
    let run = crawl(strict, legacy).await;
    assert_failed_because(&run, "private_address", "private_address");
}

#[tokio::test]
async fn a_crawl_whose_only_failures_are_dead_links_succeeds() {
    let router = Router::new().route("/", get(|| async { page() }));
    let address = serve(router).await;
    let run = crawl(test_config(), site(&format!("http://{address}/"))).await;
    assert_eq!(run.status, CrawlRunStatus::Succeeded, "{run:?}");
    assert_eq!(run.counters.fetched, 1);
    assert_eq!(
        run.counters.skipped.get("not_found"),
        Some(&1),
        "the dead link is counted: {run:?}"
    );
    assert!(run.counters.failed.is_empty(), "{run:?}");
}

#[tokio::test]
async fn a_crawl_whose_seed_is_not_there_is_partial() {
    let router = Router::new()
        .route("/", get(|| async { page() }))
        .route("/gone.html", get(|| async { page() }));
    let address = serve(router).await;
    let mut with_a_dead_seed = site(&format!("http://{address}/"));
    with_a_dead_seed
        .seeds
        .push(format!("http://{address}/book/"));
    let run = crawl(test_config(), with_a_dead_seed).await;
    assert_eq!(run.status, CrawlRunStatus::Partial, "{run:?}");
    assert_eq!(run.counters.fetched, 2);
    assert_eq!(run.counters.failed.get("not_found"), Some(&1));
    let errors = run.recent_errors.join("\n");
    assert!(
        errors.contains("/book/") && errors.contains("1 of 3 pages failed"),
        "{errors}"
    );
}

#[tokio::test]
async fn a_clean_crawl_succeeds() {
    let router = Router::new()
        .route("/", get(|| async { page() }))
        .route("/gone.html", get(|| async { page() }));
    let address = serve(router).await;
    let run = crawl(test_config(), site(&format!("http://{address}/"))).await;
    assert_eq!(run.status, CrawlRunStatus::Succeeded, "{run:?}");
    assert!(run.recent_errors.is_empty(), "{run:?}");
}
