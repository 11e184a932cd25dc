use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_report::WebhookTransport;

/// Posts alert webhooks over HTTP(S), 30 s per attempt.
#[derive(Debug, Clone)]
pub struct HttpWebhookTransport {
    client: reqwest::Client,
}

impl HttpWebhookTransport {
    /// Returns the transport.
    pub fn new() -> Result<Self> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| {
                Error::with_source(ErrorKind::Config, "cannot build the webhook client", error)
            })?;
        Ok(Self { client })
    }
}

#[async_trait]
impl WebhookTransport for HttpWebhookTransport {
    async fn post(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> Result<u16> {
        let mut request = self.client.post(url).body(body.to_vec());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|error| {
            Error::with_source(
                ErrorKind::Transient,
                format!("webhook post to {url} failed"),
                error,
            )
        })?;
        Ok(response.status().as_u16())
    }

    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}
