//! The product under test: `copyhound` child processes on a namespace of
//! their own (the embedded default: one `serve`, which runs the workers and
//! the schedulers; configured MongoDB + Redis: `serve`, `scheduler` and
//! worker processes), and a small HTTP client of its API.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use copyhound_core::config::Config;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::args::EvalBackends;
use crate::pipeline::{child, child_env, process_seconds};

/// The publisher the bench registers.
pub const PUBLISHER: &str = "latency-pub";

/// The running product; its processes are stopped on drop.
#[derive(Debug)]
pub struct Product {
    /// `127.0.0.1:<port>` of the API.
    pub api: String,
    /// The operator key.
    pub admin_key: String,
    /// Whether this build takes `alert_on = "detected"` (alerts on every
    /// newly detected match); without it alerts wait for confirmations.
    pub alert_on_detected: bool,
    children: Vec<(String, Child)>,
    _scratch: tempfile::TempDir,
}

impl Product {
    /// Starts the product on a scratch namespace, its alerts going to `webhook_url`.
    pub async fn start(
        config: &Config,
        backends: EvalBackends,
        workers: usize,
        webhook_url: &str,
        burst_minutes: u64,
    ) -> anyhow::Result<Self> {
        let mut run = config.clone();
        if backends == EvalBackends::Embedded {
            run.store.url = None;
            run.index.url = None;
            run.queue.url = None;
        } else if config.uses_embedded_backends() {
            bail!(
                "--backends configured needs store.url, index.url and queue.url (MongoDB and Redis)"
            );
        }
        let (run, scratch) = crate::eval::scratch_namespace(run, "latency")?;
        let port = free_port()?;
        let api = format!("127.0.0.1:{port}");
        let admin_key = format!("latency-operator-{}", std::process::id());
        let mut env: Vec<(String, String)> = (*child_env(&run)).clone();
        let config_file = scratch.path().join("copyhound.toml");
        env.extend(
            [
                ("COPYHOUND_CONFIG", config_file.display().to_string()),
                ("COPYHOUND_SERVER_LISTEN", api.clone()),
                ("COPYHOUND_SERVER_ADMIN_KEY", admin_key.clone()),
                ("COPYHOUND_REPORTS_TICK_SECONDS", "5".into()),
                // One publisher: nobody to share the crawl slots with.
                ("COPYHOUND_CRAWLER_MAX_CRAWLS_PER_PUBLISHER", "0".into()),
            ]
            .into_iter()
            .map(|(name, value)| (name.to_string(), value)),
        );
        let embedded = backends == EvalBackends::Embedded;
        let command = |args: &[&str]| {
            let mut command = child(&env, args);
            if embedded {
                for name in [
                    "COPYHOUND_STORE_URL",
                    "COPYHOUND_INDEX_URL",
                    "COPYHOUND_QUEUE_URL",
                ] {
                    command.env_remove(name);
                }
            }
            command
        };
        // With `alert_on` first; a build that does not know it refuses the key.
        std::fs::write(&config_file, config_text(webhook_url, burst_minutes, true))?;
        let check = command(&["config", "check"])
            .output()
            .context("cannot run copyhound config check")?;
        let alert_on_detected = check.status.success();
        if !alert_on_detected {
            let stderr = String::from_utf8_lossy(&check.stderr);
            anyhow::ensure!(
                stderr.contains("alert_on"),
                "the product refuses the bench's configuration: {stderr}"
            );
            std::fs::write(&config_file, config_text(webhook_url, burst_minutes, false))?;
        }
        let mut product = Self {
            api,
            admin_key,
            alert_on_detected,
            children: Vec::new(),
            _scratch: scratch,
        };
        let logs = product._scratch.path().to_path_buf();
        product.spawn(
            "serve",
            command(&["serve"]).env("COPYHOUND_STORE_MIGRATE_ON_START", "true"),
            &logs,
        )?;
        product.wait_healthy(Duration::from_secs(120)).await?;
        if !embedded {
            product.spawn("scheduler", &mut command(&["scheduler"]), &logs)?;
            for index in 0..workers.max(1) {
                product.spawn(&format!("worker{index}"), &mut command(&["worker"]), &logs)?;
            }
        }
        Ok(product)
    }

    fn spawn(
        &mut self,
        role: &str,
        command: &mut std::process::Command,
        logs: &Path,
    ) -> anyhow::Result<()> {
        let log = std::fs::File::create(logs.join(format!("{role}.log")))?;
        let process = command
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start copyhound {role}"))?;
        self.children.push((role.to_string(), process));
        Ok(())
    }

