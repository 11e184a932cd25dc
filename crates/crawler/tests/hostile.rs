//! The fetcher and the crawler against a hostile local server: every bad input
//! ends as a bounded, classified error, never a hang or a crash.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use common::{harness, serve, site, test_config};
use copyhound_core::ErrorKind;
use copyhound_core::model::{CrawlRunStatus, TaskKind};
use copyhound_core::ports::{FetchRequest, Fetcher, Resource};
use copyhound_crawler::{HttpFetcher, NoProgress};
use futures_util::stream;

const PARAGRAPH: &str = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。及看到司马衙门前，见一个灯楼，却是彩缎装成。";

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn chapter(title: &str) -> String {
    let paragraphs: String = (0..12)
        .map(|i| format!("　　{i}{PARAGRAPH}<br/><br/>"))
        .collect();
    format!(
        "<html><head><title>{title}</title></head><body><h1>{title}</h1><div id=\"content\">{paragraphs}</div></body></html>"
    )
}

fn router() -> Router {
    let flaky_calls = Arc::new(AtomicU32::new(0));
    let links = [
        "/redirect",
        "/loop-a",
        "/slow",
        "/endless",
        "/binary",
        "/image.png",
        "/links",
        "/gbk-lies",
        "/malformed",
        "/private/secret.html",
        "/missing",
        "/flaky",
        "/etag.html",
        "/forbidden",
        "/chapter_1.html",
    ];
    let index: String = links
        .iter()
        .map(|link| format!("<a href=\"{link}\">{link}</a>"))
        .collect();
    Router::new()
        .route("/robots.txt", get(|| async { "User-agent: *\nDisallow: /private/\n" }))
        .route("/", get(move || async move { html(format!("<html><body>{index}</body></html>")) }))
        .route("/redirect", get(|| async { (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, "/target.html")]) }))
        .route("/target.html", get(|| async { html(chapter("target")) }))
        .route("/loop-a", get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/loop-b")]) }))
        .route("/loop-b", get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/loop-a")]) }))
        .route("/slow", get(|| async { slow_body() }))
        .route("/endless", get(|| async { endless_body() }))
        .route("/binary", get(|| async { ([(header::CONTENT_TYPE, "text/html")], vec![0u8, 159, 146, 150, 0, 1, 2, 3, 0, 0]) }))
        .route("/image.png", get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![137u8, 80, 78, 71]) }))
        .route("/links", get(|| async { html((0..100_000).map(|i| format!("<a href=\"/l/{i}\">{i}</a>")).collect()) }))
        .route("/gbk-lies", get(|| async { gbk_declared_utf8() }))
        .route("/malformed", get(|| async { html(format!("<html><body><div><p>{PARAGRAPH}{PARAGRAPH}{PARAGRAPH}{PARAGRAPH}<table><td></b></i><<>>&#xZZZ;</html></html>")) }))
        .route("/private/secret.html", get(|| async { html(chapter("secret")) }))
        .route("/forbidden", get(|| async { StatusCode::FORBIDDEN }))
        .route("/flaky", get(move || {
            let calls = flaky_calls.clone();
            async move {
                if calls.fetch_add(1, Ordering::SeqCst) == 0 { StatusCode::SERVICE_UNAVAILABLE.into_response() } else { html(chapter("flaky")) }
            }
        }))
        .route("/etag.html", get(|headers: HeaderMap| async move {
            if headers.get(header::IF_NONE_MATCH).is_some_and(|value| value == "\"v1\"") {
                return StatusCode::NOT_MODIFIED.into_response();
            }
            ([(header::CONTENT_TYPE, "text/html"), (header::ETAG, "\"v1\"")], chapter("etag")).into_response()
        }))
        .route("/chapter_1.html", get(|| async { html(part(1)) }))
        .route("/chapter_1_2.html", get(|| async { html(part(2)) }))
        .route("/chapter_1_3.html", get(|| async { html(part(3)) }))
}

fn part(number: u32) -> String {
    let next = if number < 3 {
        format!("<a href=\"/chapter_1_{}.html\">下一页</a>", number + 1)
    } else {
        String::new()
    };
    let paragraphs: String = (0..6)
        .map(|i| format!("<p>第{number}部分{i}{PARAGRAPH}</p>"))
        .collect();
    format!(
        "<html><body><div class=\"content\">{paragraphs}</div><div class=\"page\">第{number}/3页 <a href=\"/chapter_2.html\">下一章</a>{next}</div></body></html>"
    )
}

