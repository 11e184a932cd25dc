//! The worker loop shared by every task kind. `tick()` is one step (receive a
//! batch, run it, acknowledge or fail each task) so tests can drive the loop one
//! step at a time; `run()` repeats it until shutdown. While a task runs, its
//! delivery is extended periodically so a long crawl is not re-delivered to a
//! second worker; on shutdown the deliveries that could not finish in time are
//! released at once rather than waiting out their visibility timeout.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::Result;
use copyhound_core::model::Task;
use copyhound_core::ports::{ReceivedTask, TaskQueue};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{debug, info, warn};

/// Runs one kind of task. Implementations must be idempotent: a task may run
/// more than once (at-least-once delivery).
#[async_trait]
pub trait TaskHandler: std::fmt::Debug + Send + Sync + 'static {
    /// Handles a task. A retryable error retries the task later; any error counts
    /// as a failed attempt.
    async fn handle(&self, task: &Task) -> Result<()>;
}

/// Worker loop settings.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Tasks run at once.
    pub concurrency: usize,
    /// Visibility requested per delivery; extended while the task runs.
    pub visibility: Duration,
    /// Sleep when the queue is empty.
    pub idle_sleep: Duration,
    /// Time given to in-flight tasks after shutdown is requested.
    pub shutdown_deadline: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            concurrency: 2,
            visibility: Duration::from_secs(60),
            idle_sleep: Duration::from_millis(200),
            shutdown_deadline: Duration::from_secs(30),
        }
    }
}

/// What one tick did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickOutcome {
    /// Tasks received.
    pub received: usize,
    /// Tasks that succeeded (acknowledged).
    pub succeeded: usize,
    /// Tasks that failed (retried or dead-lettered by the queue).
    pub failed: usize,
}

/// Pulls tasks from the queue and runs them with a handler.
#[derive(Debug, Clone)]
pub struct Worker {
    queue: Arc<dyn TaskQueue>,
    handler: Arc<dyn TaskHandler>,
    config: WorkerConfig,
}

impl Worker {
    /// Returns a worker over `queue` running tasks with `handler`.
    pub fn new(
        queue: Arc<dyn TaskQueue>,
        handler: Arc<dyn TaskHandler>,
        config: WorkerConfig,
    ) -> Self {
        Self {
            queue,
            handler,
            config,
        }
    }

    /// Receives one batch and runs it to completion.
    pub async fn tick(&self) -> Result<TickOutcome> {
        let (_stop_tx, stop_rx) = watch::channel(false);
        self.tick_until(stop_rx).await
    }

    /// Runs ticks until `shutdown` turns true, then drains within the deadline.
    pub async fn run(&self, mut shutdown: watch::Receiver<bool>) -> Result<()> {
        info!(concurrency = self.config.concurrency, "worker started");
        while !*shutdown.borrow() {
            match self.tick_until(shutdown.clone()).await {
                Ok(outcome) if outcome.received == 0 => {
                    tokio::select! {
                        _ = tokio::time::sleep(self.config.idle_sleep) => {}
                        _ = shutdown.changed() => {}
                    }
                }
                Ok(_) => {}
                Err(error) => {
                    warn!(error = %error, retryable = error.is_retryable(), "worker tick failed");
                    tokio::time::sleep(self.config.idle_sleep.max(Duration::from_millis(500)))
                        .await;
                }
            }
        }
        info!("worker stopped");
        Ok(())
    }

    /// Runs the queue dry: ticks until a receive returns nothing. Returns totals.
    pub async fn drain(&self) -> Result<TickOutcome> {
        let mut total = TickOutcome::default();
        loop {
            let outcome = self.tick().await?;
            if outcome.received == 0 {
                return Ok(total);
            }
            total.received += outcome.received;
            total.succeeded += outcome.succeeded;
            total.failed += outcome.failed;
        }
    }

