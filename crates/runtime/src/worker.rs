//! The worker loop every task kind runs in. A worker keeps `concurrency` tasks
//! running: it asks the queue for as many tasks as it has free slots, and asks
//! again as soon as one finishes, so one long crawl never idles the other
//! slots. A site crawl waits on the network for most of its life, and for as
//! long as the whole crawl: it runs in a crawl slot of its own (as many as
//! `concurrency`) while one is free, so crawls never hold the slots that
//! fingerprinting and comparing their pages need.
//!
//! While a task runs its delivery is extended periodically, so it is not
//! re-delivered to a second worker; on shutdown the deliveries that cannot
//! finish in time are released at once rather than waiting out their
//! visibility timeout.
//!
//! A task that panics is a failed attempt with the panic's message, and its
//! handler is told to abandon it (as after a last failed attempt): a bug hit by
//! one page ends its crawl run as `failed` with the reason, never a run that
//! stays `running` while the queue retries and dead-letters the task.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use copyhound_core::Result;
use copyhound_core::config::Config;
use copyhound_core::model::TaskKind;
use copyhound_core::ports::{ReceivedTask, TaskHandler, TaskQueue};
use copyhound_core::stages::{Stage, time_async};
use futures_util::FutureExt;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{debug, error, info, warn};

/// Worker loop settings.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    /// Tasks run at once.
    pub concurrency: usize,
    /// Visibility requested per delivery; extended while the task runs.
    pub visibility: Duration,
    /// Wait before asking an empty queue again.
    pub idle_sleep: Duration,
    /// Time given to in-flight tasks after shutdown is requested.
    pub shutdown_deadline: Duration,
    /// The queue's deliveries before a task is dead-lettered (`queue.max_attempts`):
    /// a failure on this attempt abandons the task.
    pub max_attempts: u32,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            concurrency: 2,
            visibility: Duration::from_secs(60),
            idle_sleep: Duration::from_millis(200),
            shutdown_deadline: Duration::from_secs(30),
            max_attempts: 5,
        }
    }
}

impl WorkerSettings {
    /// Returns the settings of `[worker]` and `[queue]`; `concurrency`
    /// overrides `worker.concurrency`.
    pub fn from_config(config: &Config, concurrency: Option<u32>) -> Self {
        Self {
            concurrency: concurrency.unwrap_or(config.worker.concurrency).max(1) as usize,
            visibility: Duration::from_millis(config.queue.visibility_timeout_ms.max(1_000)),
            idle_sleep: Duration::from_millis(200),
            shutdown_deadline: Duration::from_millis(config.worker.shutdown_deadline_ms),
            max_attempts: config.queue.max_attempts.max(1),
        }
    }
}

/// What a run of the loop did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickOutcome {
    /// Tasks received.
    pub received: usize,
    /// Tasks that succeeded (acknowledged).
    pub succeeded: usize,
    /// Tasks that failed (retried or dead-lettered by the queue).
    pub failed: usize,
    /// Tasks put back without an attempt: not their turn (a tenant at its
    /// share of crawl slots).
    pub deferred: usize,
}

/// How one delivery ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ran {
    /// The handler succeeded; the delivery was acknowledged.
    Succeeded,
    /// The handler failed or panicked; the queue retries or dead-letters it.
    Failed,
    /// Put back without an attempt (not its turn, see [`TaskHandler::admit`]).
    Deferred,
}

/// What one [`Worker::tick`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tick {
    /// The queue delivered nothing.
    Idle,
    /// One task ran to its end: its kind ([`TaskKind::name`]) and how its
    /// delivery ended (acknowledged, failed or deferred).
    Ran {
        /// The task's kind.
        kind: &'static str,
        /// How its delivery ended.
        outcome: Ran,
    },
}

/// When the loop ends on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Until {
    /// Never: only shutdown stops it.
    Shutdown,
    /// When nothing runs and a receive returns nothing.
    ReceiveEmpty,
    /// When nothing runs and the queue holds nothing queued, in flight or retrying.
    QueueEmpty,
}

/// Pulls tasks from the queue and runs them with a handler.
#[derive(Debug, Clone)]
pub struct Worker {
    queue: Arc<dyn TaskQueue>,
    handler: Arc<dyn TaskHandler>,
    settings: WorkerSettings,
}

impl Worker {
    /// Returns a worker over `queue` running tasks with `handler`.
    pub fn new(
        queue: Arc<dyn TaskQueue>,
        handler: Arc<dyn TaskHandler>,
        settings: WorkerSettings,
    ) -> Self {
        Self {
            queue,
            handler,
            settings,
        }
    }

    /// Runs tasks as slots free up until `shutdown` turns true, then drains
    /// within the deadline.
    pub async fn run(&self, shutdown: watch::Receiver<bool>) -> Result<()> {
        info!(concurrency = self.settings.concurrency, "worker started");
        self.pull(shutdown, Until::Shutdown, |_| {}).await?;
        info!("worker stopped");
        Ok(())
    }

