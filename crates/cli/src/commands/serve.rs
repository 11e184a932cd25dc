//! `copyhound serve` and `copyhound scheduler`: the long-running processes.
//!
//! On the embedded default the backends are files one process owns, so `serve`
//! also runs the workers and the crawl scheduler in-process; on MongoDB + Redis
//! those scale out as separate `copyhound worker` / `copyhound scheduler`
//! processes and `serve` runs only what `--workers` asks for.

use std::process::ExitCode;
use std::sync::Arc;

use copyhound_core::config::{Backend, Config};
use copyhound_crawler::Scheduler;
use copyhound_crawler::site::SitePolicy;
use copyhound_matcher::Worker;
use copyhound_server::AppState;
use tokio::sync::watch;
use tracing::info;

use super::pipeline::{pipeline, wait_for_signal, worker_config};
use crate::backends::Backends;
use crate::cli::ServeArgs;
use crate::crawl_handler::{CrawlHandler, PageCounter};

pub async fn serve(config: &Config, args: ServeArgs) -> anyhow::Result<ExitCode> {
    if config.server.admin_key.as_deref().is_none_or(str::is_empty) {
        tracing::warn!(
            "no operator key (server.admin_key, COPYHOUND_SERVER_ADMIN_KEY): the admin \
             routes accept publisher admin keys only, and no publisher can be created"
        );
    }
    let backends = Backends::open(config).await?;
    backends.recover().await?;
    let embedded = matches!(config.queue_backend(), Backend::Embedded(_));
    let workers = args.workers.unwrap_or(if embedded {
        config.worker.concurrency
    } else {
        0
    });
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let mut background = Vec::new();
    if workers > 0 {
        let crawl = Arc::new(CrawlHandler::new(
            config,
            &backends,
            Arc::new(PageCounter::default()),
        )?);
        let handler = Arc::new(pipeline(&backends, config)?.with_crawl_handler(crawl));
        let worker = Worker::new(
            backends.queue.clone(),
            handler,
            worker_config(config, Some(workers)),
        );
        let stop = shutdown_rx.clone();
        background.push(tokio::spawn(async move {
            let _ = worker.run(stop).await;
        }));
        info!(workers, "in-process workers started");
    }
    if embedded || args.scheduler {
        let scheduler = Scheduler::new(backends.stores.sites.clone(), backends.queue.clone());
        let mut stop = shutdown_rx.clone();
        background.push(tokio::spawn(async move {
            scheduler
                .run(async move {
                    let _ = stop.wait_for(|stopped| *stopped).await;
                })
                .await;
        }));
        if let Some(reports) = crate::report_scheduler::ReportScheduler::new(config, &backends)? {
            let stop = shutdown_rx.clone();
            background.push(tokio::spawn(async move { reports.run(stop).await }));
        }
    }
    let state = AppState {
        publishers: backends.stores.publishers.clone(),
        works: backends.stores.works.clone(),
        sites: backends.stores.sites.clone(),
        pages: backends.stores.pages.clone(),
        matches: backends.stores.matches.clone(),
        fingerprints: backends.stores.fingerprints.clone(),
        reports: backends.stores.reports.clone(),
        queue: backends.queue.clone(),
        index: Some(backends.index.clone()),
        config: config.server.clone(),
        site_policy: SitePolicy::for_crawler(&config.crawler),
    };
    let listen = config.server.listen.clone();
    if let Some(lock) = &backends.data_lock {
        lock.note_listen(&listen);
    }
    println!("serving the API and admin UI on http://{listen}/");
    let mut stop = shutdown_rx.clone();
    let server_shutdown = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    tokio::spawn(async move {
        wait_for_signal().await;
        info!("shutdown requested");
        let _ = shutdown_tx.send(true);
    });
    copyhound_server::serve(state, &listen, server_shutdown).await?;
    for task in background {
        let _ = task.await;
    }
    backends.persist().await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn scheduler(config: &Config) -> anyhow::Result<ExitCode> {
    let backends = Backends::open(config).await?;
    backends.recover().await?;
    let scheduler = Scheduler::new(backends.stores.sites.clone(), backends.queue.clone());
    let (stop_tx, stop_rx) = watch::channel(false);
    let reports = crate::report_scheduler::ReportScheduler::new(config, &backends)?
        .map(|reports| tokio::spawn(async move { reports.run(stop_rx).await }));
    println!("scheduler running; crawls (and [reports] schedules and alerts) run when due");
    scheduler.run(wait_for_signal()).await;
    let _ = stop_tx.send(true);
    if let Some(reports) = reports {
        let _ = reports.await;
    }
    Ok(ExitCode::SUCCESS)
}
