//! The publisher's webhook receiver: a loopback server that keeps every
//! alert's body with the moment it arrived.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One delivered alert.
#[derive(Clone, Debug)]
pub struct Alert {
    /// When it arrived.
    pub at: Instant,
    /// Its body (JSON; `Null` when it was not JSON).
    pub body: serde_json::Value,
}

/// One match an alert names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlertedMatch {
    /// The match id.
    pub match_id: String,
    /// The page URL, when the payload carries it.
    pub url: Option<String>,
}

impl Alert {
    /// The matches the alert lists (`matches[].match_id` and `.url`).
    pub fn matches(&self) -> Vec<AlertedMatch> {
        self.body["matches"]
            .as_array()
            .map(|matches| {
                matches
                    .iter()
                    .filter_map(|found| {
                        let id = found["match_id"].as_str().or(found["id"].as_str())?;
                        Some(AlertedMatch {
                            match_id: id.to_string(),
                            url: found["url"]
                                .as_str()
                                .or(found["page_url"].as_str())
                                .map(str::to_string),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the payload says it left matches out.
    pub fn truncated(&self) -> bool {
        self.body["truncated"].as_bool().unwrap_or(false)
    }
}

/// The running receiver; stops on drop.
#[derive(Debug)]
pub struct Receiver {
    /// Where alerts are posted.
    pub url: String,
    alerts: Arc<Mutex<Vec<Alert>>>,
    stop_tx: watch::Sender<bool>,
    server: JoinHandle<()>,
}

impl Receiver {
    /// Serves the receiver on a free loopback port.
    pub async fn serve() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot bind the webhook receiver")?;
        let address = listener.local_addr()?;
        let alerts = Arc::new(Mutex::new(Vec::new()));
        let router = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(alerts.clone());
        let (stop_tx, mut stop_rx) = watch::channel(false);
        let server = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop_rx.wait_for(|stopped| *stopped).await;
            };
            if let Err(error) = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(error = %error, "webhook receiver failed");
            }
        });
        Ok(Self {
            url: format!("http://{address}/hook"),
            alerts,
            stop_tx,
            server,
        })
    }

    /// Every alert so far.
    pub fn alerts(&self) -> Vec<Alert> {
        self.alerts.lock().expect("alerts").clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.stop_tx.send(true);
        self.server.abort();
    }
}

async fn receive(State(alerts): State<Arc<Mutex<Vec<Alert>>>>, body: Bytes) -> StatusCode {
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    alerts.lock().expect("alerts").push(Alert {
        at: Instant::now(),
        body,
    });
    StatusCode::OK
}
