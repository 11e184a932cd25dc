//! One error type for every port, with a small closed set of kinds. Callers branch
//! on the kind (retry when `is_retryable`, 404 on `NotFound`), never on message
//! text; the stable code of a kind is what the API and the task log expose, so it
//! must never change once released.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What went wrong, independent of the backend that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The addressed thing does not exist (or belongs to another tenant).
    NotFound,
    /// A write conflicts with existing state (unique key, stale version).
    Conflict,
    /// The input is malformed or violates a rule; retrying will not help.
    InvalidInput,
    /// The caller is not authenticated.
    Unauthorized,
    /// The caller may not do this.
    Forbidden,
    /// The input exceeds a configured limit.
    TooLarge,
    /// A backend is down or restarting; retry with backoff.
    Unavailable,
    /// An operation took longer than allowed; retry with backoff.
    Timeout,
    /// A remote site refused or failed transiently (HTTP 5xx, reset); retry later.
    Transient,
    /// A crawl rule forbids it (robots.txt, private address, denied pattern).
    Blocked,
    /// Stored data cannot be decoded (unknown schema version, corrupt bytes).
    Corrupt,
    /// Configuration is invalid.
    Config,
    /// A bug or an unexpected state.
    Internal,
}

impl ErrorKind {
    /// Every kind, for documentation and tests.
    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::NotFound,
        ErrorKind::Conflict,
        ErrorKind::InvalidInput,
        ErrorKind::Unauthorized,
        ErrorKind::Forbidden,
        ErrorKind::TooLarge,
        ErrorKind::Unavailable,
        ErrorKind::Timeout,
        ErrorKind::Transient,
        ErrorKind::Blocked,
        ErrorKind::Corrupt,
        ErrorKind::Config,
        ErrorKind::Internal,
    ];

    /// Returns the stable code of this kind (API responses, task logs).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Transient => "transient",
            ErrorKind::Blocked => "blocked",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Config => "config",
            ErrorKind::Internal => "internal",
        }
    }

    /// Returns whether retrying the same operation later may succeed.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::Unavailable | ErrorKind::Timeout | ErrorKind::Transient
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// An error of a port or of core logic: a kind, a lowercase message and an optional cause.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// Returns an error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Returns an error of `kind` with `message`, caused by `source`.
    pub fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            kind,
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// Returns a `NotFound` error naming what was missing.
    pub fn not_found(what: impl fmt::Display) -> Self {
        Self::new(ErrorKind::NotFound, format!("{what} not found"))
    }

    /// Returns an `InvalidInput` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Returns an `Unavailable` (retryable) error.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// Returns an `Internal` error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Returns the kind callers branch on.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Returns the stable code of the kind.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// Returns whether retrying later may succeed.
    pub fn is_retryable(&self) -> bool {
        self.kind.is_retryable()
    }

    /// Returns the message without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Result of core and port operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_unique() {
        let codes: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.code()).collect();
        assert_eq!(
            codes,
            [
                "not_found",
                "conflict",
                "invalid_input",
                "unauthorized",
                "forbidden",
                "too_large",
                "unavailable",
                "timeout",
                "transient",
                "blocked",
                "corrupt",
                "config",
                "internal"
            ]
        );
        for kind in ErrorKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.code()));
        }
    }

    #[test]
    fn only_backend_and_network_failures_are_retryable() {
        let retryable: Vec<ErrorKind> = ErrorKind::ALL
            .into_iter()
            .filter(|kind| kind.is_retryable())
            .collect();
        assert_eq!(
            retryable,
            [
                ErrorKind::Unavailable,
                ErrorKind::Timeout,
                ErrorKind::Transient
            ]
        );
    }
}
