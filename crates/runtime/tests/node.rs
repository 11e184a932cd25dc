//! A node resolves its backends by URL scheme, in one place, and its worker
//! keeps every slot busy.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::config::{Config, QueueConfig};
use copyhound_core::ids::WorkId;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::{TaskHandler, TaskQueue};
use copyhound_core::test_services::{MONGODB_URL, REDIS_URL, service_url};
use copyhound_queue::LocalTaskQueue;
use copyhound_runtime::{Backends, Node, Worker, WorkerSettings};

fn embedded(dir: &std::path::Path) -> Config {
    Config {
        data_dir: dir.to_path_buf(),
        ..Config::default()
    }
}

#[tokio::test]
async fn no_url_means_the_embedded_default_with_migrations_applied() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = embedded(dir.path());
    config.store.migrate_on_start = true;
    let node = Node::build(&config).await.unwrap();
    for component in ["store", "index", "queue"] {
        assert!(
            dir.path().join(component).try_exists().unwrap(),
            "{component} under the data directory"
        );
    }
    let status = copyhound_store::migrate_status(&node.backends().stores)
        .await
        .unwrap();
    assert!(
        status
            .iter()
            .all(|migration| migration.applied_at.is_some())
    );
    assert!(node.backends().memory_index.is_some());
    assert!(node.backends().data_lock.is_some());
}

#[tokio::test]
async fn an_unknown_scheme_names_the_key_and_the_schemes_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    type Case = (&'static str, fn(&mut Config));
    let cases: [Case; 3] = [
        ("store.url", |config| {
            config.store.url = Some("postgres://user:secret@db/".into())
        }),
        ("index.url", |config| {
            config.index.url = Some("http://index/".into())
        }),
        ("queue.url", |config| {
            config.queue.url = Some("mongodb://queue/".into())
        }),
    ];
    for (key, set) in cases {
        let mut config = embedded(dir.path());
        set(&mut config);
        let error = format!("{:#}", Backends::open(&config).await.unwrap_err());
        assert!(error.contains(key), "{error}");
        assert!(error.contains("unknown scheme"), "{error}");
        assert!(!error.contains("secret"), "credentials masked: {error}");
    }
}

#[tokio::test]
async fn redis_and_mongodb_urls_resolve_to_the_engines() {
    let test = "redis_and_mongodb_urls_resolve_to_the_engines";
    let (Some(redis), Some(mongodb)) =
        (service_url(REDIS_URL, test), service_url(MONGODB_URL, test))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tag = copyhound_core::ids::TaskId::generate().to_string();
    let tag: String = tag.chars().rev().take(10).collect();
    let mut config = embedded(dir.path());
    config.store.url = Some(mongodb);
    config.store.database = format!("copyhound_runtime_{tag}");
    config.index.url = Some(redis.clone());
    config.index.prefix = format!("copyhound-runtime-{tag}:index:");
    config.queue.url = Some(redis.clone());
    config.queue.prefix = format!("copyhound-runtime-{tag}:queue:");
    let backends = Backends::open(&config).await.unwrap();
    assert!(
        backends.data_lock.is_none(),
        "nothing embedded, nothing locked"
    );
    assert!(backends.memory_index.is_none());
    assert!(format!("{:?}", backends.queue).contains("RedisTaskQueue"));
    assert!(format!("{:?}", backends.index).contains("Redis"));
    assert!(format!("{:?}", backends.stores.works).contains("Mongo"));
    backends.stores.check_connectivity().await.unwrap();
    backends.queue.enqueue(vec![work_task("w1")]).await.unwrap();
    assert_eq!(backends.queue.stats().await.unwrap().depth, 1);
    let mut connection = copyhound_redis::Connection::open_single(&redis, "test")
        .await
        .unwrap();
    connection
        .delete_prefix(&format!("copyhound-runtime-{tag}:"))
        .await
        .unwrap();
}

