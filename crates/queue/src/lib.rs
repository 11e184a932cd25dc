//! The task queue that links the pipeline stages: Redis Streams in production, an
//! embedded persistent queue (redb) by default. At-least-once delivery with a
//! visibility timeout; handlers are idempotent, so re-delivery never duplicates
//! work. A worker that dies loses nothing: its deliveries time out and go to
//! someone else. Failures back off exponentially and end in a dead-letter list
//! an operator can inspect and re-queue.
//!
//! Not here: scheduling (the crawler's), priorities, exactly-once delivery.
//! Callers hold an `Arc<dyn TaskQueue>` from [`open_queue`]; only the CLI and
//! tests name the concrete types. See `design.md` for keys and the lifecycle.
#![warn(missing_docs)]

mod codec;
mod local;
#[cfg(feature = "redis")]
mod redis;

use std::sync::Arc;

use copyhound_core::Result;
use copyhound_core::config::{Backend, Config};
use copyhound_core::ports::TaskQueue;

pub use codec::{MAX_RETRY_DELAY, retry_delay};
pub use local::LocalTaskQueue;
#[cfg(feature = "redis")]
pub use redis::RedisTaskQueue;

/// Returns the queue the configuration names: the embedded queue under the data
/// directory, or Redis Streams at `queue.url`.
pub async fn open_queue(config: &Config) -> Result<Arc<dyn TaskQueue>> {
    match config.queue_backend() {
        Backend::Embedded(dir) => Ok(Arc::new(LocalTaskQueue::open(&dir, &config.queue).await?)),
        Backend::Remote(url) => open_remote(&url, config).await,
    }
}

#[cfg(feature = "redis")]
async fn open_remote(url: &str, config: &Config) -> Result<Arc<dyn TaskQueue>> {
    Ok(Arc::new(RedisTaskQueue::connect(url, &config.queue).await?))
}

#[cfg(not(feature = "redis"))]
async fn open_remote(url: &str, _config: &Config) -> Result<Arc<dyn TaskQueue>> {
    use copyhound_core::{Error, ErrorKind};
    Err(Error::new(
        ErrorKind::Config,
        format!(
            "queue.url = {:?} needs the `redis` feature of copyhound-queue, which this build lacks",
            copyhound_core::config::mask_url(url)
        ),
    ))
}
