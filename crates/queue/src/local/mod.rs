//! The embedded queue: one redb file, so a single-process deployment keeps its
//! pending work across restarts without running Redis. Same contract as the
//! Redis queue (visibility timeout, attempts, backoff, dead letters); the
//! conformance suite holds both to it.

#[cfg(test)]
mod disk_full_test;
mod slots;
mod store;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;

use copyhound_core::config::QueueConfig;
use copyhound_core::model::Task;
use copyhound_core::ports::{AckId, DeadTask, QueueStats, ReceivedTask, TaskQueue};
use copyhound_core::stages::{Stage, charge};
use copyhound_core::{Error, ErrorKind, Result};

use crate::codec::{self, Delivery};
use slots::Slots;
use store::Store;

/// A persistent task queue in `<dir>/queue.redb`, for the embedded mode.
///
/// One process (one instance) owns the file; deliveries it left in flight are
/// visible again as soon as the file is reopened. In-process workers can wait
/// on [`LocalTaskQueue::receive_wait`] or [`TaskQueue::wait_for_work`]
/// instead of polling.
#[derive(Debug, Clone)]
pub struct LocalTaskQueue {
    store: Arc<Store>,
    work_available: Arc<Notify>,
    slots: Arc<Slots>,
}

impl LocalTaskQueue {
    /// Opens (or creates) the queue in `dir`.
    pub async fn open(dir: &Path, config: &QueueConfig) -> Result<Self> {
        let dir = dir.to_path_buf();
        let max_attempts = config.max_attempts;
        let schedule =
            codec::retry_schedule_ms(Duration::from_millis(config.retry_backoff_ms), max_attempts);
        let store = blocking(move || Store::open(&dir, max_attempts, schedule)).await?;
        Ok(Self {
            store: Arc::new(store),
            work_available: Arc::new(Notify::new()),
            slots: Arc::default(),
        })
    }

    /// Opens the queue file at `path` through `open` (tests: a disk that
    /// fills on demand).
    #[cfg(test)]
    async fn open_on(
        path: &Path,
        open: copyhound_redb::Opener,
        config: &QueueConfig,
    ) -> Result<Self> {
        let path = path.to_path_buf();
        let max_attempts = config.max_attempts;
        let schedule =
            codec::retry_schedule_ms(Duration::from_millis(config.retry_backoff_ms), max_attempts);
        let store = blocking(move || Store::open_on(&path, open, max_attempts, schedule)).await?;
        Ok(Self {
            store: Arc::new(store),
            work_available: Arc::new(Notify::new()),
            slots: Arc::default(),
        })
    }

    /// Returns up to `limit` tasks waiting for delivery, oldest first, without
    /// delivering them (inspection and tests).
    pub async fn ready_tasks(&self, limit: usize) -> Result<Vec<Task>> {
        let ready = self.run(move |store| store.ready(limit)).await?;
        ready.iter().map(|task| codec::decode_task(task)).collect()
    }

    /// Receives like [`TaskQueue::receive`], but when nothing is ready waits up
    /// to `wait` for an enqueue in this process (or a retry falling due).
    pub async fn receive_wait(
        &self,
        max: usize,
        visibility: Duration,
        wait: Duration,
    ) -> Result<Vec<ReceivedTask>> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.work_available.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let received = self.receive(max, visibility).await?;
            let now = tokio::time::Instant::now();
            if !received.is_empty() || now >= deadline {
                return Ok(received);
            }
            // Retries and expired deliveries fall due without a notification.
            let nap = (deadline - now).min(Duration::from_millis(100));
            let _ = tokio::time::timeout(nap, notified).await;
        }
    }

    /// Returns whether writes commit, or why they fail (a full disk).
    pub fn health(&self) -> copyhound_redb::DbHealth {
        self.store.health()
    }

    /// Runs a read on the blocking pool.
    async fn run<T: Send + 'static>(
        &self,
        operation: impl FnOnce(&Store) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let store = Arc::clone(&self.store);
        blocking(move || charge(Stage::Queue, || operation(&store))).await
    }
}

async fn blocking<T: Send + 'static>(
    operation: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(operation)
        .await
        .map_err(|error| {
            Error::with_source(ErrorKind::Internal, "local queue operation panicked", error)
        })?
}