fn work_task(id: &str) -> Task {
    Task::new(
        TaskKind::FingerprintWork {
            work_id: id.parse::<WorkId>().unwrap(),
        },
        Utc::now(),
    )
}

/// Sleeps long for work `slow`, briefly for the others; records finishing order.
#[derive(Debug, Default)]
struct Timed {
    finished: Mutex<Vec<(String, Instant)>>,
    running: AtomicUsize,
    most_running: AtomicUsize,
}

#[async_trait]
impl TaskHandler for Timed {
    async fn handle(&self, task: &Task) -> copyhound_core::Result<()> {
        let TaskKind::FingerprintWork { work_id } = &task.kind else {
            unreachable!()
        };
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_running.fetch_max(now, Ordering::SeqCst);
        let pause = if work_id.as_str() == "slow" {
            1_500
        } else {
            50
        };
        tokio::time::sleep(Duration::from_millis(pause)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.finished
            .lock()
            .unwrap()
            .push((work_id.to_string(), Instant::now()));
        Ok(())
    }
}

#[tokio::test]
async fn a_long_task_never_idles_the_other_slots() {
    let dir = tempfile::tempdir().unwrap();
    let queue: Arc<dyn TaskQueue> = Arc::new(
        LocalTaskQueue::open(dir.path(), &QueueConfig::default())
            .await
            .unwrap(),
    );
    let mut tasks = vec![work_task("slow")];
    tasks.extend((0..8).map(|n| work_task(&format!("quick{n}"))));
    queue.enqueue(tasks).await.unwrap();
    let handler = Arc::new(Timed::default());
    let worker = Worker::new(
        queue.clone(),
        handler.clone(),
        WorkerSettings {
            concurrency: 3,
            idle_sleep: Duration::from_millis(20),
            ..WorkerSettings::default()
        },
    );
    let outcome = worker.drain().await.unwrap();
    assert_eq!(outcome.received, 9);
    assert_eq!(outcome.succeeded, 9);
    let finished = handler.finished.lock().unwrap().clone();
    let slow_done = finished
        .iter()
        .find(|(id, _)| id == "slow")
        .map(|(_, at)| *at)
        .unwrap();
    let quick_before_slow = finished
        .iter()
        .filter(|(id, at)| id != "slow" && *at < slow_done)
        .count();
    assert_eq!(
        quick_before_slow, 8,
        "every quick task ran in the free slots while the slow one ran: {finished:?}"
    );
    assert!(handler.most_running.load(Ordering::SeqCst) <= 3);
    assert_eq!(queue.stats().await.unwrap().depth, 0);
}

/// A crawl runs until the pages it stored are fingerprinted (as a site
/// bigger than the queue's backlog would): it must not hold the only slot.
#[derive(Debug, Default)]
struct CrawlWaitsForWork {
    fingerprinted: AtomicUsize,
    crawls_running: AtomicUsize,
    most_crawls: AtomicUsize,
    most_others: AtomicUsize,
    others_running: AtomicUsize,
}

#[async_trait]
impl TaskHandler for CrawlWaitsForWork {
    async fn handle(&self, task: &Task) -> copyhound_core::Result<()> {
        match &task.kind {
            TaskKind::CrawlSite { .. } => {
                let now = self.crawls_running.fetch_add(1, Ordering::SeqCst) + 1;
                self.most_crawls.fetch_max(now, Ordering::SeqCst);
                let deadline = Instant::now() + Duration::from_secs(10);
                while self.fingerprinted.load(Ordering::SeqCst) < 4 {
                    assert!(
                        Instant::now() < deadline,
                        "the crawl starved the other tasks"
                    );
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                self.crawls_running.fetch_sub(1, Ordering::SeqCst);
            }
            _ => {
                let now = self.others_running.fetch_add(1, Ordering::SeqCst) + 1;
                self.most_others.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.others_running.fetch_sub(1, Ordering::SeqCst);
                self.fingerprinted.fetch_add(1, Ordering::SeqCst);
            }
        }
        Ok(())
    }
}

/// A crawl of `site`, as the scheduler enqueues it.
fn crawl_task(site: &str) -> Task {
    Task::new(
        TaskKind::CrawlSite {
            site_id: site.parse().unwrap(),
            run_id: copyhound_core::ids::CrawlRunId::generate(),
            scope: None,
        },
        Utc::now(),
    )
}

#[tokio::test]
async fn crawls_run_in_slots_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let queue: Arc<dyn TaskQueue> = Arc::new(
        LocalTaskQueue::open(dir.path(), &QueueConfig::default())
            .await
            .unwrap(),
    );
    // Two crawls first, as a scheduler enqueues them; the work after them.
    let mut tasks = vec![
        crawl_task("site-a"),
        crawl_task("site-b"),
        crawl_task("site-c"),
    ];
    tasks.extend((0..4).map(|n| work_task(&format!("w{n}"))));
    queue.enqueue(tasks).await.unwrap();
    let handler = Arc::new(CrawlWaitsForWork::default());
    let worker = Worker::new(
        queue.clone(),
        handler.clone(),
        WorkerSettings {
            concurrency: 2,
            idle_sleep: Duration::from_millis(20),
            ..WorkerSettings::default()
        },
    );
    let outcome = tokio::time::timeout(Duration::from_secs(20), worker.drain())
        .await
        .expect("no starvation")
        .unwrap();
    assert_eq!(outcome.succeeded, 7, "{outcome:?}");
    // Two crawl slots and two others: a third crawl waits for a slot.
    assert!(handler.most_crawls.load(Ordering::SeqCst) <= 3);
    assert!(
        handler.most_crawls.load(Ordering::SeqCst) + handler.most_others.load(Ordering::SeqCst)
            <= 4
    );
}

/// A crawl that enqueues work and waits for it to run (as a crawl's pages
/// are fingerprinted while it goes on).
#[derive(Debug)]
struct CrawlEnqueues {
    queue: Arc<dyn TaskQueue>,
    worked: AtomicUsize,
}

#[async_trait]
impl TaskHandler for CrawlEnqueues {
    async fn handle(&self, task: &Task) -> copyhound_core::Result<()> {
        match &task.kind {
            TaskKind::CrawlSite { .. } => {
                self.queue.enqueue(vec![work_task("page")]).await?;
                while self.worked.load(Ordering::SeqCst) == 0 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            _ => {
                self.worked.fetch_add(1, Ordering::SeqCst);
            }
        }
        Ok(())
    }
}

#[tokio::test]
async fn work_enqueued_while_the_slots_idle_starts_without_the_idle_sleep() {
    let dir = tempfile::tempdir().unwrap();
    let queue: Arc<dyn TaskQueue> = Arc::new(
        LocalTaskQueue::open(dir.path(), &QueueConfig::default())
            .await
            .unwrap(),
    );
    queue.enqueue(vec![crawl_task("site-a")]).await.unwrap();
    let handler = Arc::new(CrawlEnqueues {
        queue: queue.clone(),
        worked: AtomicUsize::new(0),
    });
    let idle_sleep = Duration::from_secs(30);
    let worker = Worker::new(
        queue.clone(),
        handler.clone(),
        WorkerSettings {
            concurrency: 1,
            idle_sleep,
            ..WorkerSettings::default()
        },
    );
    let started = Instant::now();
    // The crawl ends only once its work ran: with the slot waiting out the
    // idle sleep, that is half a minute.
    let outcome = tokio::time::timeout(idle_sleep / 2, worker.run_until_idle(|_| {}))
        .await
        .expect("the enqueue woke the worker")
        .unwrap();
    assert_eq!(outcome.succeeded, 2, "{outcome:?}");
    assert!(started.elapsed() < idle_sleep / 2);
}
