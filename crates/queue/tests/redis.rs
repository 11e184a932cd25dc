//! The conformance suite on Redis Streams (`COPYHOUND_TEST_REDIS_URL`); each
//! test has its own key prefix and deletes its keys.
#![cfg(feature = "redis")]

#[macro_use]
mod conformance;
mod redis_support;

use std::sync::Arc;

use copyhound_core::config::Config;
use copyhound_queue::{RedisTaskQueue, open_queue};

use conformance::{Harness, LONG, tasks, test_config};
use redis_support::{KeyCleanup, redis_url, unique_prefix};

async fn redis_harness() -> Option<Harness> {
    let url = redis_url("redis conformance test")?;
    let config = test_config(&unique_prefix());
    let queue = RedisTaskQueue::connect(&url, &config).await.unwrap();
    let other = RedisTaskQueue::connect(&url, &config).await.unwrap();
    let cleanup = KeyCleanup { url, keys: queue.keys() };
    Some(Harness { queue: Arc::new(queue), other: Arc::new(other), _guard: Box::new(cleanup) })
}

conformance_tests!(redis_harness);

#[tokio::test]
async fn open_queue_picks_redis_for_a_redis_url() {
    let Some(url) = redis_url("open_queue_picks_redis_for_a_redis_url") else { return };
    let mut config = Config::default();
    config.queue = test_config(&unique_prefix());
    config.queue.url = Some(url.clone());
    let queue = open_queue(&config).await.unwrap();
    let _cleanup = KeyCleanup { url, keys: RedisTaskQueue::connect(config.queue.url.as_deref().unwrap(), &config.queue).await.unwrap().keys() };
    assert!(format!("{queue:?}").contains("RedisTaskQueue"));
    queue.enqueue(tasks(1)).await.unwrap();
    assert_eq!(queue.receive(5, LONG).await.unwrap().len(), 1);
}

#[tokio::test]
async fn duplicate_tasks_in_one_batch_are_enqueued_once() {
    let Some(harness) = redis_harness().await else { return };
    let task = tasks(1).remove(0);
    harness.queue.enqueue(vec![task.clone(), task]).await.unwrap();
    assert_eq!(harness.queue.stats().await.unwrap().depth, 1);
}

#[tokio::test]
async fn an_unreachable_redis_is_unavailable() {
    let config = test_config(&unique_prefix());
    let error = RedisTaskQueue::connect("redis://127.0.0.1:1", &config).await.unwrap_err();
    assert!(error.is_retryable(), "{error}");
    let bad = RedisTaskQueue::connect("http://nope", &config).await.unwrap_err();
    assert_eq!(bad.kind(), copyhound_core::ErrorKind::Config);
}
