//! The admin UI in a real headless Chromium, driven over the DevTools protocol:
//! log in with a key, open the dashboard, open a match, confirm it, screenshot.
//!
//! Without a `chromium` binary the test is skipped with a note, unless `CI=true`,
//! where a missing browser fails it.

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

use super::Harness;
use copyhound_core::model::MatchStatus;

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

struct Browser {
    child: Child,
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    async fn launch(binary: &PathBuf) -> Browser {
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

    async fn command(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
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
                assert!(reply.get("error").is_none(), "{method} failed: {reply}");
                return reply["result"].clone();
            }
        }
    }

    async fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.command(Some(&session), method, params).await
    }

    async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .page(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await;
        result["result"]["value"].clone()
    }

    async fn wait_for(&mut self, expression: &str) {
        for _ in 0..150 {
            if self.eval(expression).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let html = self.eval("document.documentElement.outerHTML").await;
        panic!("timed out waiting for `{expression}`; page: {html}");
    }

    async fn navigate(&mut self, url: &str) {
        self.page("Page.navigate", json!({"url": url})).await;
        self.wait_for("document.readyState === 'complete'").await;
    }
}

#[tokio::test]
async fn review_a_match_in_headless_chromium() {
    let Some(binary) = find_chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is required when CI=true (apt-get install -y chromium)"
        );
        eprintln!(
            "note: skipping the UI test: no chromium binary on PATH (apt-get install -y chromium)"
        );
        return;
    };
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_ui").await;
    let site = harness.create_site_a().await;
    for (number, age) in [(1, 0), (2, 1), (3, 1), (4, 3), (5, 8)] {
        harness
            .insert_match(
                &work,
                &site,
                &format!("http://pirate.example/book/{number}.html"),
                0.92,
                age,
            )
            .await;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::serve_listener(
        harness.state.clone(),
        listener,
        async move {
            let _ = stop_rx.await;
        },
    ));

    let mut browser = Browser::launch(&binary).await;
    browser.navigate(&format!("{base}/")).await;
    browser.wait_for("location.pathname === '/login'").await;
    let login = format!(
        "document.getElementById('key').value = {}; document.getElementById('login-form').submit(); true",
        json!(harness.key_a)
    );
    browser.eval(&login).await;
    browser.wait_for("location.pathname === '/' && document.readyState === 'complete' && !!document.querySelector('#chart svg')").await;
    let bars = browser
        .eval("document.querySelectorAll('#chart rect').length")
        .await;
    assert_eq!(bars, json!(30));
    browser
        .wait_for("document.querySelectorAll('a.match-link').length === 5")
        .await;

    browser
        .eval("document.querySelector('a.match-link').click(); true")
        .await;
    browser.wait_for("location.pathname.startsWith('/ui/matches/') && document.readyState === 'complete' && !!document.getElementById('confirm')").await;
    let marks = browser
        .eval("document.querySelectorAll('#chapter-text mark, #page-text mark').length")
        .await;
    assert_eq!(marks, json!(2));
    let status = browser
        .eval("document.getElementById('match-status').textContent")
        .await;
    assert_eq!(status, json!("new"));
    let match_path = browser.eval("location.pathname").await;

    browser.eval("document.querySelector('input[name=note]').value = '整章复制'; document.getElementById('confirm').click(); true").await;
    browser.wait_for("document.readyState === 'complete' && document.getElementById('match-status')?.textContent === 'confirmed'").await;
    assert_eq!(browser.eval("location.pathname").await, match_path);
    let screenshot = browser
        .page(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        )
        .await;
    let png = base64::engine::general_purpose::STANDARD
        .decode(screenshot["data"].as_str().unwrap())
        .unwrap();
    let dir = std::env::temp_dir().join("copyhound-ui");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("match-confirmed.png"), &png).unwrap();
    browser.navigate(&format!("{base}/")).await;
    let dashboard = browser
        .page("Page.captureScreenshot", json!({"format": "png"}))
        .await;
    let png = base64::engine::general_purpose::STANDARD
        .decode(dashboard["data"].as_str().unwrap())
        .unwrap();
    std::fs::write(dir.join("dashboard.png"), &png).unwrap();
    eprintln!("screenshots in {}", dir.display());

    let match_id = match_path
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let stored = harness
        .state
        .matches
        .get_match(&harness.publisher_a, &match_id)
        .await
        .unwrap();
    assert_eq!(stored.status, MatchStatus::Confirmed);
    assert_eq!(stored.reviews[0].note.as_deref(), Some("整章复制"));
    assert!(stored.reviews[0].by.starts_with("key_"));

    // A copy deep in a long page: its pane opens at the copied passage.
    let padding = "本站推荐：热门小说免费阅读\n".repeat(120);
    let long_page = format!("{padding}天色已晚，林中起了大风。\n少年背着柴往回走。\n本站域名");
    let deep = harness
        .insert_match_on_page(
            &harness.publisher_a,
            &work,
            &site,
            "http://pirate.example/book/long.html",
            0.9,
            0,
            &long_page,
            u32::try_from(padding.chars().count()).unwrap(),
        )
        .await;
    browser.navigate(&format!("{base}/ui/matches/{deep}")).await;
    browser
        .wait_for(
            "document.readyState === 'complete' && !!document.querySelector('#page-text mark')",
        )
        .await;
    let opened_at_copy = browser
        .eval(
            "(() => { const pane = document.getElementById('page-text'); \
             const mark = pane.querySelector('mark'); \
             const p = pane.getBoundingClientRect(), m = mark.getBoundingClientRect(); \
             return pane.scrollTop > 0 && m.top >= p.top && m.bottom <= p.bottom; })()",
        )
        .await;
    assert_eq!(
        opened_at_copy,
        json!(true),
        "the page pane opens at the copied passage"
    );

    browser.child.kill().await.unwrap();
    let _ = stop_tx.send(());
    server.await.unwrap().unwrap();
}
