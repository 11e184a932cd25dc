//! Finding the test Redis, cleaning up after a test, and running a private
//! `redis-server` for the restart test.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use copyhound_core::test_services;

/// Returns the test Redis URL; `None` (skip) when unset, a panic on CI.
pub fn redis_url(test: &str) -> Option<String> {
    test_services::service_url(test_services::REDIS_URL, test)
}

/// Returns a key prefix no other test run uses.
pub fn unique_prefix() -> String {
    format!("copyhound:test:queue:{}:", uuid::Uuid::now_v7().simple())
}

/// Deletes the keys of a test when dropped, even when the test panicked; on a
/// cluster through a cluster connection (the keys share one slot).
pub struct KeyCleanup {
    pub url: String,
    pub keys: Vec<String>,
    pub cluster: bool,
}

impl Drop for KeyCleanup {
    fn drop(&mut self) {
        let delete = redis::cmd("DEL").arg(&self.keys).clone();
        let deleted = if self.cluster {
            redis::cluster::ClusterClient::new(vec![self.url.as_str()])
                .and_then(|client| client.get_connection())
                .and_then(|mut connection| delete.query::<u64>(&mut connection))
        } else {
            redis::Client::open(self.url.as_str())
                .and_then(|client| client.get_connection())
                .and_then(|mut connection| delete.query::<u64>(&mut connection))
        };
        if let Err(error) = deleted {
            eprintln!("failed to delete test keys {:?}: {error}", self.keys);
        }
    }
}

/// A `redis-server` child process, killed when dropped.
pub struct RedisServer {
    child: Child,
}

impl RedisServer {
    pub fn start(port: u16, dir: &Path) -> Self {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args([
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--daemonize",
                "no",
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs");
        let server = Self { child };
        wait_for_ping(port);
        server
    }

    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for_ping(port: u16) {
    let url = format!("redis://127.0.0.1:{port}");
    for _ in 0..100 {
        let pong = redis::Client::open(url.as_str())
            .and_then(|client| client.get_connection())
            .and_then(|mut connection| redis::cmd("PING").query::<String>(&mut connection));
        if pong.is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("redis-server on port {port} did not answer");
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn redis_server_available() -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok();
    if !found {
        let on_ci = std::env::var("CI").is_ok_and(|value| value == "true");
        assert!(
            !on_ci,
            "redis-server is not installed but CI=true: run deploy/dev/services.sh start"
        );
        eprintln!("skipping the redis restart test: redis-server is not installed");
    }
    found
}
