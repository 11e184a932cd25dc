//! Pages no link reaches are found through the site's sitemaps: the ones
//! robots.txt declares (an index, gzip, a text list) or `/sitemap.xml`; other
//! hosts' URLs in them are not crawled.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::io::Write;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use common::{harness, serve_at, site, test_config};

fn html(text: &str) -> axum::response::Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        format!("<html><body><div id=\"content\"><p>{text}</p></div></body></html>"),
    )
        .into_response()
}

fn gzip(text: &str) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(text.as_bytes()).unwrap();
    encoder.finish().unwrap()
}

/// Crawls the site that `build` makes for the origin it is served at.
async fn crawled_urls(build: impl FnOnce(&str) -> Router) -> Vec<String> {
    let origin = serve_at(build).await;
    let test = harness(test_config()).await;
    let site = site(&format!("{origin}/"));
    test.sites.put_site(&site).await.unwrap();
    test.crawl(&site).await;
    let mut urls: Vec<String> = test
        .all_pages()
        .await
        .into_iter()
        .map(|page| page.url.replace(&origin, ""))
        .collect();
    urls.sort();
    urls
}

#[tokio::test]
async fn sitemaps_declared_in_robots_txt_are_followed() {
    let urls = crawled_urls(|origin| {
        let robots = format!("User-agent: *\nDisallow: /private/\nSitemap: {origin}/sitemap-index.xml\n");
        let index = format!(
            "<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
             <sitemap><loc>{origin}/books.xml.gz</loc></sitemap><sitemap><loc>{origin}/news.txt</loc></sitemap>\
             <sitemap><loc>http://192.0.2.1/elsewhere.xml</loc></sitemap></sitemapindex>"
        );
        let books = gzip(&format!(
            "<urlset><url><loc>{origin}/book/1.html</loc></url>\
             <url><loc>{origin}/private/2.html</loc></url>\
             <url><loc>http://192.0.2.1/3.html</loc></url></urlset>"
        ));
        let news = format!("{origin}/news/1.html\n");
        Router::new()
            .route("/", get(|| async { html("首页，没有链接。") }))
            .route("/robots.txt", get(move || async move { robots }))
            .route(
                "/sitemap-index.xml",
                get(move || async move { ([(header::CONTENT_TYPE, "application/xml")], index) }),
            )
            .route(
                "/books.xml.gz",
                get(move || async move { ([(header::CONTENT_TYPE, "application/gzip")], books) }),
            )
            .route("/news.txt", get(move || async move { news }))
            .route("/book/1.html", get(|| async { html("第一章，只在站点地图里。") }))
            .route("/news/1.html", get(|| async { html("一条新闻，只在文本清单里。") }))
            .route("/private/2.html", get(|| async { html("robots.txt 不许抓取。") }))
    })
    .await;
    assert_eq!(urls, ["/", "/book/1.html", "/news/1.html"]);
}

#[tokio::test]
async fn the_default_sitemap_lists_unlinked_pages() {
    let urls = crawled_urls(|origin| {
        let sitemap = format!(
            "<urlset><url><loc>{origin}/ch/1.html</loc></url><url><loc>{origin}/ch/2.html</loc></url></urlset>"
        );
        Router::new()
            .route("/", get(|| async { html("首页，没有链接。") }))
            .route(
                "/sitemap.xml",
                get(move || async move { ([(header::CONTENT_TYPE, "text/xml")], sitemap) }),
            )
            .route("/ch/{n}", get(|| async { html("只在站点地图里的一章。") }))
    })
    .await;
    assert_eq!(urls, ["/", "/ch/1.html", "/ch/2.html"]);
}

/// robots.txt is read once for its rules and its `Sitemap:` lines, and again
/// by no later run within the rules' lifetime: two requests for it at the same
/// instant broke the site's rate (`bench latency`).
#[tokio::test]
async fn robots_txt_is_requested_once_for_rules_and_sitemaps_over_runs() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let origin = serve_at(move |origin| {
        let robots = format!("User-agent: *\nSitemap: {origin}/sitemap.xml\n");
        let sitemap = format!("<urlset><url><loc>{origin}/ch/1.html</loc></url></urlset>");
        Router::new()
            .route("/", get(|| async { html("首页。") }))
            .route(
                "/robots.txt",
                get(move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let robots = robots.clone();
                    async move { robots }
                }),
            )
            .route(
                "/sitemap.xml",
                get(move || async move { ([(header::CONTENT_TYPE, "text/xml")], sitemap) }),
            )
            .route("/ch/{n}", get(|| async { html("只在站点地图里的一章。") }))
    })
    .await;
    let test = harness(test_config()).await;
    let site = site(&format!("{origin}/"));
    test.sites.put_site(&site).await.unwrap();
    test.crawl(&site).await;
    test.crawl(&site).await;
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}