    async fn tick_until(&self, shutdown: watch::Receiver<bool>) -> Result<TickOutcome> {
        let batch = self
            .queue
            .receive(self.config.concurrency.max(1), self.config.visibility)
            .await?;
        let mut outcome = TickOutcome {
            received: batch.len(),
            ..TickOutcome::default()
        };
        if batch.is_empty() {
            return Ok(outcome);
        }
        let mut running = JoinSet::new();
        for received in batch {
            running.spawn(run_one(
                self.queue.clone(),
                self.handler.clone(),
                received,
                self.config.visibility,
            ));
        }
        let mut shutdown = shutdown;
        loop {
            tokio::select! {
                joined = running.join_next() => match joined {
                    Some(Ok(true)) => outcome.succeeded += 1,
                    Some(Ok(false)) => outcome.failed += 1,
                    Some(Err(error)) => {
                        warn!(error = %error, "task panicked or was aborted");
                        outcome.failed += 1;
                    }
                    None => return Ok(outcome),
                },
                _ = shutdown.changed() => {
                    if *shutdown.borrow() {
                        return Ok(self.finish_within_deadline(running, outcome).await);
                    }
                }
            }
        }
    }

    async fn finish_within_deadline(
        &self,
        mut running: JoinSet<bool>,
        mut outcome: TickOutcome,
    ) -> TickOutcome {
        info!(
            in_flight = running.len(),
            deadline_ms = self.config.shutdown_deadline.as_millis() as u64,
            "draining"
        );
        let deadline = tokio::time::Instant::now() + self.config.shutdown_deadline;
        while !running.is_empty() {
            match tokio::time::timeout_at(deadline, running.join_next()).await {
                Ok(Some(Ok(true))) => outcome.succeeded += 1,
                Ok(Some(_)) => outcome.failed += 1,
                Ok(None) => break,
                Err(_) => {
                    warn!(
                        still_running = running.len(),
                        "shutdown deadline passed; releasing in-flight tasks"
                    );
                    // Aborted tasks release their delivery (see `run_one`'s guard) for another worker.
                    running.abort_all();
                    while running.join_next().await.is_some() {}
                    break;
                }
            }
        }
        outcome
    }
}

/// Runs one delivery; returns whether it succeeded.
async fn run_one(
    queue: Arc<dyn TaskQueue>,
    handler: Arc<dyn TaskHandler>,
    received: ReceivedTask,
    visibility: Duration,
) -> bool {
    let task = received.task.clone();
    let kind = task.kind.name();
    let guard = DeliveryGuard {
        heartbeat: spawn_heartbeat(queue.clone(), received.clone(), visibility),
        queue: queue.clone(),
        received: Some(received.clone()),
    };
    let started = std::time::Instant::now();
    let result = handler.handle(&task).await;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    guard.complete();
    match result {
        Ok(()) => {
            debug!(task_id = %task.id, kind, elapsed_ms, "task done");
            if let Err(error) = queue
                .acknowledge(std::slice::from_ref(&received.ack_id))
                .await
            {
                warn!(task_id = %task.id, error = %error, "acknowledge failed; the task will run again");
            }
            true
        }
        Err(error) => {
            warn!(task_id = %task.id, kind, attempt = received.attempt, code = error.code(), error = %error, "task failed");
            let message = format!("{}: {error}", error.code());
            if let Err(fail_error) = queue.fail(&received.ack_id, &message).await {
                warn!(task_id = %task.id, error = %fail_error, "recording the failure failed; the task will be re-delivered");
            }
            false
        }
    }
}

fn spawn_heartbeat(
    queue: Arc<dyn TaskQueue>,
    received: ReceivedTask,
    visibility: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let period = (visibility / 3).max(Duration::from_millis(50));
        loop {
            tokio::time::sleep(period).await;
            if let Err(error) = queue.extend(&received.ack_id, visibility).await {
                warn!(task_id = %received.task.id, error = %error, "extending the delivery failed");
            }
        }
    })
}

/// Stops the heartbeat when a delivery ends, and makes an aborted task's delivery
/// visible again at once.
struct DeliveryGuard {
    heartbeat: tokio::task::JoinHandle<()>,
    queue: Arc<dyn TaskQueue>,
    received: Option<ReceivedTask>,
}

impl DeliveryGuard {
    fn complete(mut self) {
        self.received = None;
    }
}

impl Drop for DeliveryGuard {
    fn drop(&mut self) {
        self.heartbeat.abort();
        let Some(received) = self.received.take() else {
            return;
        };
        let queue = self.queue.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = queue.extend(&received.ack_id, Duration::ZERO).await;
            });
        }
    }
}