    /// Runs until nothing runs and a receive returns nothing. Returns totals.
    pub async fn drain(&self) -> Result<TickOutcome> {
        let (_stop, never) = watch::channel(false);
        self.pull(never, Until::ReceiveEmpty, |_| {}).await
    }

    /// Runs until the queue holds nothing queued, in flight or retrying (so
    /// retries due later are waited for); `progress` sees the totals after
    /// each finished task.
    pub async fn run_until_idle(&self, progress: impl FnMut(&TickOutcome)) -> Result<TickOutcome> {
        let (_stop, never) = watch::channel(false);
        self.pull(never, Until::QueueEmpty, progress).await
    }

    /// Does one unit of work and returns what it did: receives at most one
    /// task, runs it to its end on the caller's task (its delivery extended
    /// meanwhile) and acknowledges, fails or defers it. Deterministic, for
    /// tests to step the worker instead of sleeping; the loop runs the same
    /// delivery ([`Worker::run_delivery`]) in each of its slots.
    pub async fn tick(&self) -> Result<Tick> {
        let batch = time_async(
            Stage::Queue,
            self.queue.receive(1, self.settings.visibility),
        )
        .await?;
        match batch.into_iter().next() {
            Some(received) => Ok(Tick::Ran {
                kind: received.task.kind.name(),
                outcome: self.run_delivery(received).await,
            }),
            None => Ok(Tick::Idle),
        }
    }

    /// Ticks until the queue delivers nothing; returns the totals.
    pub async fn tick_until_idle(&self) -> Result<TickOutcome> {
        let mut total = TickOutcome::default();
        while let Tick::Ran { outcome, .. } = self.tick().await? {
            total.received += 1;
            count(&mut total, Ok(outcome));
        }
        Ok(total)
    }

