//! Start-up recovery of the registration outbox on the embedded backends: works
//! whose chapters are still pending, or indexed under an older fingerprint
//! version, get their fingerprinting enqueued again, and nothing else does.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::time::Duration;

use chrono::Utc;
use copyhound_core::config::QueueConfig;
use copyhound_core::ids::{PublisherId, WorkId};
use copyhound_core::model::{
    Chapter, FingerprintStatus, Language, Publisher, PublisherKind, TaskKind, Work, WorkKind,
};
use copyhound_core::ports::TaskQueue;
use copyhound_fingerprint::FINGERPRINT_VERSION;
use copyhound_matcher::{RequeueOutcome, requeue_pending_works};
use copyhound_queue::LocalTaskQueue;
use copyhound_store::Stores;

fn work(id: &str, publisher_id: &PublisherId) -> Work {
    Work {
        id: id.parse().unwrap(),
        publisher_id: publisher_id.clone(),
        title: id.into(),
        author: String::new(),
        kind: WorkKind::Novel,
        language: Language::Zh,
        licensed_hosts: Vec::new(),
        created_at: Utc::now(),
        updated_at: Utc::now(),
        released_at: None,
        release_schedule: None,
    }
}

#[tokio::test]
async fn works_with_pending_chapters_are_enqueued_again() {
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::local(dir.path().join("store")).unwrap();
    let queue = LocalTaskQueue::open(&dir.path().join("queue"), &QueueConfig::default())
        .await
        .unwrap();
    // Two publishers (one with more works than a scan page holds), works in
    // every state: pending, partly indexed, indexed, failed, indexed under an
    // older fingerprint version.
    let mut expected: Vec<WorkId> = Vec::new();
    let mut outdated = 0;
    for (publisher, works) in [("pa", 3), ("pb", 205)] {
        let publisher_id: PublisherId = publisher.parse().unwrap();
        let record = Publisher {
            id: publisher_id.clone(),
            name: publisher.into(),
            kind: PublisherKind::Books,
            created_at: Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        };
        stores.publishers.put_publisher(&record).await.unwrap();
        for number in 0..works {
            let work = work(&format!("w_{publisher}_{number:03}"), &publisher_id);
            let current = FingerprintStatus::Indexed {
                version: FINGERPRINT_VERSION,
            };
            let older = FingerprintStatus::Indexed {
                version: FINGERPRINT_VERSION - 1,
            };
            let statuses = match number % 5 {
                0 => vec![FingerprintStatus::Pending],
                1 => vec![current.clone(), FingerprintStatus::Pending],
                2 => vec![current.clone()],
                3 => vec![FingerprintStatus::Failed {
                    error: "bad".into(),
                }],
                _ => vec![current.clone(), older],
            };
            if matches!(number % 5, 0 | 1 | 4) {
                expected.push(work.id.clone());
            }
            if number % 5 == 4 {
                outdated += 1;
            }
            let chapters: Vec<Chapter> = statuses
                .into_iter()
                .enumerate()
                .map(|(index, status)| {
                    let mut chapter = Chapter::new(
                        work.id.clone(),
                        format!("c_{index}").parse().unwrap(),
                        index as u32 + 1,
                        "t".into(),
                        "正文。".into(),
                    );
                    chapter.fingerprint_status = status;
                    chapter
                })
                .collect();
            stores.works.put_chapters(&chapters).await.unwrap();
            stores.works.put_work(&work).await.unwrap();
        }
    }
    let outcome = requeue_pending_works(stores.publishers.as_ref(), stores.works.as_ref(), &queue)
        .await
        .unwrap();
    assert_eq!(
        outcome,
        RequeueOutcome {
            works: 208,
            requeued: expected.len() as u64,
            outdated,
        }
    );
    let received = queue.receive(1_000, Duration::from_secs(30)).await.unwrap();
    let mut requeued: Vec<WorkId> = received
        .into_iter()
        .map(|delivery| match delivery.task.kind {
            TaskKind::FingerprintWork { work_id } => work_id,
            other => panic!("unexpected task {other:?}"),
        })
        .collect();
    requeued.sort();
    expected.sort();
    assert_eq!(requeued, expected);
}
