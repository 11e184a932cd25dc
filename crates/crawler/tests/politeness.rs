//! A site never has more requests in flight than its `concurrency`
//! (its politeness), and a crawl of many slow pages uses all of them.
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
use common::{harness, serve, site, test_config};

const PAGES: usize = 40;

#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    peak: AtomicUsize,
}

async fn chapter(State(load): State<Arc<InFlight>>, Path(n): Path<usize>) -> impl IntoResponse {
    let now = load.now.fetch_add(1, Ordering::SeqCst) + 1;
    load.peak.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(20)).await;
    load.now.fetch_sub(1, Ordering::SeqCst);
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        format!(
            "<html><body><div id=\"content\"><p>第{n}章 叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。</p></div></body></html>"
        ),
    )
}

async fn index() -> impl IntoResponse {
    let links: String = (1..=PAGES)
        .map(|n| format!("<li><a href=\"/c/{n}\">{n}</a></li>"))
        .collect();
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        format!("<html><body><ul>{links}</ul></body></html>"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_never_has_more_requests_in_flight_than_its_concurrency() {
    let load = Arc::new(InFlight::default());
    let router = Router::new()
        .route("/", get(index))
        .route("/c/{n}", get(chapter))
        .with_state(Arc::clone(&load));
    let address = serve(router).await;
    let test = harness(test_config()).await;
    let mut site = site(&format!("http://{address}/"));
    site.concurrency = 3;
    test.sites.put_site(&site).await.unwrap();
    let run = test.crawl(&site).await;
    assert_eq!(run.counters.fetched, PAGES as u64 + 1, "{:?}", run.counters);
    let peak = load.peak.load(Ordering::SeqCst);
    assert!(peak <= 3, "{peak} requests in flight at once");
    // The crawl did use its slots: forty slow pages keep all three busy.
    assert_eq!(peak, 3);
}

/// Two crawlers on one queue (two worker processes) crawling one host at the
/// same time keep its minimum interval between them: each request waits for
/// a turn reserved on the queue, not in the crawler's own memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_crawlers_on_one_queue_keep_a_hosts_interval_between_them() {
    use copyhound_crawler::{Crawler, HttpFetcher};
    let times = Arc::new(std::sync::Mutex::new(Vec::<std::time::Instant>::new()));
    let log = times.clone();
    let router = Router::new()
        .route("/", get(index))
        .route(
            "/c/{n}",
            get(move |Path(n): Path<usize>| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(std::time::Instant::now());
                    format!("<html><body><p>第{n}章 叔宝众人出了酒店，行至街上，见灯烛辉煌。</p></body></html>")
                }
            }),
        );
    let address = serve(router).await;
    let test = harness(test_config()).await;
    let mut site = site(&format!("http://{address}/"));
    site.rate_limit_per_second = 10.0;
    site.max_pages_per_run = 9;
    test.sites.put_site(&site).await.unwrap();
    // A second process: its own crawler, fetcher and pacer, the same queue.
    let other = Crawler::new(
        test_config(),
        Arc::new(HttpFetcher::new(test_config()).unwrap()),
        test.sites.clone(),
        test.pages.clone(),
        test.queue.clone(),
    );
    let other_run = copyhound_core::ids::CrawlRunId::generate();
    let (first, second) = tokio::join!(
        test.crawl(&site),
        other.run_crawl(&site.id, &other_run, &copyhound_crawler::NoProgress,)
    );
    assert!(first.counters.fetched >= 8, "{:?}", first.counters);
    assert!(second.unwrap().counters.fetched >= 8);
    let mut times = times.lock().unwrap().clone();
    times.sort();
    assert!(times.len() >= 14, "{} chapter requests", times.len());
    let closest = times
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .min()
        .unwrap();
    // 10 requests per second: 100 ms apart, less the server's own jitter.
    assert!(
        closest >= Duration::from_millis(80),
        "two requests to the host {closest:?} apart"
    );
}

/// A targeted run (a release burst's visit) reads robots.txt on a turn of its
/// own: the first page does not follow it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_targeted_run_reads_robots_txt_on_its_own_turn() {
    let times = Arc::new(std::sync::Mutex::new(
        Vec::<(String, std::time::Instant)>::new(),
    ));
    let log = times.clone();
    let router = Router::new().fallback(move |uri: axum::http::Uri| {
        let log = log.clone();
        async move {
            log.lock()
                .unwrap()
                .push((uri.path().to_string(), std::time::Instant::now()));
            "<html><body><a href=\"/c/1\">第1章</a></body></html>"
        }
    });
    let address = serve(router).await;
    let test = harness(test_config()).await;
    let mut site = site(&format!("http://{address}/"));
    site.rate_limit_per_second = 5.0;
    test.sites.put_site(&site).await.unwrap();
    let scope = copyhound_core::model::RunScope {
        reason: "release burst".into(),
        seeds: vec![format!("http://{address}/list")],
        max_depth: 0,
        new_links_only: true,
        rate_limit_per_second: None,
    };
    test.crawler
        .run_crawl_in(
            &site.id,
            &copyhound_core::ids::CrawlRunId::generate(),
            Some(&scope),
            &copyhound_crawler::NoProgress,
        )
        .await
        .unwrap();
    let times = times.lock().unwrap().clone();
    let paths: Vec<&str> = times.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["/robots.txt", "/list"]);
    let gap = times[1].1 - times[0].1;
    assert!(
        gap >= Duration::from_millis(180),
        "robots.txt then the page {gap:?} apart"
    );
}

/// A Crawl-delay holds across processes even for one that has not read the
/// host's robots.txt yet: its own robots.txt request waits for the turn the
/// other process reserved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_delay_learnt_by_one_process_holds_for_the_next_ones_robots_request() {
    use copyhound_core::ports::{FetchRequest, Fetcher, Resource};
    use copyhound_crawler::HttpFetcher;
    let times = Arc::new(std::sync::Mutex::new(
        Vec::<(String, std::time::Instant)>::new(),
    ));
    let log = times.clone();
    let router = Router::new().fallback(move |uri: axum::http::Uri| {
        let log = log.clone();
        async move {
            log.lock()
                .unwrap()
                .push((uri.path().to_string(), std::time::Instant::now()));
            if uri.path() == "/robots.txt" {
                "User-agent: *\nCrawl-delay: 1\n".to_string()
            } else {
                "<html><body><p>第1章</p></body></html>".to_string()
            }
        }
    });
    let address = serve(router).await;
    let dir = tempfile::tempdir().unwrap();
    let queue = common::local_queue(dir.path()).await;
    let request = FetchRequest {
        url: format!("http://{address}/c/1"),
        etag: None,
        last_modified: None,
        resource: Resource::Page,
    };
    for _ in 0..2 {
        // Each round is a process of its own: a fetcher with no robots.txt read.
        let fetcher = HttpFetcher::new(test_config())
            .unwrap()
            .with_shared_pacing(queue.clone());
        fetcher.fetch(&request).await.unwrap();
    }
    let times = times.lock().unwrap().clone();
    let paths: Vec<&str> = times.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["/robots.txt", "/c/1", "/robots.txt", "/c/1"]);
    for pair in times.windows(2) {
        let gap = pair[1].1 - pair[0].1;
        assert!(
            gap >= Duration::from_millis(900),
            "{} then {} {gap:?} apart under Crawl-delay 1",
            pair[0].0,
            pair[1].0
        );
    }
}
