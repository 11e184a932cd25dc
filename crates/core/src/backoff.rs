//! The one retry backoff: exponential, doubling from `initial`, capped at
//! `max`, no jitter (retries are spread by the queue's delivery order, and a
//! webhook or a host sees one sender).

use std::time::Duration;

/// An exponential backoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Wait after the first failure.
    pub initial: Duration,
    /// Longest wait, whatever the attempt.
    pub max: Duration,
}

impl Backoff {
    /// Returns the backoff from `initial`, capped at `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self { initial, max }
    }

    /// Returns the wait after failed attempt `attempt` (1-based):
    /// `initial * 2^(attempt - 1)`, at most `max`.
    pub fn delay(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(31);
        self.initial.saturating_mul(1u32 << exponent).min(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_the_first_failure_and_is_capped() {
        let backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        let delays: Vec<u64> = (0..=6)
            .map(|attempt| backoff.delay(attempt).as_millis() as u64)
            .collect();
        assert_eq!(delays, [100, 100, 200, 400, 800, 1_000, 1_000]);
        assert_eq!(backoff.delay(u32::MAX), Duration::from_secs(1));
        let huge = Backoff::new(Duration::from_secs(u64::MAX / 2), Duration::MAX);
        assert_eq!(huge.delay(40), Duration::MAX, "saturates, never panics");
    }
}
