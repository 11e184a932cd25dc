//! Crawl slots are shared between tenants: one publisher's slow sites never
//! hold every slot while another publisher's crawl waits. Past its share
//! (`crawler.max_crawls_per_publisher`), a run goes back to the queue without
//! counting an attempt and starts when one of its publisher's runs ends.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::config::{CrawlerConfig, QueueConfig};
use copyhound_core::ids::CrawlRunId;
use copyhound_core::model::{CrawlRun, CrawlRunStatus, Site, Task, TaskKind};
use copyhound_core::ports::{FetchRequest, FetchedPage, Fetcher, TaskQueue};
use copyhound_crawler::site::{SiteBuilder, SitePolicy};
use copyhound_crawler::{CrawlHandler, Crawler, NoProgress};
use copyhound_queue::LocalTaskQueue;
use copyhound_runtime::{Dispatcher, Worker, WorkerSettings};

/// Every site is slow: each page answers after 300 ms; robots.txt is absent.
#[derive(Debug)]
struct SlowSites;

#[async_trait]
impl Fetcher for SlowSites {
    async fn fetch(&self, request: &FetchRequest) -> copyhound_core::Result<FetchedPage> {
        if request.url.ends_with("/robots.txt") {
            return Err(copyhound_core::Error::not_found("no robots.txt"));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok(FetchedPage {
            final_url: request.url.clone(),
            status: 200,
            content_type: Some("text/html; charset=utf-8".into()),
            etag: None,
            last_modified: None,
            headers: Vec::new(),
            body: "<html><body><p>叔宝众人出了酒店，行至街上。</p></body></html>"
                .as_bytes()
                .to_vec(),
            duration_ms: 300,
            received_at: None,
            connection: None,
        })
    }
}

fn site(publisher: &str, port: u16, config: &CrawlerConfig) -> Site {
    SiteBuilder::new(
        publisher.parse().unwrap(),
        "a slow site",
        vec![format!("http://127.0.0.1:{port}/")],
    )
    .policy(SitePolicy::for_crawler(config))
    .politeness(0.0, 1)
    .build()
    .unwrap()
}

fn overlap(a: &CrawlRun, b: &CrawlRun) -> bool {
    a.started_at.unwrap() < b.finished_at.unwrap() && b.started_at.unwrap() < a.finished_at.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publisher_past_its_share_waits_and_another_publisher_crawls_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
    let queue_config = QueueConfig {
        max_attempts: 2,
        ..QueueConfig::default()
    };
    let queue = Arc::new(
        LocalTaskQueue::open(&dir.path().join("queue"), &queue_config)
            .await
            .unwrap(),
    );
    let config = CrawlerConfig {
        allow_private_addresses: true,
        max_crawls_per_publisher: 1,
        ..CrawlerConfig::default()
    };
    let crawler = Crawler::new(
        config.clone(),
        Arc::new(SlowSites),
        stores.sites.clone(),
        stores.pages.clone(),
        queue.clone(),
    )
    .with_share_wait(Duration::from_millis(50));
    // Publisher A queues four slow sites first; B's one site comes last.
    let mut sites: Vec<Site> = (0..4).map(|n| site("PA", 9101 + n, &config)).collect();
    sites.push(site("PB", 9201, &config));
    let mut runs = Vec::new();
    for site in &sites {
        stores.sites.put_site(site).await.unwrap();
        let run_id = CrawlRunId::generate();
        let task = Task::new(
            TaskKind::CrawlSite {
                site_id: site.id.clone(),
                run_id: run_id.clone(),
                scope: None,
            },
            Utc::now(),
        );
        queue.enqueue(vec![task]).await.unwrap();
        runs.push(run_id);
    }
    let settings = WorkerSettings {
        concurrency: 2,
        idle_sleep: Duration::from_millis(10),
        max_attempts: 2,
        ..WorkerSettings::default()
    };
    let handler = Arc::new(
        Dispatcher::default().with_crawl(CrawlHandler::with_crawler(crawler, Arc::new(NoProgress))),
    );
    let outcome = Worker::new(queue.clone(), handler, settings)
        .run_until_idle(|_| {})
        .await
        .unwrap();

    assert_eq!(outcome.failed, 0, "{outcome:?}");
    assert_eq!(outcome.succeeded, 5, "{outcome:?}");
    assert!(
        outcome.deferred > 0,
        "A's runs waited their turn: {outcome:?}"
    );
    let mut finished = Vec::new();
    for run_id in &runs {
        let run = stores.sites.get_crawl_run(run_id).await.unwrap();
        assert_eq!(run.status, CrawlRunStatus::Succeeded, "{run:?}");
        finished.push(run);
    }
    let (a, b) = finished.split_at(4);
    for (i, first) in a.iter().enumerate() {
        for second in &a[i + 1..] {
            assert!(
                !overlap(first, second),
                "A ran two crawls at once: {first:?} {second:?}"
            );
        }
    }
    let mut a_starts: Vec<_> = a.iter().map(|run| run.started_at.unwrap()).collect();
    a_starts.sort();
    assert!(
        b[0].started_at.unwrap() < a_starts[1],
        "B's crawl started while A's first still ran, not after A's queue: B {:?}, A {a_starts:?}",
        b[0].started_at
    );
    // Nothing deferred was counted as an attempt or dead-lettered; no slot is left held.
    assert!(queue.dead_letters(10).await.unwrap().is_empty());
    assert!(
        queue
            .acquire_slot("crawls/PA", "next", 1, Duration::from_secs(1))
            .await
            .unwrap(),
        "every slot was freed"
    );
}
