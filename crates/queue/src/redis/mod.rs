//! The production queue on Redis Streams. A consumer group gives each entry to
//! one worker and remembers it in the pending list until acknowledged;
//! `XAUTOCLAIM` hands entries whose delivery timed out to the next `receive`, so
//! a crashed worker's tasks come back without any sweeper process. Failed tasks
//! wait in a sorted set by retry time and re-enter the stream when due.
//!
//! Every Redis error is translated, once, into a retryable
//! [`ErrorKind::Unavailable`]; the connection reconnects by itself after a
//! restart or a failover, so the next call after an outage simply succeeds.
//! On a Redis Cluster every key of the queue carries one hash tag, so each
//! script and transaction stays in one slot.

mod scripts;

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use redis::streams::StreamRangeReply;

use copyhound_redis::{Connection, redis_error, slot_prefix};

use copyhound_core::config::QueueConfig;
use copyhound_core::model::Task;
use copyhound_core::ports::{AckId, DeadTask, QueueStats, ReceivedTask, TaskQueue};
use copyhound_core::{Error, ErrorKind, Result};

use crate::codec::{self, Delivery};
use scripts::{CONSUMER, GROUP, HORIZON_MS, Keys, PROMOTE_LIMIT};

/// A task queue on Redis Streams with a consumer group; see `design.md`.
#[derive(Clone)]
pub struct RedisTaskQueue {
    connection: Connection,
    keys: Keys,
    max_attempts: u32,
    retry_schedule_ms: Vec<u64>,
}

impl fmt::Debug for RedisTaskQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskQueue")
            .field("stream", &self.keys.stream)
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl RedisTaskQueue {
    /// Connects to `url` (`redis://` or `rediss://`; a cluster node when
    /// `config.cluster` is set or the server runs in cluster mode) and creates
    /// the consumer group if needed. Keys live under `config.prefix`, wrapped
    /// in a hash tag on a cluster.
    pub async fn connect(url: &str, config: &QueueConfig) -> Result<Self> {
        let connection = Connection::open(url, config.cluster, "queue").await?;
        let prefix = if connection.is_cluster() {
            slot_prefix(&config.prefix)
        } else {
            config.prefix.clone()
        };
        let max_attempts = config.max_attempts.max(1);
        let queue = Self {
            connection,
            keys: Keys::new(&prefix),
            max_attempts,
            retry_schedule_ms: codec::retry_schedule_ms(
                Duration::from_millis(config.retry_backoff_ms),
                max_attempts,
            ),
        };
        queue.check_connectivity().await?;
        Ok(queue)
    }

    /// Returns the Redis keys this queue uses (for operators and test clean-up).
    pub fn keys(&self) -> Vec<String> {
        self.keys.all().iter().map(|key| key.to_string()).collect()
    }

    fn connection(&self) -> Connection {
        self.connection.clone()
    }
}

#[async_trait]
impl TaskQueue for RedisTaskQueue {
    async fn check_connectivity(&self) -> Result<()> {
        redis::cmd("PING")
            .query_async::<String>(&mut self.connection())
            .await
            .map_err(redis_error("queue redis does not answer"))?;
        Ok(())
    }

