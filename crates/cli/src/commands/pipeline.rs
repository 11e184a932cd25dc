//! Commands that run or inspect the pipeline: `works import`, `worker`,
//! `migrate`, `index rebuild`, `tasks`.

use std::process::ExitCode;
use std::sync::Arc;

use copyhound_core::config::Config;
use copyhound_fingerprint::FINGERPRINT_VERSION;
use copyhound_runtime::{Backends, Node};
use indicatif::{ProgressBar, ProgressStyle};
use tracing::info;

use crate::cli::{ImportArgs, IndexCommand, MigrateCommand, TasksCommand, WorkerArgs};
use copyhound_bench::PageCounter;
use copyhound_intake::import;

pub async fn import(config: &Config, args: ImportArgs) -> anyhow::Result<ExitCode> {
    let works = import::read_works(&args.dir)?;
    let node = Node::open(config).await?;
    let summary = import::import_works(&node.backends().ports(), works, "works import").await?;
    println!(
        "imported {} works, {} chapters; fingerprinting queued",
        summary.0, summary.1
    );
    node.persist().await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn worker(config: &Config, args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let node = Node::build(config).await?;
    let worker = node.worker(args.concurrency, Arc::new(PageCounter::default()))?;
    if args.until_idle {
        let outcome = worker.drain().await?;
        println!(
            "{} tasks: {} succeeded, {} failed",
            outcome.received, outcome.succeeded, outcome.failed
        );
        node.persist().await?;
        return Ok(ExitCode::SUCCESS);
    }
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        info!("shutdown requested; finishing in-flight tasks");
        let _ = shutdown_tx.send(true);
    });
    worker.run(shutdown_rx).await?;
    node.persist().await?;
    Ok(ExitCode::SUCCESS)
}

/// Waits for SIGTERM or Ctrl-C.
pub async fn wait_for_signal() {
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = terminate.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub async fn migrate(config: &Config, command: MigrateCommand) -> anyhow::Result<ExitCode> {
    let stores = copyhound_runtime::open_stores(config).await?;
    match command {
        MigrateCommand::Status => {
            for status in copyhound_store::migrate_status(&stores).await? {
                let state = match (&status.applied_at, status.modified_since_applied) {
                    (Some(at), false) => format!("applied {}", at.to_rfc3339()),
                    (Some(at), true) => {
                        format!("applied {} (file changed since!)", at.to_rfc3339())
                    }
                    (None, _) => "pending".to_string(),
                };
                println!("{:04} {:<32} {state}", status.version, status.name);
            }
        }
        MigrateCommand::Up => {
            let applied = copyhound_store::migrate_up(&stores).await?;
            println!("{applied} migrations applied");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn index(config: &Config, command: IndexCommand) -> anyhow::Result<ExitCode> {
    match command {
        IndexCommand::Rebuild => {
            let backends = Backends::open(config).await?;
            let progress = ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {pos} records indexed {per_sec}")
                    .expect("valid"),
            );
            let records = copyhound_index::rebuild_index(
                backends.stores.fingerprints.as_ref(),
                backends.index.as_ref(),
                FINGERPRINT_VERSION,
                |done| progress.set_position(done),
            )
            .await?;
            progress.finish_and_clear();
            backends.persist().await?;
            let stats = backends.index.stats().await?;
            println!(
                "rebuilt the index from {records} fingerprint records: {} entries",
                stats.entries
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn tasks(config: &Config, command: TasksCommand) -> anyhow::Result<ExitCode> {
    let queue = copyhound_runtime::open_queue(config).await?;
    match command {
        TasksCommand::Stats => {
            let stats = queue.stats().await?;
            println!(
                "depth {}  in flight {}  retrying {}  dead {}",
                stats.depth, stats.in_flight, stats.retrying, stats.dead
            );
        }
        TasksCommand::Dead { limit } => {
            for dead in queue.dead_letters(limit).await? {
                println!(
                    "{}  {}  attempts {}  at {}  {}",
                    dead.task.id,
                    dead.task.kind.name(),
                    dead.attempts,
                    dead.dead_at.to_rfc3339(),
                    dead.last_error
                );
            }
        }
        TasksCommand::Retry { limit } => {
            let requeued = queue.retry_dead(limit).await?;
            println!("{requeued} dead tasks re-queued");
        }
    }
    Ok(ExitCode::SUCCESS)
}
