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
