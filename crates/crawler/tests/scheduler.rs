//! The scheduler: due-ness from stored runs, deterministic run ids, and no
//! double start when two schedulers tick the same slot.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

use std::sync::Arc;

use copyhound_core::model::{CrawlRun, CrawlRunStatus, TaskKind, Timestamp};
use copyhound_crawler::Scheduler;
use copyhound_crawler::scheduler::scheduled_run_id;
use copyhound_crawler::site::{SiteBuilder, SitePolicy};

const LOOPBACK: SitePolicy = SitePolicy::new(true);

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[tokio::test]
async fn due_sites_are_enqueued_once_per_slot_across_schedulers() {
    let dir = tempfile::tempdir().unwrap();
    let sites = copyhound_store::Stores::local(dir.path().join("store"))
        .unwrap()
        .sites;
    let queue = Arc::new(
        copyhound_queue::LocalTaskQueue::open(&dir.path().join("queue"), &Default::default())
            .await
            .unwrap(),
    );
    let hourly = SiteBuilder::new(
        "P01".parse().unwrap(),
        "hourly",
        vec!["http://127.0.0.1:1/".into()],
    )
    .policy(LOOPBACK)
    .schedule("0 * * * *")
    .created_at(at("2024-05-01T09:30:00Z"))
    .build()
    .unwrap();
    let manual = SiteBuilder::new(
        "P01".parse().unwrap(),
        "manual",
        vec!["http://127.0.0.1:2/".into()],
    )
    .policy(LOOPBACK)
    .created_at(at("2024-05-01T09:30:00Z"))
    .build()
    .unwrap();
    sites.put_site(&hourly).await.unwrap();
    sites.put_site(&manual).await.unwrap();
    let first = Scheduler::new(sites.clone(), queue.clone());
    let second = Scheduler::new(sites.clone(), queue.clone());

    assert!(
        first
            .tick(at("2024-05-01T09:59:00Z"))
            .await
            .unwrap()
            .is_empty(),
        "no slot since creation"
    );
    let runs = first.tick(at("2024-05-01T10:00:30Z")).await.unwrap();
    assert_eq!(
        runs,
        vec![scheduled_run_id(&hourly.id, at("2024-05-01T10:00:00Z"))]
    );
    assert!(
        second
            .tick(at("2024-05-01T10:01:00Z"))
            .await
            .unwrap()
            .is_empty(),
        "the other scheduler sees the run"
    );
    let restarted = Scheduler::new(sites.clone(), queue.clone());
    assert!(
        restarted
            .tick(at("2024-05-01T10:59:59Z"))
            .await
            .unwrap()
            .is_empty(),
        "restart-safe"
    );

    let run = sites.get_crawl_run(&runs[0]).await.unwrap();
    assert_eq!(
        (run.status, run.created_at),
        (CrawlRunStatus::Queued, at("2024-05-01T10:00:00Z"))
    );
    let tasks = queue.ready_tasks(usize::MAX).await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert!(matches!(&tasks[0].kind, TaskKind::CrawlSite { run_id, .. } if run_id == &runs[0]));

    assert!(
        second
            .tick(at("2024-05-01T11:00:00Z"))
            .await
            .unwrap()
            .is_empty(),
        "one run per site at a time: the 10:00 run is still queued"
    );
    let mut finished = run.clone();
    finished.status = CrawlRunStatus::Succeeded;
    sites.put_crawl_run(&finished).await.unwrap();
    let next = second.tick(at("2024-05-01T11:00:00Z")).await.unwrap();
    assert_eq!(
        next,
        vec![scheduled_run_id(&hourly.id, at("2024-05-01T11:00:00Z"))]
    );
    assert_eq!(
        first.next_due(at("2024-05-01T11:00:00Z")).await.unwrap(),
        Some(at("2024-05-01T12:00:00Z"))
    );
}

fn stored(run: &CrawlRun, status: CrawlRunStatus) -> CrawlRun {
    CrawlRun {
        status,
        ..run.clone()
    }
}

/// A site has one run at a time, and a schedule fires no faster than the
/// floor, even one stored before the floor existed.
#[tokio::test]
async fn one_run_at_a_time_and_never_faster_than_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let sites = copyhound_store::Stores::local(dir.path().join("store"))
        .unwrap()
        .sites;
    let queue = Arc::new(
        copyhound_queue::LocalTaskQueue::open(&dir.path().join("queue"), &Default::default())
            .await
            .unwrap(),
    );
    let mut site = SiteBuilder::new(
        "P01".parse().unwrap(),
        "every second",
        vec!["http://127.0.0.1:1/".into()],
    )
    .policy(LOOPBACK)
    .created_at(at("2024-05-01T09:30:00Z"))
    .build()
    .unwrap();
    // Stored as an older version accepted it.
    site.schedule = Some("* * * * * *".into());
    sites.put_site(&site).await.unwrap();
    let scheduler = Scheduler::new(sites.clone(), queue.clone()).with_policy(LOOPBACK);
    let first = scheduler.tick(at("2024-05-01T10:00:00Z")).await.unwrap();
    assert_eq!(first.len(), 1);
    let run = sites.get_crawl_run(&first[0]).await.unwrap();
    for (second, status) in [
        ("2024-05-01T10:00:01Z", CrawlRunStatus::Queued),
        ("2024-05-01T10:00:30Z", CrawlRunStatus::Running),
        ("2024-05-01T10:02:00Z", CrawlRunStatus::Succeeded),
        ("2024-05-01T10:04:59Z", CrawlRunStatus::Failed),
    ] {
        sites.put_crawl_run(&stored(&run, status)).await.unwrap();
        assert!(
            scheduler.tick(at(second)).await.unwrap().is_empty(),
            "{second} ({status:?}): queued or running, or within the 5 min floor"
        );
    }
    let after_floor = scheduler.tick(at("2024-05-01T10:05:00Z")).await.unwrap();
    assert_eq!(after_floor.len(), 1, "five minutes on, the next slot runs");
    // A run left queued by a task the queue gave up stops blocking after the
    // run budget and an hour.
    let stuck = sites.get_crawl_run(&after_floor[0]).await.unwrap();
    assert_eq!(stuck.status, CrawlRunStatus::Queued);
    assert!(
        scheduler
            .tick(at("2024-05-01T16:00:00Z"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        scheduler
            .tick(at("2024-05-01T17:06:00Z"))
            .await
            .unwrap()
            .len(),
        1
    );
    let tasks = queue.ready_tasks(usize::MAX).await.unwrap();
    assert_eq!(tasks.len(), 3, "three runs in seven hours, not 25,000");
}

#[test]
fn a_schedule_faster_than_the_floor_is_refused_however_spelled() {
    for cron in [
        "* * * * * *",
        "*/1 * * * *",
        "0-59/2 * * * *",
        "0,1 * * * *",
    ] {
        let error = SiteBuilder::new(
            "P01".parse().unwrap(),
            "fast",
            vec!["http://127.0.0.1:1/".into()],
        )
        .policy(LOOPBACK)
        .schedule(cron)
        .build()
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("shortest interval allowed is 5 min"),
            "{cron}: {error}"
        );
    }
}
