//! The conformance suite on a real Redis Cluster
//! (`COPYHOUND_TEST_REDIS_CLUSTER_URL`, one node of it): every key of a queue
//! shares one hash tag, so each script and transaction stays in one slot.
#![cfg(feature = "redis")]
// Tests may unwrap; clippy only knows that for `#[test]` fns, not the suite helpers.
#![allow(clippy::unwrap_used)]

#[macro_use]
mod conformance;
#[allow(dead_code)] // shared with tests/redis.rs; this file uses a part
mod redis_support;

use std::sync::Arc;

use copyhound_core::config::QueueConfig;
use copyhound_core::ports::TaskQueue;
use copyhound_core::test_services;
use copyhound_queue::RedisTaskQueue;

use conformance::{Harness, LONG, tasks, test_config};
use redis_support::{KeyCleanup, unique_prefix};

fn cluster_url(test: &str) -> Option<String> {
    test_services::service_url(test_services::REDIS_CLUSTER_URL, test)
}

async fn cluster_queue(url: &str, config: &QueueConfig) -> (RedisTaskQueue, KeyCleanup) {
    let queue = RedisTaskQueue::connect(url, config).await.unwrap();
    let cleanup = KeyCleanup {
        url: url.to_owned(),
        keys: queue.keys(),
        cluster: true,
    };
    (queue, cleanup)
}

async fn cluster_harness() -> Option<Harness> {
    let url = cluster_url("redis cluster conformance test")?;
    let config = QueueConfig {
        cluster: true,
        ..test_config(&unique_prefix())
    };
    let (queue, cleanup) = cluster_queue(&url, &config).await;
    let other = RedisTaskQueue::connect(&url, &config).await.unwrap();
    Some(Harness {
        queue: Arc::new(queue),
        other: Arc::new(other),
        _guard: Box::new(cleanup),
    })
}

conformance_tests!(cluster_harness);

#[tokio::test]
async fn a_cluster_node_is_detected_and_the_keys_share_one_slot() {
    let Some(url) = cluster_url("a_cluster_node_is_detected_and_the_keys_share_one_slot") else {
        return;
    };
    // `cluster` left off: the server says it is a cluster node.
    let config = test_config(&unique_prefix());
    let (queue, _cleanup) = cluster_queue(&url, &config).await;
    let keys = queue.keys();
    assert!(keys.iter().all(|key| key.starts_with('{')), "{keys:?}");
    let mut connection = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let slots: Vec<u16> = keys
        .iter()
        .map(|key| {
            redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(key)
                .query(&mut connection)
                .unwrap()
        })
        .collect();
    assert!(slots.windows(2).all(|pair| pair[0] == pair[1]), "{slots:?}");

    let sent = tasks(3);
    queue.enqueue(sent.clone()).await.unwrap();
    let received = queue.receive(10, LONG).await.unwrap();
    assert_eq!(received.len(), 3);
    queue
        .acknowledge(
            &received
                .iter()
                .map(|r| r.ack_id.clone())
                .collect::<Vec<_>>(),
        )
        .await
        .unwrap();
    assert_eq!(queue.stats().await.unwrap().depth, 0);
}
