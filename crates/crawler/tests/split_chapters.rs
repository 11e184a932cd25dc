//! A chapter split over pages is fetched once per run: parts that a list page
//! also links wait in the frontier while the chain from the first part fetches
//! them, or, fetched by tasks of their own at the same time, are read back by
//! the chain once stored; every part is stored with its chain.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::IntoResponse;
use common::{RequestLog, harness, serve_logged, site, test_config};

const TEXT: &str = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。";

async fn serve(State(log): State<RequestLog>, request: Request) -> axum::response::Response {
    let path = request.uri().path().to_string();
    log.lock().unwrap().push(path.clone());
    if path != "/" && path != "/c.html" {
        // Later parts answer slowly: tasks of their own are still fetching
        // them when the chain from the first part gets there.
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
    let html =
        |body: String| ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    // The index links every part, as list pages of real sites often do.
    let part = |n: usize, of: usize| {
        let next = if n < of {
            format!("<a href=\"/c_{}.html\">下一页</a>", n + 1)
        } else {
            String::new()
        };
        let name = if n == 1 {
            "/c.html".to_string()
        } else {
            format!("/c_{n}.html")
        };
        (
            name,
            format!(
                "<html><body><div id=\"content\"><p>({n}/{of}) {}</p>{next}</div></body></html>",
                TEXT.repeat(10)
            ),
        )
    };
    match path.as_str() {
        "/" => html(
            "<html><body><ul><li><a href=\"/c.html\">1</a></li><li><a href=\"/c_2.html\">2</a></li>\
             <li><a href=\"/c_3.html\">3</a></li><li><a href=\"/c_4.html\">4</a></li></ul></body></html>"
                .into(),
        ),
        _ => (1..=4)
            .map(|n| part(n, 4))
            .find(|(name, _)| *name == path)
            .map(|(_, body)| html(body))
            .unwrap_or_else(|| axum::http::StatusCode::NOT_FOUND.into_response()),
    }
}

#[tokio::test]
async fn every_part_is_fetched_once() {
    // One page at a time: the chain from the first part runs while the other
    // parts wait in the frontier, as on a large site.
    every_part_once(1).await;
}

#[tokio::test]
async fn parts_fetched_by_concurrent_tasks_are_fetched_once() {
    // Every part at once: the chain reaches parts other tasks are fetching
    // (their responses are slow) and waits for them instead of fetching again.
    every_part_once(4).await;
}

async fn every_part_once(concurrency: u32) {
    let (origin, log) = serve_logged(serve).await;
    let test = harness(test_config()).await;
    let mut site = site(&format!("{origin}/"));
    site.concurrency = concurrency;
    test.sites.put_site(&site).await.unwrap();
    let run = test.crawl(&site).await;
    let requested = log.lock().unwrap().clone();
    for part in ["/c.html", "/c_2.html", "/c_3.html", "/c_4.html"] {
        assert_eq!(
            requested.iter().filter(|path| *path == part).count(),
            1,
            "{part} in {requested:?}"
        );
    }
    let pages = test.all_pages().await;
    let first = pages
        .iter()
        .find(|page| page.url.ends_with("/c.html"))
        .unwrap();
    let chain = first
        .fetch
        .pagination
        .as_ref()
        .expect("the first part knows its chain");
    assert_eq!(chain.part_urls.len(), 4, "{chain:?}");
    assert!(chain.joined_text.as_ref().unwrap().contains("(4/4)"));
    assert_eq!(run.counters.fetched, 5, "{:?}", run.counters);
}
