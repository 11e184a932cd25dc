//! A task that panics, or fails its last attempt, is abandoned: its handler
//! ends what the task stood for (a crawl run ends `failed` with the reason),
//! so nothing stays `running` while the queue retries and dead-letters it.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::config::{CrawlerConfig, QueueConfig};
use copyhound_core::ids::{CrawlRunId, WorkId};
use copyhound_core::model::{CrawlRunStatus, Task, TaskKind};
use copyhound_core::ports::{FetchRequest, FetchedPage, Fetcher, TaskHandler, TaskQueue};
use copyhound_crawler::site::{SiteBuilder, SitePolicy};
use copyhound_crawler::{CrawlHandler, Crawler, NoProgress};
use copyhound_queue::LocalTaskQueue;
use copyhound_runtime::{Dispatcher, Worker, WorkerSettings};

const ATTEMPTS: u32 = 2;

async fn queue(dir: &std::path::Path) -> Arc<LocalTaskQueue> {
    let config = QueueConfig {
        max_attempts: ATTEMPTS,
        retry_backoff_ms: 10,
        ..QueueConfig::default()
    };
    Arc::new(LocalTaskQueue::open(dir, &config).await.unwrap())
}

fn worker(queue: Arc<dyn TaskQueue>, handler: Arc<dyn TaskHandler>) -> Worker {
    let settings = WorkerSettings {
        concurrency: 1,
        idle_sleep: Duration::from_millis(10),
        max_attempts: ATTEMPTS,
        ..WorkerSettings::default()
    };
    Worker::new(queue, handler, settings)
}

fn work_task() -> Task {
    let work_id: WorkId = "w1".parse().unwrap();
    Task::new(TaskKind::FingerprintWork { work_id }, Utc::now())
}

/// Panics or fails as told; records what it was asked to abandon.
#[derive(Debug)]
struct Faulty {
    panics: bool,
    abandoned: Mutex<Vec<String>>,
}

#[async_trait]
impl TaskHandler for Faulty {
    async fn handle(&self, _task: &Task) -> copyhound_core::Result<()> {
        if self.panics {
            panic!("boom at byte {}", 4096);
        }
        Err(copyhound_core::Error::unavailable("the engine is away"))
    }

    async fn abandon(&self, _task: &Task, reason: &str) -> copyhound_core::Result<()> {
        self.abandoned.lock().unwrap().push(reason.to_string());
        Ok(())
    }
}

#[tokio::test]
async fn a_panic_is_a_failed_attempt_that_abandons_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let queue = queue(dir.path()).await;
    queue.enqueue(vec![work_task()]).await.unwrap();
    let handler = Arc::new(Faulty {
        panics: true,
        abandoned: Mutex::default(),
    });
    let outcome = worker(queue.clone(), handler.clone())
        .run_until_idle(|_| {})
        .await
        .unwrap();
    assert_eq!(outcome.failed, ATTEMPTS as usize, "{outcome:?}");
    assert_eq!(outcome.succeeded, 0);
    let abandoned = handler.abandoned.lock().unwrap().clone();
    assert!(!abandoned.is_empty(), "the handler was told");
    assert!(
        abandoned
            .iter()
            .all(|reason| reason == "panic: boom at byte 4096"),
        "{abandoned:?}"
    );
    let dead = queue.dead_letters(10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].last_error, "panic: boom at byte 4096");
}

#[tokio::test]
async fn an_error_abandons_the_task_on_its_last_attempt_only() {
    let dir = tempfile::tempdir().unwrap();
    let queue = queue(dir.path()).await;
    queue.enqueue(vec![work_task()]).await.unwrap();
    let handler = Arc::new(Faulty {
        panics: false,
        abandoned: Mutex::default(),
    });
    let outcome = worker(queue.clone(), handler.clone())
        .run_until_idle(|_| {})
        .await
        .unwrap();
    assert_eq!(outcome.failed, ATTEMPTS as usize);
    let abandoned = handler.abandoned.lock().unwrap().clone();
    assert_eq!(
        abandoned.len(),
        1,
        "once, on the last attempt: {abandoned:?}"
    );
    assert!(abandoned[0].contains("the engine is away"), "{abandoned:?}");
    assert_eq!(queue.dead_letters(10).await.unwrap().len(), 1);
}

/// A fetcher with a bug: every fetch panics (as a sitemap cut inside a
/// character once did, before any page was fetched).
#[derive(Debug)]
struct PanickingFetcher;

#[async_trait]
impl Fetcher for PanickingFetcher {
    async fn fetch(&self, _request: &FetchRequest) -> copyhound_core::Result<FetchedPage> {
        let text = "网站地图".repeat(2);
        #[allow(clippy::string_slice)]
        let cut = &text[..4];
        unreachable!("{cut}")
    }
}

#[tokio::test]
async fn a_crawl_that_panics_ends_its_run_failed_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
    let queue = queue(&dir.path().join("queue")).await;
    let config = CrawlerConfig {
        allow_private_addresses: true,
        ..CrawlerConfig::default()
    };
    let crawler = Crawler::new(
        config.clone(),
        Arc::new(PanickingFetcher),
        stores.sites.clone(),
        stores.pages.clone(),
        queue.clone(),
    );
    let site = SiteBuilder::new(
        "P01".parse().unwrap(),
        "a site",
        vec!["http://127.0.0.1:9/".into()],
    )
    .policy(SitePolicy::for_crawler(&config))
    .politeness(0.0, 2)
    .build()
    .unwrap();
    stores.sites.put_site(&site).await.unwrap();
    let run_id = CrawlRunId::generate();
    let task = Task::new(
        TaskKind::CrawlSite {
            site_id: site.id.clone(),
            run_id: run_id.clone(),
            scope: None,
        },
        Utc::now(),
    );
    queue.enqueue(vec![task]).await.unwrap();
    let handler = Arc::new(
        Dispatcher::default().with_crawl(CrawlHandler::with_crawler(crawler, Arc::new(NoProgress))),
    );
    let outcome = worker(queue.clone(), handler)
        .run_until_idle(|_| {})
        .await
        .unwrap();
    assert_eq!(outcome.failed, 1, "{outcome:?}");
    assert_eq!(outcome.succeeded, 1, "the retry finds the run ended");
    let run = stores.sites.get_crawl_run(&run_id).await.unwrap();
    assert_eq!(run.status, CrawlRunStatus::Failed);
    assert!(run.finished_at.is_some());
    let errors = run.recent_errors.join(" ");
    assert!(errors.contains("panic"), "{errors}");
    assert!(
        errors.contains("byte index"),
        "the panic's own message: {errors}"
    );
    assert!(queue.dead_letters(10).await.unwrap().is_empty());
}
