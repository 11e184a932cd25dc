//! What happened to each page, folded into the run's counters. Reasons are
//! stable snake_case codes (operators filter on them): the error kind's code,
//! refined where one kind covers several causes (`robots`, `private_address`,
//! `content_type`, `redirect_loop`, `binary`).

use copyhound_core::model::{CrawlCounters, CrawlRun};
use copyhound_core::ports::PageUpsert;
use copyhound_core::{Error, ErrorKind};

/// Errors kept on a run for operators.
pub const MAX_RECENT_ERRORS: usize = 20;

/// What happened to one fetched document (a page or a part of one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageOutcome {
    /// Fetched and stored.
    Stored {
        /// What the store did.
        upsert: PageUpsert,
        /// Body bytes received.
        bytes: u64,
        /// Whether a fingerprint task was enqueued.
        fingerprinted: bool,
    },
    /// The server answered 304: the stored copy is current.
    NotModified,
    /// Not fetched by rule (robots.txt, address policy, content type).
    Skipped {
        /// Stable reason code.
        reason: String,
    },
    /// Fetching or storing failed.
    Failed {
        /// Stable reason code.
        reason: String,
        /// Human-readable detail.
        message: String,
    },
}

impl PageOutcome {
    /// Returns the outcome of a failed fetch or store, classified by reason.
    pub fn from_error(error: &Error) -> Self {
        let message = error.message().to_string();
        let reason = reason_of(error).to_string();
        if error.kind() == ErrorKind::Blocked {
            PageOutcome::Skipped { reason }
        } else {
            PageOutcome::Failed { reason, message }
        }
    }
}

/// Returns the stable reason code of an error.
pub fn reason_of(error: &Error) -> &'static str {
    let message = error.message();
    match error.kind() {
        ErrorKind::Blocked if message.starts_with("robots") => "robots",
        ErrorKind::Blocked
            if message.starts_with("address policy") || message.contains("address policy") =>
        {
            "private_address"
        }
        ErrorKind::Blocked if message.starts_with("content type") => "content_type",
        ErrorKind::InvalidInput if message.starts_with("redirect loop") => "redirect_loop",
        ErrorKind::InvalidInput if message.starts_with("more than") => "too_many_redirects",
        ErrorKind::InvalidInput if message.starts_with("binary") => "binary",
        kind => kind.code(),
    }
}

/// Folds an outcome into a run's counters and recent errors.
pub fn record(run: &mut CrawlRun, url: &str, outcome: &PageOutcome) {
    let counters: &mut CrawlCounters = &mut run.counters;
    match outcome {
        PageOutcome::Stored { upsert, bytes, .. } => {
            counters.fetched += 1;
            counters.bytes += bytes;
            match upsert {
                PageUpsert::New => counters.new_pages += 1,
                PageUpsert::Changed => counters.changed_pages += 1,
                PageUpsert::Unchanged => {}
            }
        }
        PageOutcome::NotModified => {
            *counters.skipped.entry("not_modified".into()).or_default() += 1
        }
        PageOutcome::Skipped { reason } => {
            *counters.skipped.entry(reason.clone()).or_default() += 1
        }
        PageOutcome::Failed { reason, message } => {
            *counters.failed.entry(reason.clone()).or_default() += 1;
            if run.recent_errors.len() >= MAX_RECENT_ERRORS {
                run.recent_errors.remove(0);
            }
            run.recent_errors
                .push(format!("{url}: {reason}: {message}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_refine_kinds() {
        let robots = Error::new(ErrorKind::Blocked, "robots.txt disallows `x`");
        assert_eq!(
            PageOutcome::from_error(&robots),
            PageOutcome::Skipped {
                reason: "robots".into()
            }
        );
        assert_eq!(
            reason_of(&Error::invalid("redirect loop at `x`")),
            "redirect_loop"
        );
        assert_eq!(
            reason_of(&Error::new(ErrorKind::Timeout, "slow")),
            "timeout"
        );
        assert_eq!(
            reason_of(&Error::new(
                ErrorKind::Blocked,
                "content type `image/png` of `x` is not text"
            )),
            "content_type"
        );
    }
}
