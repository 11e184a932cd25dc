//! A headless Chromium driven over the DevTools protocol, for tests that use
//! the console as a person does. Without a `chromium` binary a test is skipped
//! with a note, unless `CI=true`, where a missing browser fails it.
#![allow(clippy::unwrap_used)] // test support: a failed step fails the test, with its reason

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Where screenshots go: `COPYHOUND_SCREENSHOT_DIR` (the docs' images are
/// made with `docs/screenshots`), else a temp directory.
pub fn screenshot_dir() -> PathBuf {
    std::env::var_os("COPYHOUND_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("copyhound-ui"))
}

/// The chromium binary, or `None` after a note; with CI=true a missing browser fails.
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let binary = find_chromium();
    if binary.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is required when CI=true (apt-get install -y chromium)"
        );
        eprintln!(
            "note: skipping {test}: no chromium binary on PATH (apt-get install -y chromium)"
        );
    }
    binary
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.try_exists().unwrap_or(false) {
                return Some(candidate);
            }
        }
    }
    None
}

/// A headless Chromium with one page attached; killed on drop.
pub struct Browser {
    /// The browser process.
    pub child: Child,
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Browser {
    /// Starts `binary` headless with a fresh profile and attaches to a blank page.
    pub async fn launch(binary: &PathBuf) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("chromium starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return url.trim().to_string();
                }
            }
            panic!("chromium exited before printing its DevTools URL");
        })
        .await
        .expect("chromium prints its DevTools URL within 30 s");
        // Keep draining stderr so chromium never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let target = browser
            .command(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = browser
            .command(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await;
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        let metrics =
            json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false});
        browser
            .page("Emulation.setDeviceMetricsOverride", metrics)
            .await;
        browser
    }

    /// Sends a DevTools command (to the page's session, or to the browser) and returns its result.
    pub async fn command(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let reply = self.send(session, method, params).await;
        assert!(reply.get("error").is_none(), "{method} failed: {reply}");
        reply["result"].clone()
    }

    /// Sends a DevTools command and returns the whole reply, an error included.
    async fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .unwrap();
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(30), self.socket.next())
                .await
                .expect("chromium answers within 30 s")
                .expect("socket open")
                .unwrap();
            let Message::Text(text) = frame else { continue };
            let reply: Value = serde_json::from_str(text.as_str()).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }

    /// Sends a DevTools command to the page.
    pub async fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.command(Some(&session), method, params).await
    }

    /// Evaluates a JavaScript expression in the page and returns its value.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .page(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await;
        result["result"]["value"].clone()
    }

    /// Fills the login form of the current page with `key` and submits it.
    pub async fn log_in(&mut self, key: &str) {
        let login = format!(
            "document.getElementById('key').value = {}; document.getElementById('login-form').submit(); true",
            json!(key)
        );
        self.eval(&login).await;
    }

    /// Evaluates an expression that yields a promise, and returns its value.
    pub async fn eval_async(&mut self, expression: &str) -> Value {
        let result = self
            .page(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        result["result"]["value"].clone()
    }

    /// Saves a full-page PNG as `name` in the screenshot directory.
    pub async fn screenshot(&mut self, name: &str) {
        let shot = self
            .page(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), &png).unwrap();
    }

    /// Puts `path` into the file input matching `selector`, as a user's pick would.
    pub async fn set_file(&mut self, selector: &str, path: &std::path::Path) {
        let document = self.page("DOM.getDocument", json!({})).await;
        let root = document["root"]["nodeId"].clone();
        let node = self
            .page(
                "DOM.querySelector",
                json!({"nodeId": root, "selector": selector}),
            )
            .await;
        self.page(
            "DOM.setFileInputFiles",
            json!({"nodeId": node["nodeId"], "files": [path.display().to_string()]}),
        )
        .await;
    }

    /// Waits (15 s at most) until `expression` is true; panics with the page's HTML otherwise.
    pub async fn wait_for(&mut self, expression: &str) {
        let params = json!({"expression": expression, "returnByValue": true});
        for _ in 0..150 {
            // A page being replaced answers with an error: not yet.
            let session = self.session.clone();
            let reply = self
                .send(Some(&session), "Runtime.evaluate", params.clone())
                .await;
            if reply["result"]["result"]["value"] == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let html = self.eval("document.documentElement.outerHTML").await;
        panic!("timed out waiting for `{expression}`; page: {html}");
    }

    /// Clicks the element matching `selector` and waits until the page it
    /// leads to has loaded (navigating away earlier would cancel a form post).
    pub async fn click_and_load(&mut self, selector: &str) {
        // Clicked after this evaluation returns, so the navigation cannot cut it short.
        let click = format!(
            "window.__stale = true; const target = document.querySelector({}); setTimeout(() => target.click(), 0); true",
            json!(selector)
        );
        self.eval(&click).await;
        self.wait_for("window.__stale !== true && document.readyState === 'complete'")
            .await;
    }

    /// Opens `url` and waits for it to load.
    pub async fn navigate(&mut self, url: &str) {
        self.page("Page.navigate", json!({"url": url})).await;
        self.wait_for("document.readyState === 'complete'").await;
    }
}
