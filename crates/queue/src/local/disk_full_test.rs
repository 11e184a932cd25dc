//! The embedded queue on a disk that fills: enqueues answer `Unavailable`
//! naming the disk, `check_connectivity` (so `/health`) reports it, and both
//! recover once space returns, without reopening the queue.

use std::time::{Duration, Instant};

use copyhound_core::ErrorKind;
use copyhound_core::config::QueueConfig;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::TaskQueue;
use copyhound_redb::DbHealth;
use copyhound_redb::fault::FillableDisk;

use super::LocalTaskQueue;

fn task(work: &str) -> Task {
    let kind = TaskKind::FingerprintWork {
        work_id: work.parse().unwrap(),
    };
    Task::new(kind, chrono::Utc::now())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_reported_and_the_queue_resumes_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let disk = FillableDisk::new();
    let file = dir.path().join("queue.redb");
    let queue = LocalTaskQueue::open_on(&file, disk.opener(&file), &QueueConfig::default())
        .await
        .unwrap();
    queue.enqueue(vec![task("w1")]).await.unwrap();

    disk.set_full(true);
    let expected = format!("the disk under {} is full or failing", file.display());
    let error = queue.enqueue(vec![task("w2")]).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.message().starts_with(&expected), "{error}");
    let error = queue.check_connectivity().await.unwrap_err();
    assert!(error.message().starts_with(&expected), "{error}");
    assert!(matches!(queue.health(), DbHealth::Degraded(_)));

    disk.set_full(false);
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Err(error) = queue.enqueue(vec![task("w2")]).await {
        assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
        assert!(
            Instant::now() < deadline,
            "enqueues did not resume: {error}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(queue.health(), DbHealth::Ok);
    queue.check_connectivity().await.unwrap();
    let received = queue.receive(10, Duration::from_secs(60)).await.unwrap();
    let works: Vec<_> = received.iter().map(|r| r.task.id.clone()).collect();
    assert_eq!(works, vec![task("w1").id, task("w2").id]);
}
