//! Per-host politeness: at most one request per interval per host key, the
//! slots handed out in order. The reservation is taken under a short lock and
//! the wait happens outside it, so hosts never wait on each other.
//!
//! A pacer on the task queue reserves its turns there, so the interval holds
//! across every crawler process on that queue, not only within one: two
//! workers crawling one host keep its rate between them. If the queue does
//! not answer, the pacer paces this process alone rather than stop crawling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use copyhound_core::ports::TaskQueue;
use tokio::time::Instant;

/// Hands out request slots per host, `interval` apart.
#[derive(Debug, Default)]
pub struct HostPacer {
    next_slot: Mutex<HashMap<String, Instant>>,
    /// The queue whose turns every process shares, with this pacer's key prefix.
    shared: Option<(Arc<dyn TaskQueue>, &'static str)>,
}

impl HostPacer {
    /// Returns an empty pacer for this process alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns a pacer whose turns are reserved on `queue` under `purpose`
    /// (pacers with different purposes pace independently).
    pub fn shared(queue: Arc<dyn TaskQueue>, purpose: &'static str) -> Self {
        Self {
            next_slot: Mutex::default(),
            shared: Some((queue, purpose)),
        }
    }

    /// Waits for the next slot of `host_key`; a zero interval never waits.
    pub async fn wait(&self, host_key: &str, interval: Duration) {
        if interval.is_zero() {
            return;
        }
        if let Some((queue, purpose)) = &self.shared {
            match queue
                .reserve_turn(&format!("{purpose}/{host_key}"), interval)
                .await
            {
                Ok(wait) => {
                    tokio::time::sleep(wait).await;
                    return;
                }
                Err(error) => tracing::warn!(
                    host = host_key,
                    %error,
                    "shared pacing unavailable; pacing this process alone"
                ),
            }
        }
        let slot = {
            let mut slots = self
                .next_slot
                .lock()
                .expect("pacer lock is never poisoned: no panics while held");
            let now = Instant::now();
            let slot = slots.get(host_key).copied().unwrap_or(now).max(now);
            slots.insert(host_key.to_string(), slot + interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }
}

/// Fetches a resource that is not a page (a style sheet, a sitemap, a rendered
/// page's script or data) after waiting for its host's turn: every request of
/// a crawl keeps the site's pace.
pub(crate) async fn fetch_paced(
    fetcher: &dyn copyhound_core::ports::Fetcher,
    pacer: &HostPacer,
    interval: Duration,
    url: &str,
    resource: copyhound_core::ports::Resource,
) -> copyhound_core::Result<copyhound_core::ports::FetchedPage> {
    let parsed = url::Url::parse(url)
        .map_err(|_| copyhound_core::Error::invalid(format!("bad url `{url}`")))?;
    pacer
        .wait(&crate::urls::origin_key(&parsed), interval)
        .await;
    let request = copyhound_core::ports::FetchRequest {
        url: url.to_string(),
        etag: None,
        last_modified: None,
        resource,
    };
    fetcher.fetch(&request).await
}

/// Returns the interval between requests for a rate in requests per second
/// (0 or less: no limit).
pub fn interval_for_rate(requests_per_second: f64) -> Duration {
    if requests_per_second > 0.0 && requests_per_second.is_finite() {
        // A rate stored before its floor existed (or 1e-320) waits at most this.
        Duration::try_from_secs_f64(1.0 / requests_per_second)
            .unwrap_or(MAX_INTERVAL)
            .min(MAX_INTERVAL)
    } else {
        Duration::ZERO
    }
}

/// Longest pause between two requests to one host, whatever the site's rate.
pub const MAX_INTERVAL: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_rates_wait_a_minute_at_most_and_never_panic() {
        for rate in [1e-320, f64::MIN_POSITIVE, 1e-4, 1.0 / 600.0] {
            assert_eq!(interval_for_rate(rate), MAX_INTERVAL, "{rate}");
        }
        assert_eq!(interval_for_rate(2.0), Duration::from_millis(500));
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(interval_for_rate(rate), Duration::ZERO, "{rate}");
        }
    }

    #[tokio::test]
    async fn slots_are_spaced_per_host() {
        let pacer = HostPacer::new();
        let start = Instant::now();
        for _ in 0..3 {
            pacer.wait("a", Duration::from_millis(30)).await;
        }
        pacer.wait("b", Duration::from_millis(30)).await;
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(60) && elapsed < Duration::from_millis(90),
            "{elapsed:?}"
        );
        assert_eq!(interval_for_rate(4.0), Duration::from_millis(250));
        assert_eq!(interval_for_rate(0.0), Duration::ZERO);
    }
}
