//! The `TaskQueue` contract, written once and instantiated for every backend
//! with [`conformance_tests!`]. Timings are short (visibility 200 ms, backoff
//! 100 ms) and every wait leaves a wide margin on both sides.

use std::any::Any;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use copyhound_core::ErrorKind;
use copyhound_core::config::QueueConfig;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::{AckId, ReceivedTask, TaskQueue};

/// Visibility used by the suite.
pub const VISIBILITY: Duration = Duration::from_millis(200);
/// Long enough that nothing times out during a test.
pub const LONG: Duration = Duration::from_secs(30);

/// A queue under test, a second handle onto it (another consumer) and
/// whatever must live as long as they do (temp dirs, key clean-up).
pub struct Harness {
    pub queue: Arc<dyn TaskQueue>,
    pub other: Arc<dyn TaskQueue>,
    pub _guard: Box<dyn Any + Send>,
}

/// Returns the configuration every backend is tested with.
pub fn test_config(prefix: &str) -> QueueConfig {
    QueueConfig {
        url: None,
        cluster: false,
        prefix: prefix.to_string(),
        visibility_timeout_ms: 200,
        max_attempts: 3,
        retry_backoff_ms: 100,
    }
}

/// Returns `count` distinct tasks.
pub fn tasks(count: usize) -> Vec<Task> {
    let now = chrono::Utc::now();
    (0..count)
        .map(|n| {
            Task::new(
                TaskKind::FingerprintWork {
                    work_id: format!("w{n}").parse().unwrap(),
                },
                now,
            )
        })
        .collect()
}

/// Lets real time pass. Every wait in the suite is time under test (a
/// visibility, a backoff, a lease), never a wait for another task to act:
/// the queue is only driven by the test itself.
async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

fn ids(received: &[ReceivedTask]) -> Vec<String> {
    received.iter().map(|r| r.task.id.to_string()).collect()
}

pub async fn enqueue_receive_ack(h: &Harness) {
    let sent = tasks(3);
    h.queue.enqueue(sent.clone()).await.unwrap();
    let received = h.queue.receive(10, LONG).await.unwrap();
    assert_eq!(
        received.iter().map(|r| r.task.clone()).collect::<Vec<_>>(),
        sent,
        "fifo, payload intact"
    );
    assert!(received.iter().all(|r| r.attempt == 1));
    assert_eq!(h.queue.stats().await.unwrap().in_flight, 3);
    let acks: Vec<AckId> = received.iter().map(|r| r.ack_id.clone()).collect();
    h.queue.acknowledge(&acks).await.unwrap();
    assert!(h.queue.receive(10, LONG).await.unwrap().is_empty());
    assert_eq!(h.queue.stats().await.unwrap(), Default::default());
}

pub async fn receive_from_empty_queue(h: &Harness) {
    assert!(h.queue.receive(10, LONG).await.unwrap().is_empty());
    assert!(h.queue.receive(0, LONG).await.unwrap().is_empty());
    h.queue.acknowledge(&[]).await.unwrap();
    h.queue.enqueue(Vec::new()).await.unwrap();
    h.queue.check_connectivity().await.unwrap();
    assert_eq!(h.queue.stats().await.unwrap(), Default::default());
    assert!(h.queue.dead_letters(10).await.unwrap().is_empty());
    assert_eq!(h.queue.retry_dead(10).await.unwrap(), 0);
}

pub async fn visibility_timeout_redelivers(h: &Harness) {
    h.queue.enqueue(tasks(1)).await.unwrap();
    let first = h.queue.receive(1, VISIBILITY).await.unwrap();
    assert_eq!(first.len(), 1);
    assert!(
        h.other.receive(1, VISIBILITY).await.unwrap().is_empty(),
        "hidden while visible"
    );
    sleep_ms(350).await; // past the visibility (200 ms)
    let second = h.other.receive(1, VISIBILITY).await.unwrap();
    assert_eq!(ids(&second), ids(&first));
    assert_eq!(second[0].attempt, 2);
    assert_ne!(second[0].ack_id, first[0].ack_id);
    let stale = h.queue.extend(&first[0].ack_id, LONG).await.unwrap_err();
    assert_eq!(
        stale.kind(),
        ErrorKind::NotFound,
        "a stale delivery cannot be extended"
    );
    h.queue
        .fail(&first[0].ack_id, "stale failure")
        .await
        .unwrap();
    assert_eq!(
        h.queue.stats().await.unwrap().retrying,
        0,
        "a stale failure is ignored"
    );
    h.other
        .acknowledge(&[second[0].ack_id.clone()])
        .await
        .unwrap();
    assert_eq!(h.queue.stats().await.unwrap(), Default::default());
}

