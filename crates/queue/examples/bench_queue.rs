//! End-to-end throughput of the task queues: enqueue, receive and acknowledge
//! a seeded batch of tasks through the embedded redb queue and through Redis
//! Streams (when `COPYHOUND_TEST_REDIS_URL` is set).
//!
//! ```text
//! cargo run --release -p copyhound-queue --example bench_queue -- [tasks] [batch]
//! ```
//! Two scenarios per backend: phased (enqueue everything, then drain with
//! receive + acknowledge) and concurrent (one producer, two consumers).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use copyhound_core::config::QueueConfig;
use copyhound_core::ids::{CrawlRunId, SiteId};
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::{AckId, TaskQueue};
use copyhound_queue::{LocalTaskQueue, RedisTaskQueue};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SEED: u64 = 0x5eed_c0de;
const VISIBILITY: Duration = Duration::from_secs(60);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let count: usize = args
        .next()
        .map(|arg| arg.parse())
        .transpose()?
        .unwrap_or(20_000);
    let batch: usize = args
        .next()
        .map(|arg| arg.parse())
        .transpose()?
        .unwrap_or(100);
    let tasks = seeded_tasks(count);
    println!("{count} tasks (FetchPage, seed {SEED:#x}), batches of {batch}");
    println!("| backend | scenario | enqueue tasks/s | receive+ack tasks/s | end-to-end tasks/s |");
    println!("|---|---|---|---|---|");

    for scenario in [Scenario::Phased, Scenario::Concurrent] {
        let dir = tempfile::tempdir()?;
        let queue: Arc<dyn TaskQueue> =
            Arc::new(LocalTaskQueue::open(dir.path(), &config("")).await?);
        report(
            "local (redb)",
            scenario,
            run(queue, &tasks, batch, scenario).await?,
        );
    }

    match std::env::var("COPYHOUND_TEST_REDIS_URL") {
        Ok(url) => {
            for scenario in [Scenario::Phased, Scenario::Concurrent] {
                let prefix = format!("copyhound:bench:{}:", uuid::Uuid::now_v7().simple());
                let queue = RedisTaskQueue::connect(&url, &config(&prefix))
                    .await
                    .context("connect to redis")?;
                let keys = queue.keys();
                let figures = run(Arc::new(queue), &tasks, batch, scenario).await;
                delete_keys(&url, &keys)?;
                report("redis streams", scenario, figures?);
            }
        }
        Err(_) => println!("(redis skipped: set COPYHOUND_TEST_REDIS_URL)"),
    }
    Ok(())
}

#[derive(Clone, Copy, Debug)]
enum Scenario {
    Phased,
    Concurrent,
}

struct Figures {
    enqueue: Duration,
    drain: Duration,
    total: Duration,
    count: usize,
}

fn config(prefix: &str) -> QueueConfig {
    QueueConfig {
        prefix: prefix.to_string(),
        ..QueueConfig::default()
    }
}

fn seeded_tasks(count: usize) -> Vec<Task> {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let site: SiteId = "site_bench".parse().expect("valid id");
    let run_id: CrawlRunId = "run_bench".parse().expect("valid id");
    let now = chrono::Utc::now();
    (0..count)
        .map(|n| {
            let url = format!(
                "https://novels.example/book/{}/chapter/{n}",
                rng.random_range(0..10_000u32)
            );
            let kind = TaskKind::FetchPage {
                site_id: site.clone(),
                run_id: run_id.clone(),
                url,
                depth: rng.random_range(0..5),
            };
            Task::new(kind, now)
        })
        .collect()
}

async fn run(
    queue: Arc<dyn TaskQueue>,
    tasks: &[Task],
    batch: usize,
    scenario: Scenario,
) -> anyhow::Result<Figures> {
    let started = Instant::now();
    match scenario {
        Scenario::Phased => {
            produce(queue.as_ref(), tasks, batch).await?;
            let enqueue = started.elapsed();
            let drained = consume(queue.as_ref(), &AtomicUsize::new(0), tasks.len(), batch).await?;
            anyhow::ensure!(
                drained == tasks.len(),
                "drained {drained} of {}",
                tasks.len()
            );
            let total = started.elapsed();
            Ok(Figures {
                enqueue,
                drain: total - enqueue,
                total,
                count: tasks.len(),
            })
        }
        Scenario::Concurrent => {
            let goal = tasks.len();
            let handled = Arc::new(AtomicUsize::new(0));
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    let queue = Arc::clone(&queue);
                    let handled = Arc::clone(&handled);
                    tokio::spawn(
                        async move { consume(queue.as_ref(), &handled, goal, batch).await },
                    )
                })
                .collect();
            produce(queue.as_ref(), tasks, batch).await?;
            let enqueue = started.elapsed();
            let mut drained = 0;
            for consumer in consumers {
                drained += consumer.await??;
            }
            anyhow::ensure!(drained == goal, "drained {drained} of {goal}");
            let total = started.elapsed();
            Ok(Figures {
                enqueue,
                drain: total,
                total,
                count: goal,
            })
        }
    }
}

async fn produce(queue: &dyn TaskQueue, tasks: &[Task], batch: usize) -> anyhow::Result<()> {
    for chunk in tasks.chunks(batch) {
        queue.enqueue(chunk.to_vec()).await?;
    }
    Ok(())
}

/// Receives and acknowledges until `handled` (shared by the consumers) reaches
/// `goal`; returns how many this consumer handled.
async fn consume(
    queue: &dyn TaskQueue,
    handled: &AtomicUsize,
    goal: usize,
    batch: usize,
) -> anyhow::Result<usize> {
    let mut mine = 0;
    let mut idle_since = Instant::now();
    while handled.load(Ordering::Relaxed) < goal {
        let received = queue.receive(batch, VISIBILITY).await?;
        if received.is_empty() {
            anyhow::ensure!(
                idle_since.elapsed() < Duration::from_secs(30),
                "queue stalled at {mine}"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        }
        idle_since = Instant::now();
        let acks: Vec<AckId> = received
            .iter()
            .map(|delivery| delivery.ack_id.clone())
            .collect();
        queue.acknowledge(&acks).await?;
        mine += acks.len();
        handled.fetch_add(acks.len(), Ordering::Relaxed);
    }
    Ok(mine)
}

fn report(backend: &str, scenario: Scenario, figures: Figures) {
    let rate = |duration: Duration| figures.count as f64 / duration.as_secs_f64();
    println!(
        "| {backend} | {scenario:?} | {:.0} | {:.0} | {:.0} |",
        rate(figures.enqueue),
        rate(figures.drain),
        rate(figures.total)
    );
}

fn delete_keys(url: &str, keys: &[String]) -> anyhow::Result<()> {
    let mut connection = redis::Client::open(url)?.get_connection()?;
    redis::cmd("DEL").arg(keys).query::<u64>(&mut connection)?;
    Ok(())
}
