//! Alert webhooks: a JSON payload signed with HMAC-SHA256 and delivered with
//! retries. The HTTP client stays out of this crate: the binary implements
//! [`WebhookTransport`] (with reqwest, and `tokio::time::sleep` for the backoff),
//! tests implement it with a script of answers and no real waiting.
//!
//! Receivers verify `X-CopyHound-Signature: sha256=<hex>`, the HMAC-SHA256 of
//! the raw body under the shared secret (see [`verify_signature`]), and dedupe
//! on `X-CopyHound-Delivery`, which is the same for every retry of a payload.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::ids::{ChapterId, MatchId, PublisherId, SiteId, WorkId};
use copyhound_core::model::{AlertOn, Match, Timestamp};
use copyhound_core::{Error, ErrorKind, Result};
use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

use crate::alert::AlertDecision;

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-CopyHound-Signature";
/// Matches listed in one payload; the count is always complete.
const MAX_PAYLOAD_MATCHES: usize = 100;

/// Sends webhook requests; implemented by the binary over its HTTP client.
///
/// `post` sends `body` to `url` with `headers` and returns the HTTP status, or an
/// error when no response came (connection refused, timeout: the implementation
/// applies its own request timeout). `sleep` waits between attempts
/// (`tokio::time::sleep` in production).
#[async_trait]
pub trait WebhookTransport: fmt::Debug + Send + Sync {
    /// Posts `body` and returns the response status.
    async fn post(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> Result<u16>;
    /// Waits `duration` before the next attempt.
    async fn sleep(&self, duration: Duration);
}

/// One match in an alert payload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlertMatch {
    /// The match.
    pub match_id: MatchId,
    /// The copying page.
    pub url: String,
    /// Its site.
    pub site_id: SiteId,
    /// The copied work.
    pub work_id: WorkId,
    /// The copied chapter.
    pub chapter_id: ChapterId,
    /// Share of the chapter copied.
    pub chapter_coverage: f32,
    /// First detection.
    pub first_seen: Timestamp,
    /// SHA-256 of the stored page body.
    pub page_body_sha256: String,
}

/// The JSON body of an alert webhook.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WebhookPayload {
    /// `alert.new_confirmed`, or `alert.new_detected` for alerts on detection.
    pub event: &'static str,
    /// The publisher alerted.
    pub publisher_id: PublisherId,
    /// When the payload was built (receivers may reject stale ones).
    pub sent_at: Timestamp,
    /// Matches confirmed since the last alert.
    pub new_confirmed: u32,
    /// The policy threshold that was reached.
    pub threshold: u32,
    /// The last alert's time.
    pub since: Option<Timestamp>,
    /// The first matches (at most 100), oldest confirmation first.
    pub matches: Vec<AlertMatch>,
    /// Whether `matches` was cut.
    pub truncated: bool,
}

/// Returns the payload of an alert: the decision's matches, looked up in `matches`.
pub fn build_alert_payload(
    publisher_id: &PublisherId,
    decision: &AlertDecision,
    matches: &[Match],
    sent_at: Timestamp,
) -> WebhookPayload {
    let listed: Vec<AlertMatch> = decision
        .match_ids
        .iter()
        .filter_map(|id| matches.iter().find(|found| found.id == *id))
        .take(MAX_PAYLOAD_MATCHES)
        .map(|found| AlertMatch {
            match_id: found.id.clone(),
            url: found.page_url.clone(),
            site_id: found.site_id.clone(),
            work_id: found.work_id.clone(),
            chapter_id: found.chapter_id.clone(),
            chapter_coverage: found.chapter_coverage,
            first_seen: found.first_seen,
            page_body_sha256: found.page_body_sha256.clone(),
        })
        .collect();
    WebhookPayload {
        event: match decision.on {
            AlertOn::Confirmed => "alert.new_confirmed",
            AlertOn::Detected => "alert.new_detected",
        },
        publisher_id: publisher_id.clone(),
        sent_at,
        new_confirmed: decision.new_confirmed,
        threshold: decision.threshold,
        since: decision.since,
        truncated: listed.len() < decision.match_ids.len(),
        matches: listed,
    }
}

/// A signed request, ready to post (and to re-post on retries unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookRequest {
    /// Stable id of this payload, also sent as `X-CopyHound-Delivery`.
    pub delivery_id: String,
    /// Headers to send.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Vec<u8>,
}

fn mac(secret: &[u8]) -> Hmac<Sha256> {
    <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("hmac accepts keys of any length")
}