pub async fn extend_prevents_redelivery(h: &Harness) {
    h.queue.enqueue(tasks(1)).await.unwrap();
    let received = h.queue.receive(1, VISIBILITY).await.unwrap();
    sleep_ms(120).await; // within the first visibility
    h.queue
        .extend(&received[0].ack_id, Duration::from_millis(500))
        .await
        .unwrap();
    sleep_ms(230).await; // 350 ms after delivery: past the first visibility
    assert!(
        h.other.receive(1, VISIBILITY).await.unwrap().is_empty(),
        "extended delivery stays hidden"
    );
    sleep_ms(400).await; // 750 ms: past the extension (620 ms)
    let again = h.other.receive(1, VISIBILITY).await.unwrap();
    assert_eq!(ids(&again), ids(&received));
    assert_eq!(again[0].attempt, 2);
}

pub async fn fail_retries_after_backoff(h: &Harness) {
    h.queue.enqueue(tasks(1)).await.unwrap();
    let first = h.queue.receive(1, LONG).await.unwrap();
    h.queue.fail(&first[0].ack_id, "boom 1").await.unwrap();
    let stats = h.queue.stats().await.unwrap();
    assert_eq!((stats.depth, stats.in_flight, stats.retrying), (1, 0, 1));
    assert!(
        h.queue.receive(1, LONG).await.unwrap().is_empty(),
        "waits for the backoff"
    );
    sleep_ms(200).await; // backoff after attempt 1: 100 ms
    let second = h.queue.receive(1, LONG).await.unwrap();
    assert_eq!(second[0].attempt, 2);
    h.queue.fail(&second[0].ack_id, "boom 2").await.unwrap();
    sleep_ms(80).await; // backoff after attempt 2: 200 ms
    assert!(
        h.queue.receive(1, LONG).await.unwrap().is_empty(),
        "backoff doubles"
    );
    sleep_ms(250).await; // 330 ms: past the doubled backoff
    let third = h.queue.receive(1, LONG).await.unwrap();
    assert_eq!(third[0].attempt, 3);
    assert_eq!(third[0].task, first[0].task);
}

pub async fn dead_letters_after_max_attempts(h: &Harness) {
    let sent = tasks(1);
    h.queue.enqueue(sent.clone()).await.unwrap();
    for attempt in 1..=3u32 {
        let received = receive_within(h.queue.as_ref(), 1, Duration::from_secs(2)).await;
        assert_eq!(received[0].attempt, attempt);
        h.queue
            .fail(&received[0].ack_id, &format!("error {attempt}"))
            .await
            .unwrap();
    }
    let dead = h.queue.dead_letters(10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].task, sent[0]);
    assert_eq!(
        (dead[0].attempts, dead[0].last_error.as_str()),
        (3, "error 3")
    );
    assert!(dead[0].dead_at <= chrono::Utc::now() + chrono::Duration::seconds(5));
    let stats = h.queue.stats().await.unwrap();
    assert_eq!(
        (stats.depth, stats.in_flight, stats.retrying, stats.dead),
        (0, 0, 0, 1)
    );
    sleep_ms(250).await; // past any backoff a live task would have
    assert!(
        h.queue.receive(1, LONG).await.unwrap().is_empty(),
        "dead tasks are not delivered"
    );

    assert_eq!(h.queue.retry_dead(10).await.unwrap(), 1);
    assert!(h.queue.dead_letters(10).await.unwrap().is_empty());
    let revived = h.queue.receive(1, LONG).await.unwrap();
    assert_eq!(revived[0].task, sent[0]);
    assert_eq!(revived[0].attempt, 1, "fresh attempt count");
    h.queue
        .acknowledge(&[revived[0].ack_id.clone()])
        .await
        .unwrap();
    assert_eq!(h.queue.stats().await.unwrap(), Default::default());
}

