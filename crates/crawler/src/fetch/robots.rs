//! robots.txt rules, fetched once per origin and cached. A missing robots.txt
//! (4xx) allows everything; one that cannot be fetched (5xx, timeout, refused
//! connection, refused address) forbids everything for a short while, as the
//! major crawlers do: an unreachable robots.txt is no permission. The reason is
//! kept, so a page refused for it fails with that reason (`robots_unreachable`,
//! `private_address`) instead of passing for a deliberate `Disallow`.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use copyhound_core::{Error, ErrorKind};
use texting_robots::Robot;
use tokio::time::Instant;

/// How long fetched rules are trusted.
pub(crate) const RULES_TTL: Duration = Duration::from_secs(3600);
/// How long "unreachable: disallow all" is kept before asking again.
pub(crate) const UNREACHABLE_TTL: Duration = Duration::from_secs(60);
/// Largest robots.txt read; Google reads 500 KiB.
pub(crate) const MAX_ROBOTS_BYTES: usize = 512 * 1024;
/// Longest Crawl-delay honoured; a larger one would stall a run.
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);

/// The rules of one origin.
pub(crate) enum RobotsRules {
    /// No robots.txt.
    AllowAll,
    /// robots.txt unreachable: nothing may be fetched, for this reason.
    Unreachable {
        /// `Blocked` when the address policy refused the origin, else `Transient`.
        kind: ErrorKind,
        /// What went wrong, without the page URL.
        reason: String,
    },
    /// Parsed rules.
    Parsed(Box<Robot>),
}

impl fmt::Debug for RobotsRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RobotsRules::AllowAll => f.write_str("AllowAll"),
            RobotsRules::Unreachable { reason, .. } => write!(f, "Unreachable({reason})"),
            RobotsRules::Parsed(robot) => write!(f, "Parsed(delay={:?})", robot.delay),
        }
    }
}

impl RobotsRules {
    /// Parses a robots.txt body for `agent`; unparsable files allow everything.
    pub(crate) fn parse(agent: &str, body: &[u8]) -> Self {
        match Robot::new(agent, body) {
            Ok(robot) => RobotsRules::Parsed(Box::new(robot)),
            Err(_) => RobotsRules::AllowAll,
        }
    }

    /// Returns the rules of an origin whose robots.txt could not be read
    /// because of `error`.
    pub(crate) fn unreachable(error: &Error) -> Self {
        if error.kind() == ErrorKind::Blocked {
            return RobotsRules::Unreachable {
                kind: ErrorKind::Blocked,
                reason: error.message().to_string(),
            };
        }
        RobotsRules::Unreachable {
            kind: ErrorKind::Transient,
            reason: format!("robots.txt unreachable: {}", error.message()),
        }
    }

    /// Returns whether `url` may be fetched.
    pub(crate) fn allows(&self, url: &str) -> bool {
        match self {
            RobotsRules::AllowAll => true,
            RobotsRules::Unreachable { .. } => false,
            RobotsRules::Parsed(robot) => robot.allowed(url),
        }
    }

    /// Returns why `url` may not be fetched, or `None` if it may.
    pub(crate) fn refusal(&self, url: &str) -> Option<Error> {
        match self {
            RobotsRules::Unreachable { kind, reason } => Some(Error::new(*kind, reason.clone())),
            _ if self.allows(url) => None,
            _ => Some(Error::new(
                ErrorKind::Blocked,
                format!("robots.txt disallows `{url}`"),
            )),
        }
    }

    /// Returns the Crawl-delay, capped.
    pub(crate) fn crawl_delay(&self) -> Duration {
        match self {
            RobotsRules::Parsed(robot) => robot
                .delay
                .filter(|delay| delay.is_finite() && *delay > 0.0)
                .map_or(Duration::ZERO, |delay| {
                    Duration::from_secs_f32(delay).min(MAX_CRAWL_DELAY)
                }),
            _ => Duration::ZERO,
        }
    }

    fn ttl(&self) -> Duration {
        match self {
            RobotsRules::Unreachable { .. } => UNREACHABLE_TTL,
            _ => RULES_TTL,
        }
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<(Instant, Arc<RobotsRules>)>>>;

/// Rules per origin. One fetch per origin at a time: concurrent requests for
/// the same origin wait for the first one's answer.
#[derive(Debug, Default)]
pub(crate) struct RobotsCache {
    slots: Mutex<HashMap<String, Slot>>,
}

impl RobotsCache {
    /// Returns the cached rules of `origin`, fetching them with `fetch` when
    /// absent or stale.
    pub(crate) async fn get_or_fetch<F, Fut>(&self, origin: &str, fetch: F) -> Arc<RobotsRules>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = RobotsRules>,
    {
        let slot = {
            let mut slots = self
                .slots
                .lock()
                .expect("robots lock is never poisoned: no panics while held");
            slots.entry(origin.to_string()).or_default().clone()
        };
        let mut entry = slot.lock().await;
        if let Some((fetched_at, rules)) = entry.as_ref()
            && fetched_at.elapsed() < rules.ttl()
        {
            return rules.clone();
        }
        let rules = Arc::new(fetch().await);
        *entry = Some((Instant::now(), rules.clone()));
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_follow_the_agent_group() {
        let body = b"User-agent: *\nDisallow: /modules/\nCrawl-delay: 2\n\nUser-agent: Baiduspider\nAllow: /\n";
        let rules = RobotsRules::parse("CopyHound", body);
        assert!(rules.allows("http://127.0.0.1:8001/book/1.html"));
        assert!(!rules.allows("http://127.0.0.1:8001/modules/book/1.html"));
        assert_eq!(rules.crawl_delay(), Duration::from_secs(2));
        assert!(
            rules
                .refusal("http://127.0.0.1:8001/modules/book/1.html")
                .is_some_and(|error| error.kind() == ErrorKind::Blocked)
        );
        assert!(rules.refusal("http://127.0.0.1:8001/book/1.html").is_none());
    }

    #[test]
    fn unreachable_rules_keep_the_reason() {
        let refused = Error::new(ErrorKind::Transient, "fetching `x`: connection refused");
        let rules = RobotsRules::unreachable(&refused);
        assert!(!rules.allows("http://a/"));
        let error = rules.refusal("http://a/b.html").unwrap();
        assert_eq!(error.kind(), ErrorKind::Transient);
        assert!(error.message().starts_with("robots.txt unreachable"));
        assert!(error.message().contains("connection refused"));
        let policy = Error::new(
            ErrorKind::Blocked,
            "address policy: `x` resolves to a private address",
        );
        let error = RobotsRules::unreachable(&policy)
            .refusal("http://a/")
            .unwrap();
        assert_eq!(error.kind(), ErrorKind::Blocked);
        assert!(error.message().starts_with("address policy"));
    }

    #[tokio::test]
    async fn one_fetch_per_origin() {
        let cache = RobotsCache::default();
        let first = cache
            .get_or_fetch("http://a:80", || async {
                RobotsRules::unreachable(&Error::new(ErrorKind::Timeout, "timed out"))
            })
            .await;
        let second = cache
            .get_or_fetch("http://a:80", || async { RobotsRules::AllowAll })
            .await;
        assert!(Arc::ptr_eq(&first, &second));
    }
}
