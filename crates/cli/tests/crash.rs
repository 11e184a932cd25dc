//! kill -9 of the real binary on the embedded default, then a restart: nothing
//! acknowledged is lost and everything converges.
//!
//! - Mid-registration: parallel `POST /works` to `copyhound serve`, SIGKILL
//!   while they are in flight, restart. Every registration retried is
//!   answered (none `409`), and every work ends fingerprinted (none `pending`
//!   forever).
//! - Mid-crawl: works fingerprinted by a `serve` that is then SIGKILLed (the
//!   index holds them only in its log), then a `crawl` of a slow loopback site
//!   SIGKILLed halfway and run again: the matches equal those of a clean run.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{CHAPTER, PIRATED, filler, free_port};

mod support;

const ADMIN_KEY: &str = "crash-test-admin-secret";

/// One HTTP/1.1 exchange (`Connection: close`); `Err` when nothing answers.
fn http(
    port: u16,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> std::io::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let payload = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Authorization: Bearer {key}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{payload}",
        payload.len()
    );
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line in {text:?}")))?;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    Ok((status, serde_json::from_str(body).unwrap_or(Value::Null)))
}

/// The binary on one data directory, with a clean environment.
struct Env {
    cwd: PathBuf,
}

impl Env {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_copyhound"));
        command
            .current_dir(&self.cwd)
            .args(args)
            .env_remove("RUST_LOG");
        for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
            command.env_remove(name);
        }
        command
            .env("COPYHOUND_DATA_DIR", self.cwd.join("data"))
            .env("COPYHOUND_SERVER_ADMIN_KEY", ADMIN_KEY)
            .env("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true")
            .env("COPYHOUND_QUEUE_RETRY_BACKOFF_MS", "200");
        command
    }

    fn run(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        assert!(
            output.status.success(),
            "copyhound {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Starts `serve` (with its in-process workers) and waits for `/health`.
    fn serve(&self) -> Server {
        let port = free_port();
        let log = std::fs::File::create(self.cwd.join(format!("serve-{port}.log"))).unwrap();
        let child = self
            .command(&["serve"])
            .env("COPYHOUND_SERVER_LISTEN", format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(15);
        while !matches!(http(port, "GET", "/health", "", None), Ok((200, _))) {
            assert!(
                server.child.try_wait().unwrap().is_none(),
                "serve exited at start"
            );
            assert!(Instant::now() < deadline, "serve did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// SIGKILL: no shutdown path runs (no snapshot, no drain).
    fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM and wait: the clean shutdown.
    fn stop(mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(self.child.wait().unwrap().success());
    }

    fn key_for(&self, publisher: &str, create: bool) -> String {
        if create {
            let body = json!({"id": publisher, "name": publisher, "kind": "books"});
            let (status, answer) = http(
                self.port,
                "POST",
                "/api/v1/admin/publishers",
                ADMIN_KEY,
                Some(&body),
            )
            .unwrap();
            assert_eq!(status, 201, "{answer}");
        }
        let path = format!("/api/v1/admin/publishers/{publisher}/keys");
        let (status, answer) = http(self.port, "POST", &path, ADMIN_KEY, Some(&json!({}))).unwrap();
        assert_eq!(status, 201, "{answer}");
        answer["key"].as_str().unwrap().to_owned()
    }

    /// Waits until every work is fingerprinted and the queue is empty.
    fn wait_until_indexed(&self, key: &str, works: &[String]) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let pending: Vec<Value> = works
                .iter()
                .map(|id| {
                    let path = format!("/api/v1/works/{id}");
                    let (status, work) = http(self.port, "GET", &path, key, None).unwrap();
                    assert_eq!(status, 200, "{id}: {work}");
                    work["fingerprint"].clone()
                })
                .filter(|progress| progress["pending"] != 0 || progress["failed"] != 0)
                .collect();
            if pending.is_empty() && self.queue_is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "works still pending: {pending:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The `/metrics` response, headers included.
    fn metrics(&self) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }

    fn queue_is_empty(&self) -> bool {
        let text = self.metrics();
        ["queued", "in_flight", "retrying"].iter().all(|state| {
            text.lines().any(|line| {
                line.starts_with(&format!("copyhound_queue_tasks{{state=\"{state}\"}} 0"))
            })
        })
    }
}

fn registration(index: usize) -> Value {
    let seed = index as u64 * 2 + 1;
    json!({"id": format!("w_{index:02}"), "title": format!("作品{index}"), "author": "佚名",
        "chapters": [{"title": "第一章", "text": filler(1200, seed)},
                     {"title": "第二章", "text": filler(1200, seed + 1)}]})
}

#[test]
fn a_kill_during_parallel_registrations_loses_none_and_retries_are_answered() {
    const WORKS: usize = 30;
    const THREADS: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let env = Env {
        cwd: dir.path().to_path_buf(),
    };
    let server = env.serve();
    let key_a = server.key_for("pub_a", true);
    let key_b = server.key_for("pub_b", true);
    let answered = Arc::new(AtomicUsize::new(0));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let (answered, outcomes) = (Arc::clone(&answered), Arc::clone(&outcomes));
            let (port, key) = (server.port, key_a.clone());
            std::thread::spawn(move || {
                for index in (thread..WORKS).step_by(THREADS) {
                    let outcome = http(
                        port,
                        "POST",
                        "/api/v1/works",
                        &key,
                        Some(&registration(index)),
                    );
                    if matches!(outcome, Ok((201, _))) {
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                    outcomes
                        .lock()
                        .unwrap()
                        .push((index, outcome.map(|(status, _)| status).ok()));
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(15);
    while answered.load(Ordering::SeqCst) < THREADS {
        assert!(Instant::now() < deadline, "no registration was answered");
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill9();
    for thread in threads {
        thread.join().unwrap();
    }
    let outcomes = outcomes.lock().unwrap().clone();
    let lost = outcomes
        .iter()
        .filter(|(_, status)| status.is_none())
        .count();
    eprintln!(
        "before the kill: {} answered, {lost} cut off",
        outcomes.len() - lost
    );
    assert!(
        lost > 0,
        "the kill hit no registration in flight: {outcomes:?}"
    );

    // Restart; the client retries every registration, answered or not.
    let server = env.serve();
    for index in 0..WORKS {
        let (status, answer) = http(
            server.port,
            "POST",
            "/api/v1/works",
            &key_a,
            Some(&registration(index)),
        )
        .unwrap();
        assert_eq!(status, 201, "retry of w_{index:02}: {answer}");
        assert_eq!(answer["chapters"].as_array().unwrap().len(), 2);
    }
    let (status, _) = http(
        server.port,
        "POST",
        "/api/v1/works",
        &key_b,
        Some(&registration(0)),
    )
    .unwrap();
    assert_eq!(status, 409, "another publisher's id stays taken");
    let ids: Vec<String> = (0..WORKS).map(|index| format!("w_{index:02}")).collect();
    server.wait_until_indexed(&key_a, &ids);
    // The embedded databases count their commits: the store's durable, the
    // queue's acknowledgements lazy.
    let metrics = server.metrics();
    for series in [
        r#"copyhound_db_commits_total{db="store",kind="durable"}"#,
        r#"copyhound_db_commits_total{db="queue",kind="durable"}"#,
        r#"copyhound_db_commits_total{db="queue",kind="lazy"}"#,
    ] {
        assert!(
            metrics.lines().any(|line| line.starts_with(series)),
            "{series} in {metrics}"
        );
    }
    server.stop();
}

/// Writes two works (publisher N01) and a site of copies of them and filler.
fn write_set(dir: &Path) -> usize {
    let second = filler(1500, 5);
    for (work, text) in [("w1", CHAPTER), ("w2", second.as_str())] {
        let chapters = dir.join(format!("works/{work}/chapters"));
        std::fs::create_dir_all(&chapters).unwrap();
        std::fs::write(chapters.join("c1.txt"), text).unwrap();
        let meta = json!({"work_id": work, "title": format!("作品{work}"), "author": "佚名",
            "publisher_id": "N01", "type": "novel", "language": "zh",
            "chapters": [{"chapter_id": "c1", "index": 1, "title": "第一章", "file": "chapters/c1.txt"}]});
        std::fs::write(
            dir.join(format!("works/{work}/meta.json")),
            meta.to_string(),
        )
        .unwrap();
    }
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let mut links = String::new();
    let mut copies = 0;
    for index in 0..14 {
        let body = match index % 7 {
            0..=2 => {
                copies += 1;
                let mut page = PIRATED.to_vec();
                page.extend_from_slice(format!("<p>第{index}号镜像</p>").as_bytes());
                page
            }
            3 | 4 => {
                copies += 1;
                html(&format!("{second}\n第{index}号镜像"))
            }
            _ => html(&filler(1500, 100 + index as u64)),
        };
        std::fs::write(site.join(format!("p{index}.html")), body).unwrap();
        links.push_str(&format!("<li><a href=\"p{index}.html\">{index}</a></li>"));
    }
    std::fs::write(
        site.join("index.html"),
        format!("<html><body><ul>{links}</ul></body></html>"),
    )
    .unwrap();
    copies
}

fn html(text: &str) -> Vec<u8> {
    let paragraphs: String = text.lines().map(|line| format!("<p>{line}</p>")).collect();
    format!("<html><head><meta charset=\"utf-8\"><title>章</title></head><body><div>{paragraphs}</div></body></html>")
        .into_bytes()
}

/// Serves `dir` on loopback, each response delayed so a crawl takes a while.
fn serve_slowly(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let router = axum::Router::new()
                .fallback_service(tower_http::services::ServeDir::new(dir))
                .layer(axum::middleware::from_fn(
                    |request: axum::extract::Request, next: axum::middleware::Next| async move {
                        tokio::time::sleep(Duration::from_millis(150)).await;
                        next.run(request).await
                    },
                ));
            axum::serve(listener, router).await.unwrap();
        });
    });
    format!("http://{address}")
}

/// Registers and fingerprints the works through `serve`, crawls the site and
/// returns the matches as (page, work, chapter). With `crash`, `serve` is
/// SIGKILLed once the works are indexed and the first crawl halfway.
fn run(set: &Path, site: &str, crash: bool) -> Vec<(String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let env = Env {
        cwd: dir.path().to_path_buf(),
    };
    env.run(&["works", "import", set.join("works").to_str().unwrap()]);
    let server = env.serve();
    let key = server.key_for("N01", false);
    server.wait_until_indexed(&key, &["w1".to_owned(), "w2".to_owned()]);
    if crash {
        server.kill9();
    } else {
        server.stop();
    }
    let seed = format!("{site}/index.html");
    env.run(&[
        "sites",
        "add",
        "--publisher",
        "N01",
        "--name",
        "mirror",
        "--id",
        "mirror",
        "--seed",
        &seed,
        "--rate-limit",
        "0",
    ]);
    if crash {
        let mut crawl = env
            .command(&["crawl", "mirror"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(900));
        assert!(
            crawl.try_wait().unwrap().is_none(),
            "the crawl ended before the kill"
        );
        crawl.kill().unwrap();
        crawl.wait().unwrap();
    }
    env.run(&["crawl", "mirror"]);
    let exported = env.run(&[
        "matches",
        "export",
        "--publisher",
        "N01",
        "--format",
        "json",
    ]);
    let mut matches: Vec<(String, String, String)> = exported
        .lines()
        .map(|line| {
            let found: Value = serde_json::from_str(line).unwrap();
            let field = |name: &str| found[name].as_str().unwrap().to_owned();
            (field("page_url"), field("work_id"), field("chapter_id"))
        })
        .collect();
    matches.sort();
    matches
}

#[test]
fn a_kill_mid_crawl_converges_to_the_clean_run_and_earlier_works_still_match() {
    let set = tempfile::tempdir().unwrap();
    let copies = write_set(set.path());
    let site = serve_slowly(set.path().join("site"));
    let clean = run(set.path(), &site, false);
    assert_eq!(
        clean.len(),
        copies,
        "the clean run finds every copy: {clean:?}"
    );
    let crashed = run(set.path(), &site, true);
    assert_eq!(crashed, clean);
}

/// The embedded default is one process's: a second command on the same data
/// directory while `serve` runs fails at once and says who holds it and what
/// to do, instead of corrupting or hanging; after the server stops it works.
#[test]
fn a_second_process_on_the_embedded_default_is_told_who_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let env = Env {
        cwd: dir.path().to_path_buf(),
    };
    let server = env.serve();
    let output = env.command(&["sites", "list"]).output().unwrap();
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("in use by another copyhound process"),
        "{message}"
    );
    assert!(message.contains("serve"), "{message}");
    assert!(
        message.contains(&format!("127.0.0.1:{}", server.port)),
        "names where the server listens: {message}"
    );
    server.stop();
    env.run(&["sites", "list"]);
}
