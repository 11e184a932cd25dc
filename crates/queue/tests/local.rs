//! The conformance suite on the embedded queue, plus what only it promises:
//! a reopened file resumes pending and in-flight work.
// Tests may unwrap; clippy only knows that for `#[test]` fns, not the suite helpers.
#![allow(clippy::unwrap_used)]

#[macro_use]
mod conformance;

use std::sync::Arc;
use std::time::Duration;

use copyhound_core::ports::TaskQueue;
use copyhound_queue::LocalTaskQueue;

use conformance::{Harness, LONG, tasks, test_config};

async fn local_harness() -> Option<Harness> {
    let dir = tempfile::tempdir().unwrap();
    let queue = Arc::new(
        LocalTaskQueue::open(dir.path(), &test_config(""))
            .await
            .unwrap(),
    );
    // One process owns the file: the second consumer is another handle on it.
    let other: Arc<dyn TaskQueue> = queue.clone();
    Some(Harness {
        queue,
        other,
        _guard: Box::new(dir),
    })
}

conformance_tests!(local_harness);

#[tokio::test]
async fn reopen_resumes_pending_and_in_flight_work() {
    let dir = tempfile::tempdir().unwrap();
    let config = test_config("");
    let sent = tasks(3);
    {
        let queue = LocalTaskQueue::open(dir.path(), &config).await.unwrap();
        queue.enqueue(sent.clone()).await.unwrap();
        let held = queue.receive(1, LONG).await.unwrap();
        assert_eq!(held[0].task, sent[0]);
        let failed = queue.receive(1, LONG).await.unwrap();
        queue
            .fail(&failed[0].ack_id, "before the crash")
            .await
            .unwrap();
    } // the process "dies" holding sent[0] and with sent[1] scheduled for retry
    let queue = LocalTaskQueue::open(dir.path(), &config).await.unwrap();
    let stats = queue.stats().await.unwrap();
    assert_eq!((stats.depth, stats.in_flight, stats.retrying), (2, 1, 1));
    let mut received = queue.receive(10, LONG).await.unwrap();
    // The retry's backoff (100 ms) is real time: wait it out.
    tokio::time::sleep(Duration::from_millis(150)).await;
    received.extend(queue.receive(10, LONG).await.unwrap());
    let by_task: Vec<(String, u32)> = received
        .iter()
        .map(|r| (r.task.id.to_string(), r.attempt))
        .collect();
    assert_eq!(
        by_task,
        vec![
            (sent[0].id.to_string(), 2),
            (sent[2].id.to_string(), 1),
            (sent[1].id.to_string(), 2)
        ],
        "the held task comes back at once, the pending one next, the retry after its backoff"
    );
}

/// Acknowledgements commit lazily; closing the queue makes them durable.
#[tokio::test]
async fn acknowledgements_survive_a_clean_stop() {
    let dir = tempfile::tempdir().unwrap();
    let config = test_config("");
    let sent = tasks(2);
    {
        let queue = LocalTaskQueue::open(dir.path(), &config).await.unwrap();
        queue.enqueue(sent.clone()).await.unwrap();
        let received = queue.receive(2, LONG).await.unwrap();
        queue
            .acknowledge(std::slice::from_ref(&received[0].ack_id))
            .await
            .unwrap();
    }
    let queue = LocalTaskQueue::open(dir.path(), &config).await.unwrap();
    // Only the unacknowledged delivery is left, due again at once.
    let stats = queue.stats().await.unwrap();
    assert_eq!((stats.depth, stats.in_flight), (0, 1));
    let again = queue.receive(10, LONG).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!((&again[0].task, again[0].attempt), (&sent[1], 2));
}

#[tokio::test]
async fn a_second_instance_on_the_same_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = LocalTaskQueue::open(dir.path(), &test_config(""))
        .await
        .unwrap();
    let second = LocalTaskQueue::open(dir.path(), &test_config(""))
        .await
        .unwrap_err();
    assert!(second.is_retryable(), "{second}");
}

/// Runs the wait `wait` makes on a clone of `queue` while one task is
/// enqueued 50 ms in; returns what it returned and how long it took.
async fn waited_through_an_enqueue<T, F>(
    queue: &LocalTaskQueue,
    wait: impl FnOnce(LocalTaskQueue) -> F,
) -> (T, Duration)
where
    T: Send + 'static,
    F: std::future::Future<Output = T> + Send + 'static,
{
    let waiting = wait(queue.clone());
    let waiter = tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        let out = waiting.await;
        (out, started.elapsed())
    });
    // The wake-up's latency is what is measured: the enqueue comes 50 ms in.
    tokio::time::sleep(Duration::from_millis(50)).await;
    queue.enqueue(tasks(1)).await.unwrap();
    waiter.await.unwrap()
}

#[tokio::test]
async fn receive_wait_wakes_on_enqueue() {
    let dir = tempfile::tempdir().unwrap();
    let queue = LocalTaskQueue::open(dir.path(), &test_config(""))
        .await
        .unwrap();
    let (count, waited) = waited_through_an_enqueue(&queue, |queue| async move {
        let received = queue
            .receive_wait(1, LONG, Duration::from_secs(10))
            .await
            .unwrap();
        received.len()
    })
    .await;
    assert_eq!(count, 1);
    assert!(
        waited < Duration::from_secs(2),
        "woken by the enqueue, not the timeout: {waited:?}"
    );
    let empty = queue
        .receive_wait(1, LONG, Duration::from_millis(50))
        .await
        .unwrap();
    assert!(empty.is_empty());
}

#[tokio::test]
async fn waiting_for_work_ends_with_an_enqueue() {
    let dir = tempfile::tempdir().unwrap();
    let queue = LocalTaskQueue::open(dir.path(), &test_config("wait"))
        .await
        .unwrap();
    let (signalled, waited) = waited_through_an_enqueue(&queue, |queue| async move {
        queue.wait_for_work(Duration::from_secs(20)).await
    })
    .await;
    assert!(signalled, "the embedded queue can tell");
    assert!(
        waited < Duration::from_secs(10),
        "woken by the enqueue, not the timeout: {waited:?}"
    );
    // An enqueue while nobody waits leaves a permit: the next wait ends at once.
    queue.enqueue(tasks(1)).await.unwrap();
    let started = tokio::time::Instant::now();
    assert!(queue.wait_for_work(Duration::from_secs(20)).await);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn ready_tasks_shows_what_waits_without_delivering_it() {
    let dir = tempfile::tempdir().unwrap();
    let queue = LocalTaskQueue::open(dir.path(), &test_config("ready"))
        .await
        .unwrap();
    let enqueued = tasks(3);
    queue.enqueue(enqueued.clone()).await.unwrap();
    let ready = queue.ready_tasks(10).await.unwrap();
    assert_eq!(ready, enqueued, "oldest first");
    assert_eq!(queue.ready_tasks(2).await.unwrap().len(), 2);
    assert_eq!(
        queue.stats().await.unwrap().in_flight,
        0,
        "nothing delivered"
    );
    let delivered = queue.receive(1, LONG).await.unwrap();
    assert_eq!(delivered[0].task, enqueued[0]);
    assert_eq!(queue.ready_tasks(10).await.unwrap(), enqueued[1..]);
}