    async fn wait_healthy(&mut self, limit: Duration) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if let Ok((200, _)) = http(&self.api, "GET", "/health", None, None).await {
                return Ok(());
            }
            for (role, process) in &mut self.children {
                if let Some(status) = process.try_wait()? {
                    bail!("copyhound {role} exited at start ({status}); see its log");
                }
            }
            if started.elapsed() > limit {
                bail!("copyhound serve did not answer /health within {limit:?}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Fails if a process of the product has exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        for (role, process) in &mut self.children {
            if let Some(status) = process.try_wait()? {
                let log = self._scratch.path().join(format!("{role}.log"));
                let tail: String = std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n");
                bail!("copyhound {role} exited ({status}): {tail}");
            }
        }
        Ok(())
    }

    /// CPU seconds of the product's processes so far.
    pub fn cpu_seconds(&self) -> f64 {
        self.children
            .iter()
            .map(|(_, process)| process_seconds(process.id()))
            .sum()
    }

    /// The roles of the running processes.
    pub fn roles(&self) -> Vec<String> {
        self.children.iter().map(|(role, _)| role.clone()).collect()
    }

    /// An API client with `key`.
    pub fn client(&self, key: &str) -> Api {
        Api {
            addr: self.api.clone(),
            key: key.to_string(),
        }
    }
}

impl Drop for Product {
    fn drop(&mut self) {
        for (_, process) in &self.children {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &process.id().to_string()])
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        for (_, process) in &mut self.children {
            while matches!(process.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if matches!(process.try_wait(), Ok(None)) {
                let _ = process.kill();
            }
            let _ = process.wait();
        }
    }
}

fn config_text(webhook_url: &str, burst_minutes: u64, alert_on: bool) -> String {
    format!(
        "# Written by copyhound bench latency.\n\
         [crawler]\n\
         allow_private_addresses = true\n\
         burst_minutes = {burst_minutes}\n\n\
         [reports]\n\
         tick_seconds = 5\n\n\
         [[reports.alerts]]\n\
         publisher = \"{PUBLISHER}\"\n\
         webhook_url = \"{webhook_url}\"\n\
         secret = \"latency-bench-secret\"\n\
         threshold_new_confirmed = 1\n{}",
        if alert_on {
            "alert_on = \"detected\"\n"
        } else {
            ""
        }
    )
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// A client of the API with one key.
#[derive(Clone, Debug)]
pub struct Api {
    addr: String,
    key: String,
}

impl Api {
    /// `method path` with an optional JSON body; the answer's JSON, or an
    /// error naming the status and body when it is not 2xx.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let (status, answer) = http(&self.addr, method, path, Some(&self.key), body).await?;
        if !(200..300).contains(&status) {
            bail!("{method} {path}: {status} {answer}");
        }
        Ok(answer)
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`); the
/// status and the body parsed as JSON (`Value::String` of the text when it
/// is not JSON).
pub async fn http(
    addr: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> anyhow::Result<(u16, Value)> {
    let payload = body
        .map(serde_json::to_vec)
        .transpose()?
        .unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(key) = key {
        request.push_str(&format!("Authorization: Bearer {key}\r\n"));
    }
    if body.is_some() {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", payload.len()));
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(request.as_bytes()).await?;
        stream.write_all(&payload).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        anyhow::Ok(answer)
    };
    let answer = tokio::time::timeout(Duration::from_secs(120), exchange)
        .await
        .with_context(|| format!("{method} {path}: no answer in 120 s"))??;
    parse_response(&answer).with_context(|| format!("{method} {path}"))
}

fn parse_response(answer: &[u8]) -> anyhow::Result<(u16, Value)> {
    let split = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .context("an answer without a header end")?;
    let head = String::from_utf8_lossy(&answer[..split]);
    let mut raw = answer[split + 4..].to_vec();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .context("an answer without a status")?;
    let chunked = head.lines().any(|line| {
        let line = line.to_ascii_lowercase();
        line.starts_with("transfer-encoding:") && line.contains("chunked")
    });
    if chunked {
        raw = dechunk(&raw)?;
    }
    let body = if raw.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&raw)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&raw).into_owned()))
    };
    Ok((status, body))
}

fn dechunk(mut raw: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|window| window == b"\r\n")
            .context("a chunk without a size line")?;
        let size_text = String::from_utf8_lossy(&raw[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .context("a bad chunk size")?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        anyhow::ensure!(raw.len() >= size, "a cut chunk");
        out.extend_from_slice(&raw[..size]);
        raw = raw.get(size + 2..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_plain_and_chunked() {
        let plain = b"HTTP/1.1 201 Created\r\ncontent-length: 8\r\n\r\n{\"a\":1}\n";
        assert_eq!(
            parse_response(plain).unwrap(),
            (201, serde_json::json!({"a": 1}))
        );
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"b\"\r\n3\r\n:2}\r\n0\r\n\r\n";
        assert_eq!(
            parse_response(chunked).unwrap(),
            (200, serde_json::json!({"b": 2}))
        );
        let text = b"HTTP/1.1 404 Not Found\r\n\r\nnope";
        assert_eq!(
            parse_response(text).unwrap(),
            (404, Value::String("nope".into()))
        );
    }
}
