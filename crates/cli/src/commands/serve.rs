//! `copyhound serve` and `copyhound scheduler`: the long-running processes.
//!
//! On the embedded default the backends are files one process owns, so `serve`
//! also runs the workers and the crawl scheduler in-process; on MongoDB + Redis
//! those scale out as separate `copyhound worker` / `copyhound scheduler`
//! processes and `serve` runs only what `--workers` asks for.

use std::process::ExitCode;

use copyhound_core::config::{Backend, Config};
use copyhound_core::site::SitePolicy;
use copyhound_runtime::Node;
use copyhound_server::AppState;
use tokio::sync::watch;
use tracing::info;

use super::pipeline::wait_for_signal;
use crate::cli::ServeArgs;

pub async fn serve(config: &Config, args: ServeArgs) -> anyhow::Result<ExitCode> {
    if config.server.admin_key.as_deref().is_none_or(str::is_empty) {
        tracing::warn!(
            "no operator key (server.admin_key, COPYHOUND_SERVER_ADMIN_KEY): the admin \
             routes accept publisher admin keys only, and no publisher can be created"
        );
    }
    let node = Node::build(config).await?;
    let embedded = matches!(config.queue_backend(), Backend::Embedded(_));
    let workers = args.workers.unwrap_or(if embedded {
        config.worker.concurrency
    } else {
        0
    });
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let mut background = Vec::new();
    if workers > 0 {
        background.push(node.spawn_worker(workers, shutdown_rx.clone())?);
    }
    if embedded || args.scheduler {
        background.extend(node.spawn_schedulers(shutdown_rx.clone())?);
    }
    let state = app_state(&node)?;
    let listen = config.server.listen.clone();
    // Bind before saying where: a port in use is an error, not a false promise.
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(listener) => listener,
        Err(error) => {
            let _ = shutdown_tx.send(true);
            for task in background {
                let _ = task.await;
            }
            anyhow::bail!(
                "cannot listen on {listen} ({error}): is another `copyhound serve` running? \
                 Set server.listen (COPYHOUND_SERVER_LISTEN) to another address"
            );
        }
    };
    if let Some(lock) = &node.backends().data_lock {
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
    copyhound_server::serve_listener(state, listener, server_shutdown).await?;
    for task in background {
        let _ = task.await;
    }
    node.persist().await?;
    Ok(ExitCode::SUCCESS)
}

/// The API's view of the node.
fn app_state(node: &Node) -> anyhow::Result<AppState> {
    let backends = node.backends();
    Ok(AppState {
        ports: backends.ports(),
        config: node.config().server.clone(),
        site_policy: SitePolicy::for_crawler(&node.config().crawler),
        matcher: node.config().matcher.clone(),
        mail: node.mail()?,
        recipients: node.recipients()?,
        evidence: evidence_maker(node.config())?,
    })
}

/// What the API makes evidence bundles with, when `evidence.tsa_url` is set.
fn evidence_maker(
    config: &Config,
) -> anyhow::Result<Option<copyhound_report::evidence::BundleMaker>> {
    if config.evidence.tsa_url.is_empty() {
        return Ok(None);
    }
    Ok(Some(copyhound_report::evidence::BundleMaker {
        tsa: std::sync::Arc::new(copyhound_runtime::HttpTimestampAuthority::from_config(
            config,
        )?),
        options: copyhound_runtime::bundle_options(config)?,
    }))
}

pub async fn scheduler(config: &Config) -> anyhow::Result<ExitCode> {
    let node = Node::build(config).await?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let running = node.spawn_schedulers(stop_rx)?;
    println!("scheduler running; crawls, report schedules and alerts run when due");
    wait_for_signal().await;
    let _ = stop_tx.send(true);
    for task in running {
        let _ = task.await;
    }
    Ok(ExitCode::SUCCESS)
}
