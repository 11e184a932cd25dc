//! Crawl throughput on loopback, politeness off: an index linking 500 chapter
//! pages of ~20 KB (GBK, like the pirate sites), each fetched, decoded,
//! extracted, stored in memory and queued for fingerprinting.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod support {
    pub mod memory;
}

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::ids::CrawlRunId;
use copyhound_core::ports::SiteStore;
use copyhound_crawler::site::{SiteBuilder, SitePolicy};
use copyhound_crawler::{Crawler, HttpFetcher, NoProgress};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use support::memory::{MemoryPageStore, MemorySiteStore, MemoryTaskQueue};

const PAGES: u32 = 500;
const PARAGRAPH: &str = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。及看到司马衙门前，见一个灯楼，却是彩缎装成。";

fn chapter(number: u32) -> Vec<u8> {
    let paragraphs: String = (0..140)
        .map(|i| format!("&nbsp;&nbsp;&nbsp;&nbsp;{number}-{i}{PARAGRAPH}<br /><br />\n"))
        .collect();
    let nav: String = (0..20)
        .map(|i| {
            format!(
                "<li><a href=\"/c/{}.html\">第{i}章</a></li>",
                (number + i) % PAGES
            )
        })
        .collect();
    let page = format!(
        "<html><head><meta charset=\"gbk\"><title>第{number}章_白话说唐_笔趣阁</title><script>var a=1;</script></head>\
         <body><div class=\"nav\"><ul>{nav}</ul></div><h1>第{number}章</h1><div id=\"content\">{paragraphs}</div>\
         <div class=\"footer\">Copyright 笔趣阁</div></body></html>"
    );
    encoding_rs::GB18030.encode(&page).0.into_owned()
}

fn router() -> Router {
    let pages: Arc<Vec<Vec<u8>>> = Arc::new((0..PAGES).map(chapter).collect());
    let index: String = (0..PAGES)
        .map(|i| format!("<a href=\"/c/{i}.html\">{i}</a>"))
        .collect();
    Router::new()
        .route(
            "/robots.txt",
            get(|| async { "User-agent: *\nDisallow: /private/\n" }),
        )
        .route(
            "/",
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "text/html")],
                    format!("<html><body>{index}</body></html>"),
                )
            }),
        )
        .route(
            "/c/{name}",
            get(move |Path(name): Path<String>| {
                let pages = pages.clone();
                async move {
                    let number: usize = name.trim_end_matches(".html").parse().unwrap_or(0);
                    (
                        [(header::CONTENT_TYPE, "text/html")],
                        pages[number % pages.len()].clone(),
                    )
                        .into_response()
                }
            }),
        )
}

fn bench_crawl(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let address = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router()).await.unwrap() });
        address
    });
    let config = CrawlerConfig {
        allow_private_addresses: true,
        global_concurrency: 32,
        ..CrawlerConfig::default()
    };
    let fetcher = Arc::new(HttpFetcher::new(config.clone()).unwrap());
    println!("page size: {} bytes", chapter(1).len());
    let mut group = criterion.benchmark_group("crawl");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(u64::from(PAGES)));
    group.bench_function("loopback_20k_pages", |bencher| {
        bencher.iter(|| {
            runtime.block_on(async {
                let sites = Arc::new(MemorySiteStore::default());
                let pages = Arc::new(MemoryPageStore::default());
                let queue = Arc::new(MemoryTaskQueue::default());
                let crawler = Crawler::new(
                    config.clone(),
                    fetcher.clone(),
                    sites.clone(),
                    pages.clone(),
                    queue,
                );
                let site = SiteBuilder::new(
                    "P01".parse().unwrap(),
                    "bench",
                    vec![format!("http://{address}/")],
                )
                .policy(SitePolicy::for_crawler(&config))
                .politeness(0.0, 16)
                .limits(2, 10_000)
                .build()
                .unwrap();
                sites.put_site(&site).await.unwrap();
                let run = crawler
                    .run_crawl(&site.id, &CrawlRunId::generate(), &NoProgress)
                    .await
                    .unwrap();
                assert_eq!(
                    run.counters.fetched,
                    u64::from(PAGES) + 1,
                    "{:?}",
                    run.counters
                );
            })
        });
    });
    group.finish();
}

criterion_group!(benches, bench_crawl);
criterion_main!(benches);
