//! `Worker::tick`: one unit of work, stepped by the test (no sleeps, no polling):
//! at most one task received, run to its end, and acknowledged, failed or
//! deferred before it returns.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::config::QueueConfig;
use copyhound_core::ids::WorkId;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::{TaskHandler, TaskQueue};
use copyhound_queue::LocalTaskQueue;
use copyhound_runtime::{Dispatcher, Ran, Tick, TickOutcome, Worker, WorkerSettings};

async fn queue(dir: &std::path::Path) -> Arc<LocalTaskQueue> {
    let config = QueueConfig {
        max_attempts: 3,
        // Far in the future: a failed task is not due again during the test.
        retry_backoff_ms: 3_600_000,
        ..QueueConfig::default()
    };
    Arc::new(LocalTaskQueue::open(dir, &config).await.unwrap())
}

fn worker(queue: Arc<dyn TaskQueue>, handler: Arc<dyn TaskHandler>) -> Worker {
    let settings = WorkerSettings {
        max_attempts: 3,
        ..WorkerSettings::default()
    };
    Worker::new(queue, handler, settings)
}

fn work_task(id: &str) -> Task {
    let work_id: WorkId = id.parse().unwrap();
    Task::new(TaskKind::FingerprintWork { work_id }, Utc::now())
}

/// Succeeds on `ok*` works, fails on `bad*`, defers `later*` (as a tenant at its
/// share of crawl slots); records what it ran.
#[derive(Debug, Default)]
struct ByName {
    ran: Mutex<Vec<String>>,
}

fn work_of(task: &Task) -> String {
    match &task.kind {
        TaskKind::FingerprintWork { work_id } => work_id.to_string(),
        other => other.name().to_string(),
    }
}

#[async_trait]
impl TaskHandler for ByName {
    async fn admit(&self, task: &Task) -> copyhound_core::Result<Option<Duration>> {
        Ok(work_of(task)
            .starts_with("later")
            .then_some(Duration::from_secs(3600)))
    }

    async fn handle(&self, task: &Task) -> copyhound_core::Result<()> {
        let work = work_of(task);
        self.ran.lock().unwrap().push(work.clone());
        if work.starts_with("bad") {
            return Err(copyhound_core::Error::unavailable("the engine is away"));
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_tick_runs_one_task_to_its_end_and_says_how_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let queue = queue(dir.path()).await;
    let handler = Arc::new(ByName::default());
    let worker = worker(queue.clone(), handler.clone());
    assert_eq!(worker.tick().await.unwrap(), Tick::Idle, "an empty queue");

    queue
        .enqueue(vec![
            work_task("ok1"),
            work_task("bad1"),
            work_task("later1"),
        ])
        .await
        .unwrap();
    let ran = |outcome| Tick::Ran {
        kind: "fingerprint_work",
        outcome,
    };
    assert_eq!(worker.tick().await.unwrap(), ran(Ran::Succeeded));
    // Acknowledged before the tick returned: one task less, nothing in flight.
    let stats = queue.stats().await.unwrap();
    assert_eq!((stats.depth, stats.in_flight), (2, 0));
    assert_eq!(*handler.ran.lock().unwrap(), ["ok1"]);

    assert_eq!(worker.tick().await.unwrap(), ran(Ran::Failed));
    let stats = queue.stats().await.unwrap();
    assert_eq!((stats.in_flight, stats.retrying), (0, 1), "{stats:?}");

    assert_eq!(worker.tick().await.unwrap(), ran(Ran::Deferred));
    assert_eq!(
        *handler.ran.lock().unwrap(),
        ["ok1", "bad1"],
        "a deferred task does not run"
    );
    // The retry and the deferred task are due in an hour: nothing to do now.
    assert_eq!(worker.tick().await.unwrap(), Tick::Idle);
}

#[tokio::test]
async fn ticking_until_idle_runs_every_due_task_once() {
    let dir = tempfile::tempdir().unwrap();
    let queue = queue(dir.path()).await;
    let handler = Arc::new(ByName::default());
    let worker = worker(queue.clone(), handler.clone());
    queue
        .enqueue(vec![
            work_task("ok1"),
            work_task("bad1"),
            work_task("ok2"),
            work_task("later1"),
        ])
        .await
        .unwrap();
    let outcome = worker.tick_until_idle().await.unwrap();
    assert_eq!(
        outcome,
        TickOutcome {
            received: 4,
            succeeded: 2,
            failed: 1,
            deferred: 1,
        }
    );
    assert_eq!(*handler.ran.lock().unwrap(), ["ok1", "bad1", "ok2"]);
}

#[tokio::test]
async fn a_task_of_a_stage_the_process_does_not_run_fails() {
    let dir = tempfile::tempdir().unwrap();
    let queue = queue(dir.path()).await;
    queue.enqueue(vec![work_task("w1")]).await.unwrap();
    let worker = worker(queue.clone(), Arc::new(Dispatcher::default()));
    assert_eq!(
        worker.tick().await.unwrap(),
        Tick::Ran {
            kind: "fingerprint_work",
            outcome: Ran::Failed,
        }
    );
}