pub async fn timeouts_count_as_attempts(h: &Harness) {
    h.queue.enqueue(tasks(1)).await.unwrap();
    for attempt in 1..=3u32 {
        let received = receive_within(h.queue.as_ref(), 1, Duration::from_secs(2)).await;
        assert_eq!(received[0].attempt, attempt);
        let short = Duration::from_millis(50);
        h.queue.extend(&received[0].ack_id, short).await.unwrap();
        sleep_ms(120).await; // past the shortened visibility
    }
    assert!(
        h.queue.receive(1, LONG).await.unwrap().is_empty(),
        "no fourth delivery"
    );
    let dead = h.queue.dead_letters(10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].attempts, 3);
    assert!(
        dead[0].last_error.contains("visibility timeout"),
        "{}",
        dead[0].last_error
    );
}

pub async fn acknowledge_twice_is_fine(h: &Harness) {
    h.queue.enqueue(tasks(2)).await.unwrap();
    let received = h.queue.receive(2, LONG).await.unwrap();
    let acks: Vec<AckId> = received.iter().map(|r| r.ack_id.clone()).collect();
    h.queue.acknowledge(&acks).await.unwrap();
    h.queue.acknowledge(&acks).await.unwrap();
    h.other.acknowledge(&acks[..1]).await.unwrap();
    let gone = h.queue.extend(&acks[0], LONG).await.unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::NotFound);
    h.queue.fail(&acks[1], "after ack").await.unwrap();
    assert_eq!(h.queue.stats().await.unwrap(), Default::default());
    let garbage = h
        .queue
        .acknowledge(&[AckId("not-an-ack-id".into())])
        .await
        .unwrap_err();
    assert_eq!(garbage.kind(), ErrorKind::InvalidInput);
}

pub async fn stats_count_each_state(h: &Harness) {
    h.queue.enqueue(tasks(5)).await.unwrap();
    let received = h.queue.receive(2, LONG).await.unwrap();
    h.queue.fail(&received[0].ack_id, "later").await.unwrap();
    let stats = h.queue.stats().await.unwrap();
    assert_eq!(
        (stats.depth, stats.in_flight, stats.retrying, stats.dead),
        (4, 1, 1, 0)
    );
}

pub async fn consumers_never_share_a_delivery(h: &Harness) {
    let sent = tasks(40);
    h.queue.enqueue(sent.clone()).await.unwrap();
    let mut seen = HashSet::new();
    loop {
        let (a, b) = tokio::join!(h.queue.receive(7, LONG), h.other.receive(7, LONG));
        let (a, b) = (a.unwrap(), b.unwrap());
        if a.is_empty() && b.is_empty() {
            break;
        }
        for id in ids(&a).into_iter().chain(ids(&b)) {
            assert!(
                seen.insert(id.clone()),
                "task {id} delivered twice within its visibility"
            );
        }
    }
    assert_eq!(seen.len(), sent.len());
    assert_eq!(h.queue.stats().await.unwrap().in_flight, 40);
}

pub async fn defer_does_not_count_an_attempt(h: &Harness) {
    h.queue.enqueue(tasks(1)).await.unwrap();
    let first = h.queue.receive(1, LONG).await.unwrap();
    assert_eq!(first[0].attempt, 1);
    h.queue
        .defer(&first[0].ack_id, Duration::from_millis(150))
        .await
        .unwrap();
    let stats = h.queue.stats().await.unwrap();
    assert_eq!((stats.depth, stats.in_flight), (1, 0));
    assert!(
        h.other.receive(1, LONG).await.unwrap().is_empty(),
        "waits out the delay"
    );
    // Deferred as often as the attempts allow and more: never dead-lettered.
    let mut again = receive_within(h.other.as_ref(), 1, Duration::from_secs(2)).await;
    for _ in 0..4 {
        assert_eq!(again[0].attempt, 1, "a deferral is not an attempt");
        assert_eq!(again[0].task, first[0].task);
        h.other
            .defer(&again[0].ack_id, Duration::ZERO)
            .await
            .unwrap();
        again = receive_within(h.queue.as_ref(), 1, Duration::from_secs(2)).await;
    }
    assert_eq!(again[0].attempt, 1);
    // The handle of a deferred delivery no longer holds the task.
    h.queue
        .defer(&first[0].ack_id, Duration::ZERO)
        .await
        .unwrap();
    assert!(h.queue.receive(1, LONG).await.unwrap().is_empty());
    h.queue
        .extend(&again[0].ack_id, LONG)
        .await
        .expect("the live delivery still holds its task");
    h.queue
        .acknowledge(&[again[0].ack_id.clone()])
        .await
        .unwrap();
    assert_eq!(h.queue.stats().await.unwrap().dead, 0);
}

