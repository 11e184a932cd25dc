//! The scheduler: due-ness from stored runs, deterministic run ids, and no
//! double start when two schedulers tick the same slot.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

use std::sync::Arc;

use copyhound_core::model::{CrawlRunStatus, TaskKind, Timestamp};
use copyhound_crawler::Scheduler;
use copyhound_crawler::scheduler::scheduled_run_id;
use copyhound_crawler::site::{SiteBuilder, SitePolicy};

const LOOPBACK: SitePolicy = SitePolicy {
    allow_private_addresses: true,
};

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