fn slow_body() -> Response {
    let drip = stream::unfold(0u32, |count| async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Some((
            Ok::<_, std::io::Error>(Bytes::from_static(b"<p>a")),
            count + 1,
        ))
    });
    (
        [(header::CONTENT_TYPE, "text/html")],
        Body::from_stream(drip),
    )
        .into_response()
}

fn endless_body() -> Response {
    let chunk = Bytes::from(vec![b'a'; 64 * 1024]);
    let flood = stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
    (
        [(header::CONTENT_TYPE, "text/html")],
        Body::from_stream(flood),
    )
        .into_response()
}

fn gbk_declared_utf8() -> Response {
    let page = format!(
        "<html><head><meta charset=\"utf-8\"></head><body><div>{}</div></body></html>",
        PARAGRAPH.repeat(8)
    );
    let (bytes, _, _) = encoding_rs::GB18030.encode(&page);
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        bytes.into_owned(),
    )
        .into_response()
}

async fn fetch_kind(fetcher: &HttpFetcher, url: String) -> Result<u16, ErrorKind> {
    fetcher
        .fetch(&FetchRequest {
            url,
            etag: None,
            last_modified: None,
            resource: Resource::Page,
        })
        .await
        .map(|page| page.status)
        .map_err(|err| err.kind())
}

