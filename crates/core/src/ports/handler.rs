//! How a stage runs its tasks. Each stage crate exports one implementation for
//! the task kinds it owns; the runtime routes every delivered task to it.

use std::time::Duration;

use async_trait::async_trait;

use crate::Result;
use crate::model::Task;

/// Runs the task kinds of one stage. Implementations must be idempotent: the
/// queue delivers at least once, so a task may run more than once.
#[async_trait]
pub trait TaskHandler: std::fmt::Debug + Send + Sync + 'static {
    /// Whether `task` may start now. `Some(delay)` puts it back for `delay`
    /// without counting an attempt (its tenant holds its share of crawl
    /// slots); a slot taken here is the handler's to release. The default
    /// admits everything.
    async fn admit(&self, task: &Task) -> Result<Option<Duration>> {
        let _ = task;
        Ok(None)
    }

    /// Handles a task. A retryable error retries the task later; any error
    /// counts as a failed attempt.
    async fn handle(&self, task: &Task) -> Result<()>;

    /// Called when `task` will not run to completion: it panicked, or its last
    /// attempt failed. Ends what the task stood for where people look (a crawl
    /// run ends `failed` with `reason`), so nothing waits forever on a task
    /// the queue gave up. Idempotent; the default does nothing.
    async fn abandon(&self, task: &Task, reason: &str) -> Result<()> {
        let _ = (task, reason);
        Ok(())
    }
}