    async fn enqueue(&self, tasks: Vec<Task>) -> Result<()> {
        let mut seen = HashSet::new();
        let mut pipeline = redis::pipe();
        pipeline.atomic();
        for task in tasks.iter().filter(|task| seen.insert(task.id.clone())) {
            let stored = codec::encode_task(task)?;
            pipeline.cmd("XADD").arg(&self.keys.stream).arg("*");
            pipeline
                .arg("task")
                .arg(stored)
                .arg("prior")
                .arg(0)
                .arg("error")
                .arg("")
                .ignore();
        }
        if seen.is_empty() {
            return Ok(());
        }
        pipeline
            .query_async::<()>(&mut self.connection())
            .await
            .map_err(redis_error("failed to enqueue tasks"))
    }

    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<ReceivedTask>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let visibility_ms = codec::duration_ms(visibility).min(HORIZON_MS);
        let delivered: Vec<(String, String, u32, u64)> = scripts::RECEIVE_SCRIPT
            .key(&self.keys.stream)
            .key(&self.keys.retry)
            .key(&self.keys.dead)
            .key(&self.keys.claim_cursor)
            .arg(GROUP)
            .arg(CONSUMER)
            .arg(max)
            .arg(visibility_ms)
            .arg(HORIZON_MS)
            .arg(self.max_attempts)
            .arg(PROMOTE_LIMIT)
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to receive tasks"))?;
        delivered
            .into_iter()
            .map(|(entry, stored, attempt, delivery)| {
                Ok(ReceivedTask {
                    ack_id: Delivery { entry, delivery }.to_ack_id(),
                    task: codec::decode_task(&stored)?,
                    attempt,
                })
            })
            .collect()
    }

    async fn acknowledge(&self, ack_ids: &[AckId]) -> Result<()> {
        let deliveries = ack_ids
            .iter()
            .map(Delivery::parse)
            .collect::<Result<Vec<_>>>()?;
        if deliveries.is_empty() {
            return Ok(());
        }
        let entries: Vec<&str> = deliveries
            .iter()
            .map(|delivery| delivery.entry.as_str())
            .collect();
        let mut pipeline = redis::pipe();
        pipeline.atomic();
        pipeline
            .cmd("XACK")
            .arg(&self.keys.stream)
            .arg(GROUP)
            .arg(&entries)
            .ignore();
        pipeline
            .cmd("XDEL")
            .arg(&self.keys.stream)
            .arg(&entries)
            .ignore();
        pipeline
            .query_async::<()>(&mut self.connection())
            .await
            .map_err(redis_error("failed to acknowledge tasks"))
    }

    async fn fail(&self, ack_id: &AckId, error: &str) -> Result<()> {
        let delivery = Delivery::parse(ack_id)?;
        let outcome: u8 = scripts::FAIL_SCRIPT
            .key(&self.keys.stream)
            .key(&self.keys.retry)
            .key(&self.keys.dead)
            .arg(GROUP)
            .arg(&delivery.entry)
            .arg(delivery.delivery)
            .arg(error)
            .arg(self.max_attempts)
            .arg(&self.retry_schedule_ms)
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to record a task failure"))?;
        match outcome {
            0 => tracing::debug!(ack_id = %ack_id.0, "ignored failure of a stale delivery"),
            2 => tracing::warn!(ack_id = %ack_id.0, error, "task dead-lettered"),
            _ => {}
        }
        Ok(())
    }

    async fn extend(&self, ack_id: &AckId, visibility: Duration) -> Result<()> {
        let delivery = Delivery::parse(ack_id)?;
        let idle_ms = HORIZON_MS - codec::duration_ms(visibility).min(HORIZON_MS);
        let extended: u8 = scripts::EXTEND_SCRIPT
            .key(&self.keys.stream)
            .arg(GROUP)
            .arg(CONSUMER)
            .arg(&delivery.entry)
            .arg(delivery.delivery)
            .arg(idle_ms)
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to extend a delivery"))?;
        if extended == 1 {
            Ok(())
        } else {
            Err(codec::lost_delivery(ack_id))
        }
    }

    async fn defer(&self, ack_id: &AckId, delay: Duration) -> Result<()> {
        let delivery = Delivery::parse(ack_id)?;
        let deferred: u8 = scripts::DEFER_SCRIPT
            .key(&self.keys.stream)
            .key(&self.keys.retry)
            .arg(GROUP)
            .arg(&delivery.entry)
            .arg(delivery.delivery)
            .arg(codec::duration_ms(delay))
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to defer a task"))?;
        if deferred == 0 {
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
        let taken: u8 = scripts::ACQUIRE_SLOT_SCRIPT
            .key(format!("{}{group}", self.keys.slots))
            .arg(holder)
            .arg(limit)
            .arg(codec::duration_ms(lease).max(1))
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to take a slot"))?;
        Ok(taken == 1)
    }

    async fn release_slot(&self, group: &str, holder: &str) -> Result<()> {
        redis::cmd("ZREM")
            .arg(format!("{}{group}", self.keys.slots))
            .arg(holder)
            .query_async::<()>(&mut self.connection())
            .await
            .map_err(redis_error("failed to release a slot"))
    }

    async fn reserve_turn(&self, key: &str, interval: Duration) -> Result<Duration> {
        let wait_ms: u64 = scripts::RESERVE_TURN_SCRIPT
            .key(format!("{}{key}", self.keys.turns))
            .arg(codec::duration_ms(interval).max(1))
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to reserve a turn"))?;
        Ok(Duration::from_millis(wait_ms))
    }

    async fn stats(&self) -> Result<QueueStats> {
        let (stream_len, pending, retrying, dead): (u64, u64, u64, u64) = scripts::STATS_SCRIPT
            .key(&self.keys.stream)
            .key(&self.keys.retry)
            .key(&self.keys.dead)
            .arg(GROUP)
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to read queue stats"))?;
        let waiting = stream_len.saturating_sub(pending);
        Ok(QueueStats {
            depth: waiting + retrying,
            in_flight: pending,
            retrying,
            dead,
        })
    }

    async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadTask>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let reply: StreamRangeReply = redis::cmd("XRANGE")
            .arg(&self.keys.dead)
            .arg("-")
            .arg("+")
            .arg("COUNT")
            .arg(limit)
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to list dead letters"))?;
        reply.ids.iter().map(decode_dead_letter).collect()
    }

    async fn retry_dead(&self, limit: usize) -> Result<u64> {
        if limit == 0 {
            return Ok(0);
        }
        scripts::RETRY_DEAD_SCRIPT
            .key(&self.keys.stream)
            .key(&self.keys.dead)
            .arg(limit)
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to re-queue dead letters"))
    }
}

fn decode_dead_letter(entry: &redis::streams::StreamId) -> Result<DeadTask> {
    let corrupt = |field: &str| {
        Error::new(
            ErrorKind::Corrupt,
            format!("dead letter {} has no valid `{field}`", entry.id),
        )
    };
    let stored: String = entry.get("task").ok_or_else(|| corrupt("task"))?;
    let attempts: u32 = entry.get("attempts").ok_or_else(|| corrupt("attempts"))?;
    let last_error: String = entry.get("error").unwrap_or_default();
    let dead_at_ms: u64 = entry.get("dead_at").ok_or_else(|| corrupt("dead_at"))?;
    Ok(DeadTask {
        task: codec::decode_task(&stored)?,
        attempts,
        last_error,
        dead_at: codec::timestamp_from_ms(dead_at_ms),
    })
}
