//! The one rule for tests that need a real Redis or MongoDB-compatible server:
//! the URL comes from `COPYHOUND_TEST_*_URL` (set by `deploy/dev/services.sh
//! start`); without it a test skips with a note, except under `CI=true`, where a
//! missing service is a failure, never a silent skip.

/// The test Redis URL variable.
pub const REDIS_URL: &str = "COPYHOUND_TEST_REDIS_URL";
/// The test Redis Cluster variable: the URL of one node of a running cluster.
pub const REDIS_CLUSTER_URL: &str = "COPYHOUND_TEST_REDIS_CLUSTER_URL";
/// The test MongoDB-compatible server URL variable.
pub const MONGODB_URL: &str = "COPYHOUND_TEST_MONGODB_URL";
/// The test SMTP sink (`smtp://127.0.0.1:PORT`); it delivers into the
/// Maildir named by `COPYHOUND_TEST_SMTP_MAILDIR`.
pub const SMTP_URL: &str = "COPYHOUND_TEST_SMTP_URL";

/// Returns the URL in `variable`, or `None` after a skip note naming `test`.
///
/// # Panics
/// When the variable is unset or empty and `CI=true`.
pub fn service_url(variable: &str, test: &str) -> Option<String> {
    if let Ok(url) = std::env::var(variable)
        && !url.is_empty()
    {
        return Some(url);
    }
    let on_ci = std::env::var("CI").is_ok_and(|value| value == "true");
    assert!(
        !on_ci,
        "{variable} is not set but CI=true: start the test services with \
         `eval \"$(deploy/dev/services.sh start)\"` before `cargo test`"
    );
    eprintln!("skipping {test}: {variable} is not set (eval \"$(deploy/dev/services.sh start)\")");
    None
}
