//! The task queue that links the pipeline stages: Redis Streams in production, an
//! embedded persistent queue (redb) by default. At-least-once delivery with a
//! visibility timeout; handlers are idempotent, so re-delivery never duplicates
//! work. A worker that dies loses nothing: its deliveries time out and go to
//! someone else. Failures back off exponentially and end in a dead-letter list
//! an operator can inspect and re-queue.
//!
//! Not here: scheduling (the crawler's), priorities, exactly-once delivery.
//! Callers hold an `Arc<dyn TaskQueue>`; only the runtime (which resolves the
//! configuration) and tests name the concrete types. See `design.md` for keys and the lifecycle.
#![warn(missing_docs)]

mod codec;
mod local;
#[cfg(feature = "redis")]
mod redis;

pub use codec::{MAX_RETRY_DELAY, retry_delay};
pub use local::LocalTaskQueue;
#[cfg(feature = "redis")]
pub use redis::RedisTaskQueue;