#[tokio::test]
async fn fetcher_bounds_and_classifies_bad_input() {
    let address = serve(router()).await;
    let fetcher = HttpFetcher::new(test_config()).unwrap();
    let url = |path: &str| format!("http://{address}{path}");
    let started = Instant::now();
    assert_eq!(fetch_kind(&fetcher, url("/redirect")).await, Ok(200));
    assert_eq!(
        fetch_kind(&fetcher, url("/loop-a")).await,
        Err(ErrorKind::InvalidInput)
    );
    assert_eq!(
        fetch_kind(&fetcher, url("/endless")).await,
        Err(ErrorKind::TooLarge)
    );
    assert_eq!(
        fetch_kind(&fetcher, url("/image.png")).await,
        Err(ErrorKind::Blocked)
    );
    assert_eq!(
        fetch_kind(&fetcher, url("/private/secret.html")).await,
        Err(ErrorKind::Blocked)
    );
    assert_eq!(
        fetch_kind(&fetcher, url("/missing")).await,
        Err(ErrorKind::NotFound)
    );
    assert_eq!(
        fetch_kind(&fetcher, url("/forbidden")).await,
        Err(ErrorKind::Forbidden)
    );
    assert_eq!(
        fetch_kind(&fetcher, url("/flaky")).await,
        Ok(200),
        "a 503 is retried"
    );
    let slow_started = Instant::now();
    assert_eq!(
        fetch_kind(&fetcher, url("/slow")).await,
        Err(ErrorKind::Timeout)
    );
    assert!(
        slow_started.elapsed() < Duration::from_millis(2_500),
        "slow-loris is cut at the total timeout"
    );
    let first = fetcher
        .fetch(&FetchRequest {
            url: url("/etag.html"),
            etag: None,
            last_modified: None,
            resource: Resource::Page,
        })
        .await
        .unwrap();
    assert_eq!(first.etag.as_deref(), Some("\"v1\""));
    // The capture log's facts: when, from which peer, what was asked.
    let connection = first.connection.as_ref().unwrap();
    assert!(first.received_at.is_some());
    assert!(
        connection
            .peer_address
            .as_deref()
            .is_some_and(|peer| peer.starts_with("127.0.0.1:")),
        "{connection:?}"
    );
    assert!(connection.tls_certificates.is_empty(), "plain http");
    let again = FetchRequest {
        url: url("/etag.html"),
        etag: first.etag.clone(),
        last_modified: None,
        resource: Resource::Page,
    };
    let revalidated = fetcher.fetch(&again).await.unwrap();
    assert_eq!(revalidated.status, 304);
    assert!(
        revalidated
            .connection
            .unwrap()
            .request_headers
            .contains(&("if-none-match".into(), "\"v1\"".into()))
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn private_addresses_are_refused_by_default() {
    let address = serve(router()).await;
    let config = copyhound_core::config::CrawlerConfig {
        allow_private_addresses: false,
        ..test_config()
    };
    let fetcher = HttpFetcher::new(config).unwrap();
    assert_eq!(
        fetch_kind(&fetcher, format!("http://{address}/")).await,
        Err(ErrorKind::Blocked)
    );
    assert_eq!(
        fetch_kind(&fetcher, format!("http://localhost:{}/", address.port())).await,
        Err(ErrorKind::Blocked)
    );
}

#[tokio::test]
async fn a_crawl_of_a_hostile_site_finishes_with_reasons() {
    let address = serve(router()).await;
    let test = harness(copyhound_core::config::CrawlerConfig {
        max_links_per_page: 200,
        ..test_config()
    })
    .await;
    let site = site(&format!("http://{address}/"));
    test.sites.put_site(&site).await.unwrap();
    let run_id = copyhound_core::ids::CrawlRunId::generate();
    let started = Instant::now();
    let run = test
        .crawler
        .run_crawl(&site.id, &run_id, &NoProgress)
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        run.status,
        CrawlRunStatus::Partial,
        "pages were fetched and some failed"
    );
    let counters = &run.counters;
    assert_eq!(counters.skipped.get("robots"), Some(&1), "{counters:?}");
    assert_eq!(
        counters.skipped.get("content_type"),
        Some(&1),
        "{counters:?}"
    );
    for reason in [
        "redirect_loop",
        "too_large",
        "timeout",
        "binary",
        "forbidden",
    ] {
        assert!(
            counters.failed.contains_key(reason),
            "{reason} missing in {counters:?}"
        );
    }
    assert!(
        counters.skipped.contains_key("not_found"),
        "dead links are counted among the skipped: {counters:?}"
    );
    assert!(!run.recent_errors.is_empty());
    let pages = test.all_pages().await;
    let by_path = |path: &str| {
        pages
            .iter()
            .find(|page| page.url == format!("http://{address}{path}"))
    };
    assert!(by_path("/private/secret.html").is_none());
    assert!(
        by_path("/target.html").is_some(),
        "redirects are stored under the final url"
    );
    assert!(
        by_path("/gbk-lies").unwrap().text.contains("灯烛辉煌"),
        "a lying charset is second-guessed"
    );
    assert!(by_path("/malformed").unwrap().text.contains("灯烛辉煌"));
    // The page with 100k links was capped: the frontier did not explode.
    assert!(
        counters.skipped.get("not_found").copied().unwrap_or(0) <= 210,
        "{counters:?}"
    );

    let first = by_path("/chapter_1.html").unwrap();
    let pagination = first.fetch.pagination.as_ref().unwrap();
    assert_eq!(pagination.part_urls.len(), 3);
    let joined = pagination.joined_text.as_ref().unwrap();
    assert!(joined.contains("第1部分0") && joined.contains("第3部分5"));
    let third = by_path("/chapter_1_3.html").unwrap();
    assert_eq!(third.fetch.pagination.as_ref().unwrap().part, 3);
    assert!(third.text.contains("第3部分0") && !third.text.contains("第1部分0"));

    let fingerprints = test
        .enqueued()
        .await
        .iter()
        .filter(|task| matches!(task.kind, TaskKind::FingerprintPage { .. }))
        .count();
    assert!(fingerprints >= 5, "{fingerprints}");

    // A second run only re-fetches what changed: the ETag page answers 304.
    let second = test
        .crawler
        .run_crawl(
            &site.id,
            &copyhound_core::ids::CrawlRunId::generate(),
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(
        second.counters.skipped.get("not_modified"),
        Some(&1),
        "{:?}",
        second.counters
    );
    assert_eq!(second.counters.new_pages, 0);
    // The 304 dates a revalidation; the stored 200 keeps the time it came.
    let before = by_path("/etag.html").unwrap();
    let after = test
        .all_pages()
        .await
        .into_iter()
        .find(|page| page.url == before.url)
        .unwrap();
    assert!(before.fetch.revalidations.is_empty());
    assert!(after.fetch.received_at.is_some());
    assert_eq!(after.fetch.received_at, before.fetch.received_at);
    assert_eq!(after.fetch.status, 200);
    assert_eq!(after.fetch.revalidations.len(), 1);
    let revalidation = &after.fetch.revalidations[0];
    assert!(Some(revalidation.at) > after.fetch.received_at);
    assert_eq!(after.last_seen, revalidation.at);
    let again = test
        .enqueued()
        .await
        .iter()
        .filter(|task| matches!(task.kind, TaskKind::FingerprintPage { .. }))
        .count();
    assert_eq!(
        again, fingerprints,
        "unchanged pages are not fingerprinted again"
    );
}
