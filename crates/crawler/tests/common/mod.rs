//! Shared helpers of the integration tests: a crawler over in-memory fakes, a
//! test site and a static file server.
#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as AxumPath, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::model::Site;
use copyhound_crawler::site::{SiteBuilder, SitePolicy};
use copyhound_crawler::testsuite::{MemoryPageStore, MemorySiteStore, MemoryTaskQueue};
use copyhound_crawler::{Crawler, HttpFetcher};

/// The crawler under test and its fakes.
pub struct Harness {
    pub crawler: Crawler,
    pub sites: Arc<MemorySiteStore>,
    pub pages: Arc<MemoryPageStore>,
    pub queue: Arc<MemoryTaskQueue>,
}

/// Returns a config for loopback tests: private addresses allowed, short timeouts.
pub fn test_config() -> CrawlerConfig {
    CrawlerConfig {
        allow_private_addresses: true,
        max_body_bytes: 1 << 20,
        connect_timeout_ms: 1_000,
        total_timeout_ms: 1_500,
        max_retries: 1,
        retry_backoff_ms: 20,
        global_concurrency: 16,
        ..CrawlerConfig::default()
    }
}

pub fn harness(config: CrawlerConfig) -> Harness {
    let sites = Arc::new(MemorySiteStore::default());
    let pages = Arc::new(MemoryPageStore::default());
    let queue = Arc::new(MemoryTaskQueue::default());
    let fetcher = Arc::new(HttpFetcher::new(config.clone()).unwrap());
    let crawler = Crawler::new(config, fetcher, sites.clone(), pages.clone(), queue.clone());
    Harness {
        crawler,
        sites,
        pages,
        queue,
    }
}

/// Returns an enabled site crawled from `seed` (loopback allowed) without
/// politeness delays.
pub fn site(seed: &str) -> Site {
    SiteBuilder::new("P01".parse().unwrap(), "test site", vec![seed.to_string()])
        .policy(SitePolicy::for_crawler(&test_config()))
        .politeness(0.0, 8)
        .limits(10, 5_000)
        .build()
        .unwrap()
}

/// Serves `router` on 127.0.0.1 on a free port.
pub async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    address
}

/// Serves the files under `root` like `python3 -m http.server` (no charset sent).
pub async fn serve_dir(root: PathBuf) -> SocketAddr {
    async fn file(State(root): State<Arc<PathBuf>>, path: Option<AxumPath<String>>) -> Response {
        let relative = path
            .map(|AxumPath(path)| path)
            .unwrap_or_else(|| "index.html".into());
        if relative.split('/').any(|part| part == "..") {
            return status(StatusCode::FORBIDDEN);
        }
        match tokio::fs::read(root.join(&relative)).await {
            Ok(bytes) => {
                let content_type = if relative.ends_with(".txt") {
                    "text/plain"
                } else {
                    "text/html"
                };
                Response::builder()
                    .header(header::CONTENT_TYPE, content_type)
                    .body(Body::from(bytes))
                    .unwrap()
            }
            Err(_) => status(StatusCode::NOT_FOUND),
        }
    }
    fn status(code: StatusCode) -> Response {
        Response::builder()
            .status(code)
            .body(Body::empty())
            .unwrap()
    }
    let router = Router::new()
        .route("/", axum::routing::get(file))
        .route("/{*path}", axum::routing::get(file))
        .with_state(Arc::new(root));
    serve(router).await
}

/// Returns a benchmark set directory, or `None` (test skipped) when absent
/// outside CI; in CI a missing set fails the test.
pub fn devset_dir(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(name);
    if dir.join("truth.json").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("benchmark set missing at {}", dir.display());
    }
    eprintln!("note: {} not found, skipping", dir.display());
    None
}
