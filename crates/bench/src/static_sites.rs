//! Serves benchmark sites (folders of static pages) on loopback, each on its own
//! port with its robots.txt at the root, like the benchmark's `serve.sh`, so the
//! real crawler crawls them exactly as it crawls the web.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower_http::services::ServeDir;

/// One served site.
#[derive(Debug, Clone)]
pub struct ServedSite {
    /// Folder name (`site1`).
    pub name: String,
    /// `http://127.0.0.1:<port>`, no trailing slash.
    pub base_url: String,
}

/// Running static servers; stopped on drop.
#[derive(Debug)]
pub struct StaticSites {
    /// The sites, in name order.
    pub sites: Vec<ServedSite>,
    stop_tx: watch::Sender<bool>,
    servers: Vec<JoinHandle<()>>,
}

impl StaticSites {
    /// Serves every sub-folder of `pages_dir` on its own loopback port.
    pub async fn serve(pages_dir: &Path) -> anyhow::Result<Self> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(pages_dir)
            .with_context(|| format!("cannot list {}", pages_dir.display()))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.is_dir())
            .collect();
        dirs.sort();
        if dirs.is_empty() {
            bail!("no site folders in {}", pages_dir.display());
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut sites = Vec::new();
        let mut servers = Vec::new();
        for dir in dirs {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .context("cannot bind a loopback port")?;
            let address = listener.local_addr()?;
            // As web servers do (nginx's `tcp_nodelay on`): without it, a
            // response written in two segments waits for the crawler's
            // delayed ACK, about 40 ms on Linux, and every fetch took ~30 ms.
            let listener = listener.tap_io(|stream| {
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::debug!(error = %error, "cannot set TCP_NODELAY");
                }
            });
            let router = axum::Router::new().fallback_service(ServeDir::new(&dir));
            let mut stop = stop_rx.clone();
            servers.push(tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stop.wait_for(|stopped| *stopped).await;
                };
                if let Err(error) = axum::serve(listener, router)
                    .with_graceful_shutdown(shutdown)
                    .await
                {
                    tracing::warn!(error = %error, "static site server failed");
                }
            }));
            let name = dir
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            sites.push(ServedSite {
                name,
                base_url: format!("http://{address}"),
            });
        }
        Ok(Self {
            sites,
            stop_tx,
            servers,
        })
    }
}

impl Drop for StaticSites {
    fn drop(&mut self) {
        let _ = self.stop_tx.send(true);
        for server in &self.servers {
            server.abort();
        }
    }
}
