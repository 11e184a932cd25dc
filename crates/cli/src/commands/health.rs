//! `copyhound health`: the check a container orchestrator runs. Runtime images
//! have no shell tricks (`/dev/tcp` is bash's, the image's `sh` is dash), so
//! the binary checks itself: a server's `/health` over HTTP, or the remote
//! backends of the configuration.

use std::process::ExitCode;
use std::time::Duration;

use copyhound_core::config::{Backend, Config};

use crate::cli::HealthArgs;

/// How long one check may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Exits 0 when everything checked answers, 1 otherwise (one line per check).
pub async fn run(config: &Config, args: HealthArgs) -> anyhow::Result<ExitCode> {
    let healthy = match &args.url {
        Some(url) => check_url(url).await,
        None => check_backends(config).await,
    };
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn check_url(url: &str) -> bool {
    let client = match reqwest::Client::builder().timeout(TIMEOUT).build() {
        Ok(client) => client,
        Err(error) => return report("http", Err(error.to_string())),
    };
    let outcome = match client.get(url).send().await {
        Ok(response) if response.status().is_success() => Ok(format!("{url} answers")),
        Ok(response) => Err(format!("{url} answers {}", response.status())),
        Err(error) => Err(format!("{url}: {error}")),
    };
    report("http", outcome)
}

/// Checks each remote backend; embedded ones belong to the process that
/// opened them (their files are locked), so they are only named.
async fn check_backends(config: &Config) -> bool {
    let mut healthy = true;
    healthy &= match config.store_backend() {
        Backend::Embedded(dir) => report("store", Ok(embedded(&dir))),
        Backend::Remote(_) => {
            let outcome = match timed_open(copyhound_runtime::open_stores(config)).await {
                Ok(stores) => timed(stores.check_connectivity()).await,
                Err(error) => Err(error),
            };
            report("store", outcome)
        }
    };
    healthy &= match config.index_backend() {
        Backend::Embedded(dir) => report("index", Ok(embedded(&dir))),
        Backend::Remote(_) => {
            let outcome = match timed_open(copyhound_runtime::open_index(config)).await {
                Ok(_) => Ok("answers".to_string()),
                Err(error) => Err(error),
            };
            report("index", outcome)
        }
    };
    healthy &= match config.queue_backend() {
        Backend::Embedded(dir) => report("queue", Ok(embedded(&dir))),
        Backend::Remote(_) => {
            let outcome = match timed_open(copyhound_runtime::open_queue(config)).await {
                Ok(queue) => timed(queue.check_connectivity()).await,
                Err(error) => Err(error),
            };
            report("queue", outcome)
        }
    };
    healthy
}

fn embedded(dir: &std::path::Path) -> String {
    format!(
        "embedded under {} (held by its process; check it with --url)",
        dir.display()
    )
}

async fn timed(check: impl Future<Output = copyhound_core::Result<()>>) -> Result<String, String> {
    timed_value(check).await.map(|()| "answers".to_string())
}

async fn timed_value<T>(
    future: impl Future<Output = copyhound_core::Result<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(TIMEOUT, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {} s", TIMEOUT.as_secs())),
    }
}

async fn timed_open<T>(future: impl Future<Output = anyhow::Result<T>>) -> Result<T, String> {
    match tokio::time::timeout(TIMEOUT, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(format!("{error:#}")),
        Err(_) => Err(format!("no answer within {} s", TIMEOUT.as_secs())),
    }
}

fn report(what: &str, outcome: Result<String, String>) -> bool {
    match outcome {
        Ok(message) => {
            println!("{what}: ok, {message}");
            true
        }
        Err(message) => {
            println!("{what}: FAILED, {message}");
            false
        }
    }
}