    /// Runs one received delivery to its end and returns how it ended: what
    /// each slot of the loop and a [`Worker::tick`] do with a task.
    pub fn run_delivery(
        &self,
        received: ReceivedTask,
    ) -> impl Future<Output = Ran> + Send + 'static {
        run_one(
            self.queue.clone(),
            self.handler.clone(),
            received,
            self.settings.visibility,
            self.settings.max_attempts,
        )
    }

    async fn pull(
        &self,
        mut shutdown: watch::Receiver<bool>,
        until: Until,
        mut progress: impl FnMut(&TickOutcome),
    ) -> Result<TickOutcome> {
        let slots = self.settings.concurrency.max(1);
        let crawl_slots = slots;
        let mut running = JoinSet::new();
        // Tasks in crawl slots; every other running task holds a slot.
        let mut in_crawl_slots: HashSet<tokio::task::Id> = HashSet::new();
        let mut total = TickOutcome::default();
        loop {
            if *shutdown.borrow() {
                return Ok(self.finish_within_deadline(running, total).await);
            }
            let mut received_now = 0;
            let mut to_crawl_slots = 0;
            let busy = running.len() - in_crawl_slots.len();
            if busy < slots {
                match time_async(
                    Stage::Queue,
                    self.queue.receive(slots - busy, self.settings.visibility),
                )
                .await
                {
                    Ok(batch) => {
                        received_now = batch.len();
                        total.received += batch.len();
                        for received in batch {
                            let crawl = matches!(received.task.kind, TaskKind::CrawlSite { .. })
                                && in_crawl_slots.len() < crawl_slots;
                            let handle = running.spawn(self.run_delivery(received));
                            if crawl {
                                in_crawl_slots.insert(handle.id());
                                to_crawl_slots += 1;
                            }
                        }
                    }
                    Err(error) if until == Until::Shutdown || !running.is_empty() => {
                        warn!(error = %error, retryable = error.is_retryable(), "receiving tasks failed");
                        self.pause(
                            &mut shutdown,
                            self.settings.idle_sleep.max(Duration::from_millis(500)),
                        )
                        .await;
                        continue;
                    }
                    Err(error) => return Err(error),
                }
            }
            if running.is_empty() {
                if received_now == 0 {
                    match until {
                        Until::ReceiveEmpty => return Ok(total),
                        Until::QueueEmpty => {
                            let stats = self.queue.stats().await?;
                            if stats.depth == 0 && stats.in_flight == 0 && stats.retrying == 0 {
                                return Ok(total);
                            }
                        }
                        Until::Shutdown => {}
                    }
                    tokio::select! {
                        _ = self.wait_for_work() => {}
                        _ = shutdown.changed() => {}
                    }
                }
                continue;
            }
            let free = running.len() - in_crawl_slots.len() < slots;
            if free && to_crawl_slots > 0 {
                // Crawls went to crawl slots: ask again for the free ones.
                continue;
            }
            // Wait for a slot to free up; with free slots and an empty queue,
            // look again on an enqueue, or after the idle sleep.
            let poll_again = free && received_now == 0;
            tokio::select! {
                Some(joined) = running.join_next_with_id() => {
                    let id = match &joined {
                        Ok((id, _)) => *id,
                        Err(error) => error.id(),
                    };
                    in_crawl_slots.remove(&id);
                    count(&mut total, joined.map(|(_, ran)| ran));
                    progress(&total);
                }
                _ = self.wait_for_work(), if poll_again => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    /// Waits up to the idle sleep for the queue to signal an enqueue.
    async fn wait_for_work(&self) {
        if !self.queue.wait_for_work(self.settings.idle_sleep).await {
            tokio::time::sleep(self.settings.idle_sleep).await;
        }
    }

    async fn pause(&self, shutdown: &mut watch::Receiver<bool>, duration: Duration) {
        tokio::select! {
            _ = tokio::time::sleep(duration) => {}
            _ = shutdown.changed() => {}
        }
    }

    async fn finish_within_deadline(
        &self,
        mut running: JoinSet<Ran>,
        mut outcome: TickOutcome,
    ) -> TickOutcome {
        if running.is_empty() {
            return outcome;
        }
        info!(
            in_flight = running.len(),
            deadline_ms = self.settings.shutdown_deadline.as_millis() as u64,
            "draining"
        );
        let deadline = tokio::time::Instant::now() + self.settings.shutdown_deadline;
        while !running.is_empty() {
            match tokio::time::timeout_at(deadline, running.join_next()).await {
                Ok(Some(joined)) => count(&mut outcome, joined),
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

fn count(outcome: &mut TickOutcome, joined: std::result::Result<Ran, tokio::task::JoinError>) {
    match joined {
        Ok(Ran::Succeeded) => outcome.succeeded += 1,
        Ok(Ran::Failed) => outcome.failed += 1,
        Ok(Ran::Deferred) => outcome.deferred += 1,
        Err(error) => {
            warn!(error = %error, "task panicked or was aborted");
            outcome.failed += 1;
        }
    }
}

/// Runs one delivery and counts how it ended
/// (`copyhound_tasks_total{kind, outcome}`).
async fn run_one(
    queue: Arc<dyn TaskQueue>,
    handler: Arc<dyn TaskHandler>,
    received: ReceivedTask,
    visibility: Duration,
    max_attempts: u32,
) -> Ran {
    let kind = received.task.kind.name();
    let ran = deliver(queue, handler, received, visibility, max_attempts).await;
    let outcome = match ran {
        Ran::Succeeded => "succeeded",
        Ran::Failed => "failed",
        Ran::Deferred => "deferred",
    };
    metrics::counter!("copyhound_tasks_total", "kind" => kind, "outcome" => outcome).increment(1);
    ran
}

async fn deliver(
    queue: Arc<dyn TaskQueue>,
    handler: Arc<dyn TaskHandler>,
    received: ReceivedTask,
    visibility: Duration,
    max_attempts: u32,
) -> Ran {
    let task = received.task.clone();
    let kind = task.kind.name();
    match handler.admit(&task).await {
        Ok(None) => {}
        Ok(Some(delay)) => {
            debug!(task_id = %task.id, kind, delay_ms = delay.as_millis() as u64, "task deferred");
            if let Err(error) = queue.defer(&received.ack_id, delay).await {
                warn!(task_id = %task.id, error = %error, "deferring failed; the task will be re-delivered");
            }
            return Ran::Deferred;
        }
        // Admission could not be decided (a store is down): run it rather than lose it.
        Err(error) => {
            warn!(task_id = %task.id, error = %error, "admission failed; running the task")
        }
    }
    let guard = DeliveryGuard {
        heartbeat: spawn_heartbeat(queue.clone(), received.clone(), visibility),
        queue: queue.clone(),
        received: Some(received.clone()),
    };
    let started = std::time::Instant::now();
    let result = match AssertUnwindSafe(handler.handle(&task)).catch_unwind().await {
        Ok(result) => result.map_err(|error| (format!("{}: {error}", error.code()), false)),
        Err(panic) => Err((format!("panic: {}", panic_message(panic.as_ref())), true)),
    };
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    guard.complete();
    match result {
        Ok(()) => {
            debug!(task_id = %task.id, kind, elapsed_ms, "task done");
            if let Err(error) = time_async(
                Stage::Queue,
                queue.acknowledge(std::slice::from_ref(&received.ack_id)),
            )
            .await
            {
                warn!(task_id = %task.id, error = %error, "acknowledge failed; the task will run again");
            }
            Ran::Succeeded
        }
        Err((message, panicked)) => {
            if panicked {
                error!(task_id = %task.id, kind, attempt = received.attempt, error = %message, "task panicked");
            } else {
                warn!(task_id = %task.id, kind, attempt = received.attempt, error = %message, "task failed");
            }
            if (panicked || received.attempt >= max_attempts)
                && let Err(abandon_error) = handler.abandon(&task, &message).await
            {
                warn!(task_id = %task.id, error = %abandon_error, "abandoning the task failed");
            }
            if let Err(fail_error) = queue.fail(&received.ack_id, &message).await {
                warn!(task_id = %task.id, error = %fail_error, "recording the failure failed; the task will be re-delivered");
            }
            Ran::Failed
        }
    }
}

/// The text a panic carried (`panic!` with a literal or a format string).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    text.chars().take(500).collect()
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
