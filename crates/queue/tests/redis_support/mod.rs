//! Finding the test Redis, and cleaning up after a test.

/// Returns the test Redis URL; `None` (skip) when unset, a panic on CI.
pub fn redis_url(test: &str) -> Option<String> {
    if let Ok(url) = std::env::var("COPYHOUND_TEST_REDIS_URL") {
        return Some(url);
    }
    let on_ci = std::env::var("CI").is_ok_and(|value| value == "true");
    assert!(
        !on_ci,
        "COPYHOUND_TEST_REDIS_URL is not set but CI=true: start Redis with \
         `eval \"$(deploy/dev/services.sh start)\"` before `cargo test`"
    );
    eprintln!("skipping {test}: COPYHOUND_TEST_REDIS_URL is not set (eval \"$(deploy/dev/services.sh start)\")");
    None
}

/// Returns a key prefix no other test run uses.
pub fn unique_prefix() -> String {
    format!("copyhound:test:queue:{}:", uuid::Uuid::now_v7().simple())
}

/// Deletes the keys of a test when dropped, even when the test panicked.
pub struct KeyCleanup {
    pub url: String,
    pub keys: Vec<String>,
}

impl Drop for KeyCleanup {
    fn drop(&mut self) {
        let deleted = redis::Client::open(self.url.as_str())
            .and_then(|client| client.get_connection())
            .and_then(|mut connection| redis::cmd("DEL").arg(&self.keys).query::<u64>(&mut connection));
        if let Err(error) = deleted {
            eprintln!("failed to delete test keys {:?}: {error}", self.keys);
        }
    }
}