/// Returns the signature header value of `body`: `sha256=<lowercase hex>`.
pub fn signature_header_value(secret: &[u8], body: &[u8]) -> String {
    let mut signer = mac(secret);
    signer.update(body);
    let digest = signer.finalize().into_bytes();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256=");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Returns whether `header_value` is the signature of `body` under `secret`
/// (compared in constant time).
pub fn verify_signature(secret: &[u8], body: &[u8], header_value: &str) -> bool {
    let Some(hex) = header_value.trim().strip_prefix("sha256=") else {
        return false;
    };
    if hex.len() != 64 || !hex.is_ascii() {
        return false;
    }
    let bytes: Option<Vec<u8>> = (0..32)
        .map(|index| u8::from_str_radix(&hex[index * 2..index * 2 + 2], 16).ok())
        .collect();
    let Some(bytes) = bytes else {
        return false;
    };
    let mut verifier = mac(secret);
    verifier.update(body);
    verifier.verify_slice(&bytes).is_ok()
}

/// Returns the stable id of an alert body: the same for every retry and for
/// every channel (webhook, e-mail) that carries it.
pub fn delivery_id(body: &[u8]) -> String {
    format!("dlv_{}", &copyhound_core::ids::sha256_hex(body)[..32])
}

/// Returns `payload` serialized and signed with `secret`.
pub fn sign_webhook(payload: &WebhookPayload, secret: &[u8]) -> Result<WebhookRequest> {
    if secret.is_empty() {
        return Err(Error::new(ErrorKind::Config, "webhook secret is empty"));
    }
    let body = serde_json::to_vec(payload).map_err(|error| {
        Error::with_source(
            ErrorKind::Internal,
            "failed to serialize webhook payload",
            error,
        )
    })?;
    let delivery_id = delivery_id(&body);
    let headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("User-Agent".to_string(), "CopyHound-Webhook/1".to_string()),
        ("X-CopyHound-Event".to_string(), payload.event.to_string()),
        ("X-CopyHound-Delivery".to_string(), delivery_id.clone()),
        (
            SIGNATURE_HEADER.to_string(),
            signature_header_value(secret, &body),
        ),
    ];
    Ok(WebhookRequest {
        delivery_id,
        headers,
        body,
    })
}

/// How deliveries are retried: exponential backoff, no jitter (one sender per
/// publisher, so there is no herd to spread).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (at least 1).
    pub max_attempts: u32,
    /// Wait before the second attempt.
    pub initial_backoff_ms: u64,
    /// Longest wait between attempts.
    pub max_backoff_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff_ms: 1_000,
            max_backoff_ms: 60_000,
        }
    }
}

impl RetryPolicy {
    /// Returns the wait after failed attempt `attempt` (1-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        copyhound_core::backoff::Backoff::new(
            Duration::from_millis(self.initial_backoff_ms),
            Duration::from_millis(self.max_backoff_ms),
        )
        .delay(attempt)
    }
}

/// One attempt of a delivery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeliveryAttempt {
    /// 1-based.
    pub attempt: u32,
    /// When it was sent.
    pub at: Timestamp,
    /// The response status, when a response came.
    pub status: Option<u16>,
    /// The transport error, when none came.
    pub error: Option<String>,
    /// The wait before the next attempt, when there is one.
    pub backoff_ms: Option<u64>,
}

/// How a delivery ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum DeliveryOutcome {
    /// A 2xx response.
    Delivered {
        /// Its status.
        status: u16,
    },
    /// A response that retrying cannot fix (4xx other than 408 and 429).
    Rejected {
        /// Its status.
        status: u16,
    },
    /// Every attempt failed with a retryable status or a transport error.
    GaveUp,
}

/// The record of one delivery, for the task log and the admin UI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeliveryLog {
    /// The payload's delivery id.
    pub delivery_id: String,
    /// Where it was posted.
    pub url: String,
    /// Every attempt, in order.
    pub attempts: Vec<DeliveryAttempt>,
    /// How it ended.
    pub outcome: DeliveryOutcome,
}

fn is_retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || !(200..500).contains(&status)
}

/// Posts `request` to `url`, retrying transport errors, 408, 429 and 5xx with
/// exponential backoff, and returns the log of what happened. It never fails:
/// the outcome is in the log.
pub async fn deliver_webhook(
    transport: &dyn WebhookTransport,
    url: &str,
    request: &WebhookRequest,
    retry: &RetryPolicy,
) -> DeliveryLog {
    let max_attempts = retry.max_attempts.max(1);
    let mut attempts = Vec::new();
    let mut outcome = DeliveryOutcome::GaveUp;
    for attempt in 1..=max_attempts {
        let at = chrono::Utc::now();
        let answer = transport.post(url, &request.headers, &request.body).await;
        let (status, error) = match answer {
            Ok(status) => (Some(status), None),
            Err(error) => (None, Some(error.to_string())),
        };
        let finished = match status {
            Some(code) if (200..300).contains(&code) => {
                Some(DeliveryOutcome::Delivered { status: code })
            }
            Some(code) if !is_retryable_status(code) => {
                Some(DeliveryOutcome::Rejected { status: code })
            }
            _ => None,
        };
        let backoff =
            (finished.is_none() && attempt < max_attempts).then(|| retry.backoff(attempt));
        attempts.push(DeliveryAttempt {
            attempt,
            at,
            status,
            error,
            backoff_ms: backoff.map(|wait| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
        });
        if let Some(done) = finished {
            outcome = done;
            break;
        }
        match backoff {
            Some(wait) => {
                tracing::warn!(delivery_id = %request.delivery_id, attempt, ?status, "webhook delivery failed; retrying");
                transport.sleep(wait).await;
            }
            None => {
                tracing::warn!(delivery_id = %request.delivery_id, attempt, "webhook delivery gave up")
            }
        }
    }
    DeliveryLog {
        delivery_id: request.delivery_id.clone(),
        url: url.to_string(),
        attempts,
        outcome,
    }
}

#[cfg(test)]
#[path = "webhook_test.rs"]
mod tests;
