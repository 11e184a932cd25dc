use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::{Task, Timestamp};

/// Opaque handle of one delivery of a task; acknowledging it completes the task.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AckId(pub String);

/// A task handed to a worker.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceivedTask {
    /// Handle for `acknowledge` / `fail` / `extend`.
    pub ack_id: AckId,
    /// The task.
    pub task: Task,
    /// 1 for the first delivery, incremented on every re-delivery.
    pub attempt: u32,
}

/// A task that failed too often, with its last error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeadTask {
    /// The task.
    pub task: Task,
    /// Deliveries made.
    pub attempts: u32,
    /// The last error.
    pub last_error: String,
    /// When it was dead-lettered.
    pub dead_at: Timestamp,
}

/// Queue figures, exported as metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueStats {
    /// Tasks waiting for delivery (including scheduled retries).
    pub depth: u64,
    /// Tasks delivered and not yet acknowledged.
    pub in_flight: u64,
    /// Tasks waiting for a retry after a failure.
    pub retrying: u64,
    /// Tasks in the dead-letter list.
    pub dead: u64,
}

/// An at-least-once task queue with a visibility timeout.
///
/// Contract: a received task is invisible to other consumers for `visibility`;
/// if it is neither acknowledged nor extended in that time it is delivered again
/// (a dead worker loses nothing). `fail` schedules a retry with backoff, and
/// after the configured number of attempts moves the task to the dead-letter
/// list. Acknowledging twice, or after a re-delivery, is not an error. Handlers
/// must be idempotent: the same task may run more than once.
#[async_trait]
pub trait TaskQueue: fmt::Debug + Send + Sync + 'static {
    /// Returns `Ok` when the backend answers.
    async fn check_connectivity(&self) -> Result<()>;

    /// Adds tasks.
    async fn enqueue(&self, tasks: Vec<Task>) -> Result<()>;

    /// Returns up to `max` tasks, hidden from others for `visibility`. Never
    /// waits: an empty result means nothing is ready now. A re-delivery past
    /// the configured attempts dead-letters the task instead.
    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<ReceivedTask>>;

    /// Completes deliveries. An entry already completed is ignored; a handle
    /// of an older delivery of a re-delivered task still completes the task.
    /// An acknowledgement may be lost in a crash shortly after it returns (the
    /// task then runs again); every other operation is durable when it returns.
    async fn acknowledge(&self, ack_ids: &[AckId]) -> Result<()>;

    /// Records a failed delivery: retry later, or dead-letter after too many attempts.
    /// A handle that no longer holds its task (acknowledged, re-delivered) is ignored.
    async fn fail(&self, ack_id: &AckId, error: &str) -> Result<()>;

    /// Puts a delivery back, visible again after `delay`, without counting it
    /// as an attempt: the task could not start yet (its tenant holds its share
    /// of crawl slots). A handle that no longer holds its task is ignored.
    async fn defer(&self, ack_id: &AckId, delay: Duration) -> Result<()>;

    /// Takes one of `limit` slots of `group` for `holder` for `lease` from now,
    /// or renews the slot `holder` already has; `false` when all are held by
    /// others. A slot whose lease lapses (its holder died) is free again.
    /// Shared by every worker on the queue: it is how tenants share crawls.
    async fn acquire_slot(
        &self,
        group: &str,
        holder: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool>;

    /// Frees `holder`'s slot of `group`; freeing a slot not held is no error.
    async fn release_slot(&self, group: &str, holder: &str) -> Result<()>;

    /// Reserves the next turn of `key`, `interval` after the turn reserved
    /// before it by any consumer of the queue, and returns how long to wait
    /// for it (zero when the key is free). Shared by every process on the
    /// queue: it is how a host's minimum interval between requests holds
    /// however many crawlers run.
    async fn reserve_turn(&self, key: &str, interval: Duration) -> Result<Duration>;

    /// Keeps a long-running delivery hidden for another `visibility` from now.
    /// Answers `NotFound` when the handle no longer holds its task (acknowledged,
    /// failed, or timed out and re-delivered): the worker has lost it.
    async fn extend(&self, ack_id: &AckId, visibility: Duration) -> Result<()>;

    /// Returns depth, in-flight, retry and dead-letter counts.
    async fn stats(&self) -> Result<QueueStats>;

    /// Lists up to `limit` dead-lettered tasks, oldest first.
    async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadTask>>;

    /// Moves dead-lettered tasks back to the queue with a fresh attempt count;
    /// returns how many were re-queued.
    async fn retry_dead(&self, limit: usize) -> Result<u64>;

    /// Waits until a task may have been enqueued, for at most `within`, and
    /// returns `true`; a queue that cannot tell returns `false` at once, and
    /// the caller waits `within` itself. A worker with free slots and an
    /// empty queue waits here rather than sleeping, so a task enqueued in the
    /// meantime starts at once.
    async fn wait_for_work(&self, within: Duration) -> bool {
        let _ = within;
        false
    }
}