#[async_trait]
impl TaskQueue for LocalTaskQueue {
    async fn check_connectivity(&self) -> Result<()> {
        if let copyhound_redb::DbHealth::Degraded(reason) = self.health() {
            return Err(Error::unavailable(reason));
        }
        self.run(|store| store.stats().map(|_| ())).await
    }

    async fn enqueue(&self, tasks: Vec<Task>) -> Result<()> {
        if tasks.is_empty() {
            return Ok(());
        }
        let encoded = tasks
            .iter()
            .map(codec::encode_task)
            .collect::<Result<Vec<_>>>()?;
        self.store.enqueue(encoded).await?;
        self.work_available.notify_waiters();
        // And a permit for a waiter about to wait (between its empty receive
        // and its wait): at worst one receive too many.
        self.work_available.notify_one();
        Ok(())
    }

    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<ReceivedTask>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let visibility_ms = codec::duration_ms(visibility);
        let delivered = self.store.receive(max, visibility_ms).await?;
        delivered
            .into_iter()
            .map(|delivered| {
                Ok(ReceivedTask {
                    ack_id: delivered.delivery.to_ack_id(),
                    task: codec::decode_task(&delivered.task)?,
                    attempt: delivered.attempt,
                })
            })
            .collect()
    }

    async fn acknowledge(&self, ack_ids: &[AckId]) -> Result<()> {
        let deliveries = ack_ids
            .iter()
            .map(Delivery::parse)
            .collect::<Result<Vec<_>>>()?;
        self.store.acknowledge(deliveries).await
    }

    async fn fail(&self, ack_id: &AckId, error: &str) -> Result<()> {
        let delivery = Delivery::parse(ack_id)?;
        let recorded = self.store.fail(delivery, error.to_string()).await?;
        if !recorded {
            tracing::debug!(ack_id = %ack_id.0, "ignored failure of a stale delivery");
        }
        Ok(())
    }

    async fn extend(&self, ack_id: &AckId, visibility: Duration) -> Result<()> {
        let delivery = Delivery::parse(ack_id)?;
        let visibility_ms = codec::duration_ms(visibility);
        let extended = self.store.extend(delivery, visibility_ms).await?;
        if extended {
            Ok(())
        } else {
            Err(codec::lost_delivery(ack_id))
        }
    }

    async fn defer(&self, ack_id: &AckId, delay: Duration) -> Result<()> {
        let delivery = Delivery::parse(ack_id)?;
        if !self
            .store
            .defer(delivery, codec::duration_ms(delay))
            .await?
        {
            tracing::debug!(ack_id = %ack_id.0, "ignored deferral of a stale delivery");
        }
        Ok(())
    }

    async fn acquire_slot(
        &self,
        group: &str,
        holder: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool> {
        Ok(self.slots.acquire(group, holder, limit, lease))
    }

    async fn release_slot(&self, group: &str, holder: &str) -> Result<()> {
        self.slots.release(group, holder);
        Ok(())
    }

    async fn reserve_turn(&self, key: &str, interval: Duration) -> Result<Duration> {
        Ok(self.slots.reserve_turn(key, interval))
    }

    async fn stats(&self) -> Result<QueueStats> {
        self.run(|store| store.stats()).await
    }

    async fn wait_for_work(&self, within: Duration) -> bool {
        // Enqueues of this process wake it; retries falling due do not, and
        // are found after `within`.
        let _woken = tokio::time::timeout(within, self.work_available.notified()).await;
        true
    }

    async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadTask>> {
        let dead = self.run(move |store| store.dead_letters(limit)).await?;
        dead.into_iter()
            .map(|entry| {
                Ok(DeadTask {
                    task: codec::decode_task(&entry.task)?,
                    attempts: entry.attempts,
                    last_error: entry.last_error,
                    dead_at: codec::timestamp_from_ms(entry.dead_at_ms),
                })
            })
            .collect()
    }

    async fn retry_dead(&self, limit: usize) -> Result<u64> {
        let moved = self.store.retry_dead(limit).await?;
        if moved > 0 {
            self.work_available.notify_waiters();
        }
        Ok(moved)
    }
}
