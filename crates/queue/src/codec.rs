//! What both backends share: the stored form of a task, delivery handles, the
//! retry schedule and the clock. Keeping these in one place is what makes the
//! two backends agree on attempts and backoff, which the conformance suite checks.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use copyhound_core::model::{Persisted, Task, Timestamp};
use copyhound_core::ports::AckId;
use copyhound_core::{Error, ErrorKind, Result};

/// Longest retry delay, whatever the attempt number: exponential backoff past
/// this point only delays work without protecting anything.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(3_600);

/// Returns the stored JSON of a task (with its schema version).
pub fn encode_task(task: &Task) -> Result<String> {
    let document = task.to_document()?;
    serde_json::to_string(&document)
        .map_err(|error| Error::with_source(ErrorKind::Internal, "failed to encode task", error))
}

/// Decodes a task stored by [`encode_task`] (or by an older build).
pub fn decode_task(stored: &str) -> Result<Task> {
    let document: serde_json::Value = serde_json::from_str(stored).map_err(|error| {
        Error::with_source(ErrorKind::Corrupt, "stored task is not json", error)
    })?;
    Task::from_document(document)
}

/// Returns the delay before the retry that follows failed delivery number
/// `attempt` (1-based): `base * 2^(attempt - 1)`, capped at [`MAX_RETRY_DELAY`].
pub fn retry_delay(base: Duration, attempt: u32) -> Duration {
    copyhound_core::backoff::Backoff::new(base, MAX_RETRY_DELAY).delay(attempt)
}

/// Returns the retry delays of attempts `1..=max_attempts`, in milliseconds.
pub fn retry_schedule_ms(base: Duration, max_attempts: u32) -> Vec<u64> {
    (1..=max_attempts.max(1))
        .map(|attempt| duration_ms(retry_delay(base, attempt)))
        .collect()
}

/// Returns a duration in whole milliseconds, saturating.
pub fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Returns the wall clock in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    duration_ms(since_epoch)
}

/// Returns the timestamp of `ms` milliseconds since the Unix epoch.
pub fn timestamp_from_ms(ms: u64) -> Timestamp {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// A delivery handle: which stored entry, and which delivery of it. The
/// delivery number lets `extend` and `fail` recognise a stale handle (the task
/// was re-delivered to someone else in the meantime).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The backend's id of the stored entry.
    pub entry: String,
    /// The backend's delivery counter when this delivery was made.
    pub delivery: u64,
}

impl Delivery {
    /// Returns the opaque handle given to workers.
    pub fn to_ack_id(&self) -> AckId {
        AckId(format!("{}/{}", self.entry, self.delivery))
    }

    /// Parses a handle made by [`Delivery::to_ack_id`].
    pub fn parse(ack_id: &AckId) -> Result<Self> {
        let malformed = || {
            Error::invalid(format!(
                "ack id `{}` is not a delivery of this queue",
                ack_id.0
            ))
        };
        let (entry, delivery) = ack_id.0.rsplit_once('/').ok_or_else(malformed)?;
        if entry.is_empty() {
            return Err(malformed());
        }
        let delivery = delivery.parse::<u64>().map_err(|_| malformed())?;
        Ok(Self {
            entry: entry.to_string(),
            delivery,
        })
    }
}

/// Returns the error answered when a delivery handle no longer holds its task.
pub fn lost_delivery(ack_id: &AckId) -> Error {
    Error::not_found(format!(
        "delivery `{}` (acknowledged, failed or re-delivered)",
        ack_id.0
    ))
}

#[cfg(test)]
mod tests {
    use copyhound_core::model::TaskKind;

    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_millis(100);
        assert_eq!(retry_delay(base, 1), Duration::from_millis(100));
        assert_eq!(retry_delay(base, 2), Duration::from_millis(200));
        assert_eq!(retry_delay(base, 4), Duration::from_millis(800));
        assert_eq!(retry_delay(base, 200), MAX_RETRY_DELAY);
        assert_eq!(retry_schedule_ms(base, 3), vec![100, 200, 400]);
    }

    #[test]
    fn ack_ids_round_trip_and_reject_garbage() {
        let delivery = Delivery {
            entry: "1700000000000-0".into(),
            delivery: 3,
        };
        assert_eq!(Delivery::parse(&delivery.to_ack_id()).unwrap(), delivery);
        for bad in ["", "abc", "/3", "12-0/x"] {
            let error = Delivery::parse(&AckId(bad.into())).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}");
        }
    }

    #[test]
    fn tasks_round_trip_with_a_schema_version() {
        let task = Task::new(
            TaskKind::FingerprintWork {
                work_id: "w1".parse().unwrap(),
            },
            chrono::Utc::now(),
        );
        let stored = encode_task(&task).unwrap();
        assert!(stored.contains("schema_version"));
        assert_eq!(decode_task(&stored).unwrap(), task);
        assert_eq!(decode_task("{").unwrap_err().kind(), ErrorKind::Corrupt);
    }
}
