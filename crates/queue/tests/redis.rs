//! The conformance suite on Redis Streams (`COPYHOUND_TEST_REDIS_URL`); each
//! test has its own key prefix and deletes its keys.
#![cfg(feature = "redis")]
// Tests may unwrap; clippy only knows that for `#[test]` fns, not the suite helpers.
#![allow(clippy::unwrap_used)]

#[macro_use]
mod conformance;
mod redis_support;

use std::sync::Arc;
use std::time::Duration;

use copyhound_core::ports::TaskQueue;
use copyhound_queue::RedisTaskQueue;

use conformance::{Harness, LONG, tasks, test_config};
use redis_support::{
    KeyCleanup, RedisServer, free_port, redis_server_available, redis_url, unique_prefix,
};

async fn redis_harness() -> Option<Harness> {
    let url = redis_url("redis conformance test")?;
    let config = test_config(&unique_prefix());
    let queue = RedisTaskQueue::connect(&url, &config).await.unwrap();
    let other = RedisTaskQueue::connect(&url, &config).await.unwrap();
    let cleanup = KeyCleanup {
        url,
        keys: queue.keys(),
        cluster: false,
    };
    Some(Harness {
        queue: Arc::new(queue),
        other: Arc::new(other),
        _guard: Box::new(cleanup),
    })
}

conformance_tests!(redis_harness);

#[tokio::test]
async fn duplicate_tasks_in_one_batch_are_enqueued_once() {
    let Some(harness) = redis_harness().await else {
        return;
    };
    let task = tasks(1).remove(0);
    harness
        .queue
        .enqueue(vec![task.clone(), task])
        .await
        .unwrap();
    assert_eq!(harness.queue.stats().await.unwrap().depth, 1);
}

#[tokio::test]
async fn an_unreachable_redis_is_unavailable() {
    let config = test_config(&unique_prefix());
    let error = RedisTaskQueue::connect("redis://127.0.0.1:1", &config)
        .await
        .unwrap_err();
    assert!(error.is_retryable(), "{error}");
    let bad = RedisTaskQueue::connect("http://nope", &config)
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), copyhound_core::ErrorKind::Config);
}

/// Fault test: the queue's own Redis is killed and restarted mid-run. With an
/// append-only file the data survives, so what is tested is that the same
/// `RedisTaskQueue` reconnects by itself, reports the outage as retryable, and
/// delivers the task enqueued before the crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_reconnects_after_a_redis_restart() {
    if !redis_server_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let server = RedisServer::start(port, dir.path());
    let queue = RedisTaskQueue::connect(&url, &test_config("copyhound:restart:"))
        .await
        .unwrap();
    let sent = tasks(2);
    queue.enqueue(vec![sent[0].clone()]).await.unwrap();

    server.kill();
    let down = queue.enqueue(vec![sent[1].clone()]).await.unwrap_err();
    assert!(down.is_retryable(), "an outage is retryable: {down}");

    let _server = RedisServer::start(port, dir.path());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let received = loop {
        match queue.receive(10, LONG).await {
            Ok(received) if !received.is_empty() => break received,
            Ok(_) => panic!("the task enqueued before the restart was lost"),
            Err(error) => {
                assert!(error.is_retryable(), "{error}");
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "no reconnection: {error}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].task, sent[0]);
    queue
        .acknowledge(&[received[0].ack_id.clone()])
        .await
        .unwrap();
    queue.enqueue(vec![sent[1].clone()]).await.unwrap();
    assert_eq!(queue.receive(10, LONG).await.unwrap()[0].task, sent[1]);
}