pub async fn turns_are_spaced_across_consumers(h: &Harness) {
    let key = format!("conformance-{}", uuid_like());
    let interval = Duration::from_secs(10);
    let mut waits = Vec::new();
    for consumer in [&h.queue, &h.other, &h.queue, &h.other] {
        waits.push(consumer.reserve_turn(&key, interval).await.unwrap());
    }
    assert!(
        waits[0] < Duration::from_secs(1),
        "a free key's turn is now: {waits:?}"
    );
    for pair in waits.windows(2) {
        let spacing = pair[1].saturating_sub(pair[0]);
        // The calls themselves take a little of the interval.
        assert!(
            spacing <= interval && spacing > interval - Duration::from_secs(2),
            "each turn is one interval after the one before, whoever took it: {waits:?}"
        );
    }
    let other_key = h
        .other
        .reserve_turn(&format!("{key}-other"), interval)
        .await
        .unwrap();
    assert!(other_key < Duration::from_secs(1), "keys are separate");
}

pub async fn slots_are_shared_up_to_their_limit(h: &Harness) {
    let group = format!("conformance-{}", uuid_like());
    let lease = Duration::from_secs(30);
    assert!(
        h.queue
            .acquire_slot(&group, "run-a", 2, lease)
            .await
            .unwrap()
    );
    assert!(
        h.other
            .acquire_slot(&group, "run-b", 2, lease)
            .await
            .unwrap()
    );
    assert!(
        !h.other
            .acquire_slot(&group, "run-c", 2, lease)
            .await
            .unwrap(),
        "two of two are held"
    );
    assert!(
        h.queue
            .acquire_slot(&group, "run-a", 2, lease)
            .await
            .unwrap(),
        "a holder renews its own slot"
    );
    assert!(
        h.other
            .acquire_slot("another-group", "run-c", 2, lease)
            .await
            .unwrap(),
        "groups are separate"
    );
    h.queue.release_slot(&group, "run-b").await.unwrap();
    h.queue.release_slot(&group, "never-held").await.unwrap();
    assert!(
        h.other
            .acquire_slot(&group, "run-c", 2, lease)
            .await
            .unwrap()
    );
    // A holder that dies frees its slot when its lease lapses.
    let short = format!("{group}-short");
    assert!(
        h.queue
            .acquire_slot(&short, "dies", 1, Duration::from_millis(100))
            .await
            .unwrap()
    );
    assert!(
        !h.other
            .acquire_slot(&short, "waits", 1, lease)
            .await
            .unwrap()
    );
    sleep_ms(250).await; // past the dead holder's lease (100 ms)
    assert!(
        h.other
            .acquire_slot(&short, "waits", 1, lease)
            .await
            .unwrap()
    );
    h.other
        .release_slot("another-group", "run-c")
        .await
        .unwrap();
}

fn uuid_like() -> String {
    format!(
        "{:x}",
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()
    )
}

/// Polls until `max` tasks or at most `within`.
pub async fn receive_within(
    queue: &dyn TaskQueue,
    max: usize,
    within: Duration,
) -> Vec<ReceivedTask> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let received = queue.receive(max, LONG).await.unwrap();
        if !received.is_empty() || tokio::time::Instant::now() >= deadline {
            return received;
        }
        sleep_ms(20).await; // a backoff is running out
    }
}

/// Instantiates every case for a harness constructor
/// (`async fn() -> Option<Harness>`; `None` skips).
macro_rules! conformance_tests {
    ($make:path) => {
        conformance_tests!(@cases $make,
            enqueue_receive_ack, receive_from_empty_queue, visibility_timeout_redelivers,
            extend_prevents_redelivery, fail_retries_after_backoff, dead_letters_after_max_attempts,
            timeouts_count_as_attempts, acknowledge_twice_is_fine, stats_count_each_state,
            consumers_never_share_a_delivery, defer_does_not_count_an_attempt,
            slots_are_shared_up_to_their_limit, turns_are_spaced_across_consumers);
    };
    (@cases $make:path, $($case:ident),+) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some(harness) = $make().await else { return };
                conformance::$case(&harness).await;
            }
        )+
    };
}
