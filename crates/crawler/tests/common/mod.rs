//! Shared helpers of the integration tests: a crawler over the embedded store
//! and queue (the backends a user runs), a test site and a static file server.
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
use copyhound_core::model::{Page, Task};
use copyhound_core::ports::{PageStore, SiteStore, collect_all};
use copyhound_crawler::site::{SiteBuilder, SitePolicy};
use copyhound_crawler::{Crawler, HttpFetcher};
use copyhound_queue::LocalTaskQueue;

/// The crawler under test and its backends.
pub struct Harness {
    pub crawler: Crawler,
    pub sites: Arc<dyn SiteStore>,
    pub pages: Arc<dyn PageStore>,
    pub queue: Arc<LocalTaskQueue>,
    _dir: tempfile::TempDir,
}

impl Harness {
    /// Tasks enqueued and not yet delivered, oldest first.
    pub async fn enqueued(&self) -> Vec<Task> {
        self.queue.ready_tasks(usize::MAX).await.unwrap()
    }

    /// Every stored page of every site.
    pub async fn all_pages(&self) -> Vec<Page> {
        let sites = collect_all(100, |request| async move {
            self.sites.list_sites(None, &request).await
        })
        .await
        .unwrap();
        let mut pages = Vec::new();
        for site in sites {
            let id = &site.id;
            pages.extend(
                collect_all(200, |request| async move {
                    self.pages.list_pages(id, &request).await
                })
                .await
                .unwrap(),
            );
        }
        pages
    }
}

/// Returns an embedded queue in a directory of its own.
pub async fn local_queue(dir: &std::path::Path) -> Arc<LocalTaskQueue> {
    Arc::new(
        LocalTaskQueue::open(dir, &copyhound_core::config::QueueConfig::default())
            .await
            .unwrap(),
    )
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

pub async fn harness(config: CrawlerConfig) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
    let queue = local_queue(&dir.path().join("queue")).await;
    let fetcher = Arc::new(HttpFetcher::new(config.clone()).unwrap());
    let crawler = Crawler::new(
        config,
        fetcher,
        stores.sites.clone(),
        stores.pages.clone(),
        queue.clone(),
    );
    Harness {
        crawler,
        sites: stores.sites,
        pages: stores.pages,
        queue,
        _dir: dir,
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

/// Paths a test server was asked for, in order.
pub type RequestLog = Arc<std::sync::Mutex<Vec<String>>>;

/// Serves on 127.0.0.1 the router `build` makes for the origin it is served
/// at (pages that link or list absolute URLs need it); returns that origin.
pub async fn serve_at(build: impl FnOnce(&str) -> Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let router = build(&origin);
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    origin
}

/// Serves `handler` for every path, logging the paths; returns the origin and the log.
pub async fn serve_logged<H, T>(handler: H) -> (String, RequestLog)
where
    H: axum::handler::Handler<T, RequestLog>,
    T: 'static,
{
    let log = RequestLog::default();
    let state = log.clone();
    let origin = serve_at(move |_| Router::new().fallback(handler).with_state(state)).await;
    (origin, log)
}

impl Harness {
    /// Runs a crawl of `site` in a new run and returns the finished run.
    pub async fn crawl(&self, site: &Site) -> copyhound_core::model::CrawlRun {
        self.crawler
            .run_crawl(
                &site.id,
                &copyhound_core::ids::CrawlRunId::generate(),
                &copyhound_crawler::NoProgress,
            )
            .await
            .unwrap()
    }
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
