//! Sites whose chapters arrive by JavaScript (`fetch()`, XHR, `document.write`)
//! serve pages that are empty as markup. For a site with `render = "chromium"`
//! the page the crawler fetched is handed to headless Chromium over the
//! DevTools protocol, and the DOM after its scripts ran goes through the same
//! extractor as any page.
//!
//! The browser never touches the network itself: every request it makes is
//! intercepted (`Fetch.requestPaused`). The page's own document is answered
//! with the body already fetched; scripts, data, style sheets and frames of
//! the page's own origin are fetched through the crawler's fetcher
//! (robots.txt, address policy, pacing, size caps) up to
//! `crawler.max_render_requests`; images, fonts, media and other hosts are
//! refused, and the page never navigates away (meta refresh, `location`: see
//! [`RequestPolicy`]). What interception cannot see (preconnect, WebSocket,
//! WebRTC) finds no network: the browser's proxy refuses every connection and
//! its resolver resolves nothing ([`process`]). A page gets
//! `crawler.render_timeout_ms` in all and is read once it has been quiet for
//! [`QUIET`] after its load event. One browser serves a crawl run; its V8 heap
//! is capped by flags and its processes' memory together, ArrayBuffers
//! included, by [`MAX_BROWSER_MEMORY_BYTES`]: past it the browser is killed
//! and the page fails with that reason, like any render failure.
//!
//! The browser runs hostile scripts, so it gets nothing of the crawler it does
//! not need and does not outlive it ([`process`]): its environment is cleared
//! (no `COPYHOUND_*` key or password), every dir it writes is inside its
//! throwaway profile, it runs as `nobody` when the crawler is root and inside
//! Chromium's sandbox unless that cannot start ([`Sandbox`]), its whole
//! process group dies with the [`Chromium`] and, through a parent-death
//! signal, with the crawler's process even under `kill -9`; profiles of dead
//! crawlers are swept at the next launch.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine;
use copyhound_core::ports::{Fetcher, Resource};
use copyhound_core::{Error, ErrorKind, Result};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tracing::debug;
use url::Url;

use crate::pacer::{HostPacer, fetch_paced};
use crate::urls::origin_key;

mod process;
mod procfs;

pub use process::Sandbox;

/// A rendered page is read once no request has been answered for this long
/// after its load event.
pub const QUIET: Duration = Duration::from_millis(300);
/// Time the browser has to start and answer one protocol command.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of rendered HTML kept.
const MAX_RENDERED_BYTES: usize = crate::extract::MAX_HTML_BYTES;

/// Memory the browser's processes may hold together before it is killed
/// (resident anonymous and shared memory, not the binary they all map).
pub const MAX_BROWSER_MEMORY_BYTES: u64 = 2 << 30;

/// How a browser is started.
#[derive(Clone, Copy, Debug)]
pub struct LaunchOptions {
    /// Memory the browser may hold (bytes); past it the browser is killed and
    /// the pages it renders fail with that reason.
    pub memory_limit_bytes: u64,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            memory_limit_bytes: MAX_BROWSER_MEMORY_BYTES,
        }
    }
}

/// Limits of one rendered page.
#[derive(Clone, Copy, Debug)]
pub struct RenderLimits {
    /// Time for the whole page.
    pub timeout: Duration,
    /// Requests the page may make beyond its document.
    pub max_requests: u32,
    /// Pause between two requests to one host (the site's rate).
    pub interval: Duration,
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Pending = std::sync::Mutex<HashMap<u64, oneshot::Sender<std::result::Result<Value, String>>>>;
type Sessions = std::sync::Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>;

/// A headless Chromium driven over the DevTools protocol.
pub struct Chromium {
    sink: tokio::sync::Mutex<SplitSink<Socket, Message>>,
    next_id: AtomicU64,
    pending: Arc<Pending>,
    sessions: Arc<Sessions>,
    process: process::BrowserProcess,
}

impl std::fmt::Debug for Chromium {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chromium").finish_non_exhaustive()
    }
}

fn browser_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Unavailable, message.into())
}

impl Chromium {
    /// Starts `binary` headless with a throwaway profile.
    pub async fn launch(binary: &str) -> Result<Chromium> {
        Chromium::launch_with(binary, LaunchOptions::default()).await
    }

    /// Starts `binary` headless with a throwaway profile and `options`.
    pub async fn launch_with(binary: &str, options: LaunchOptions) -> Result<Chromium> {
        let (process, url) = process::launch(binary, options.memory_limit_bytes).await?;
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .map_err(|error| browser_error(format!("cannot reach chromium's DevTools: {error}")))?;
        let (sink, mut stream) = socket.split();
        let pending: Arc<Pending> = Arc::default();
        let sessions: Arc<Sessions> = Arc::default();
        let (reader_pending, reader_sessions) = (pending.clone(), sessions.clone());
        tokio::spawn(async move {
            while let Some(Ok(frame)) = stream.next().await {
                let Message::Text(text) = frame else { continue };
                let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else {
                    continue;
                };
                if let Some(id) = message.get("id").and_then(Value::as_u64) {
                    let waiter = reader_pending
                        .lock()
                        .expect("no panics while held")
                        .remove(&id);
                    if let Some(waiter) = waiter {
                        let reply = match message.get("error") {
                            Some(error) => Err(error.to_string()),
                            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                        };
                        let _ = waiter.send(reply);
                    }
                } else if let Some(session) = message.get("sessionId").and_then(Value::as_str) {
                    let events = reader_sessions.lock().expect("no panics while held");
                    if let Some(events) = events.get(session) {
                        let _ = events.send(message);
                    }
                }
            }
            // The browser is gone: every waiter learns it.
            reader_pending.lock().expect("no panics while held").clear();
            reader_sessions
                .lock()
                .expect("no panics while held")
                .clear();
        });
        Ok(Chromium {
            sink: tokio::sync::Mutex::new(sink),
            next_id: AtomicU64::new(1),
            pending,
            sessions,
            process,
        })
    }

    /// Returns the browser's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Returns whether the browser runs in Chromium's sandbox.
    pub fn sandbox(&self) -> Sandbox {
        self.process.sandbox()
    }

    /// Returns the browser's throwaway profile directory.
    pub fn profile_dir(&self) -> &std::path::Path {
        self.process.profile()
    }

    /// Sends a command; `None` as `reply` sends it without waiting for the answer.
    async fn send(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        reply: Option<oneshot::Sender<std::result::Result<Value, String>>>,
    ) -> Result<()> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        if let Some(reply) = reply {
            self.pending
                .lock()
                .expect("no panics while held")
                .insert(id, reply);
        }
        self.sink
            .lock()
            .await
            .send(Message::text(message.to_string()))
            .await
            .map_err(|error| browser_error(format!("chromium connection lost: {error}")))
    }

    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        let (tx, rx) = oneshot::channel();
        self.send(session, method, params, Some(tx)).await?;
        match tokio::time::timeout(COMMAND_TIMEOUT, rx).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(browser_error(format!("chromium refused {method}: {error}"))),
            Ok(Err(_)) => Err(browser_error("chromium connection lost")),
            Err(_) => Err(browser_error(format!("chromium did not answer {method}"))),
        }
    }

    /// Renders `html`, fetched from `url`, and returns the DOM after its scripts ran.
    pub async fn render(
        &self,
        url: &str,
        html: &str,
        fetcher: &dyn Fetcher,
        pacer: &HostPacer,
        limits: RenderLimits,
    ) -> Result<String> {
        let target = self
            .call(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await?;
        let target_id = target["targetId"].as_str().unwrap_or_default().to_string();
        let outcome = self
            .render_in(&target_id, url, html, fetcher, pacer, limits)
            .await;
        let _ = self
            .call(None, "Target.closeTarget", json!({"targetId": target_id}))
            .await;
        // A dead browser explains the failure better than a lost connection.
        outcome.map_err(|error| match self.process.death() {
            Some(death) => browser_error(death),
            None => error,
        })
    }

    async fn render_in(
        &self,
        target_id: &str,
        url: &str,
        html: &str,
        fetcher: &dyn Fetcher,
        pacer: &HostPacer,
        limits: RenderLimits,
    ) -> Result<String> {
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let (tx, mut events) = mpsc::unbounded_channel();
        self.sessions
            .lock()
            .expect("no panics while held")
            .insert(session.clone(), tx);
        let outcome = async {
            let session = Some(session.as_str());
            self.call(session, "Fetch.enable", json!({"patterns": [{"urlPattern": "*"}]}))
                .await?;
            self.call(session, "Page.enable", json!({})).await?;
            // Navigation completes only once its document request is answered
            // below: not awaited here.
            self.send(session, "Page.navigate", json!({"url": url}), None)
                .await?;
            let page = Url::parse(url).map_err(|_| Error::invalid(format!("bad url `{url}`")))?;
            let deadline = Instant::now() + limits.timeout;
            let mut policy = RequestPolicy::new(page, limits.max_requests);
            let mut loaded_quiet_at: Option<Instant> = None;
            loop {
                let wake = loaded_quiet_at.map_or(deadline, |quiet| quiet.min(deadline));
                let event = tokio::select! {
                    event = events.recv() => event,
                    _ = tokio::time::sleep_until(wake) => break,
                };
                let Some(event) = event else {
                    return Err(browser_error("chromium closed the page"));
                };
                let params = &event["params"];
                match event["method"].as_str().unwrap_or_default() {
                    "Page.loadEventFired" => loaded_quiet_at = Some(Instant::now() + QUIET),
                    "Fetch.requestPaused" => {
                        let request_id = params["requestId"].as_str().unwrap_or_default();
                        let answer = match policy.decide(params) {
                            Decision::Page => Some((200, "text/html; charset=utf-8".to_string(), html.as_bytes().to_vec())),
                            // A 204 navigation leaves the page where it is.
                            Decision::StayOnPage => Some((204, "text/plain".to_string(), Vec::new())),
                            Decision::Fetch(wanted) => subresource(fetcher, pacer, limits.interval, wanted).await,
                            Decision::Refuse => None,
                        };
                        let (method, params) = match answer {
                            Some((status, content_type, body)) => (
                                "Fetch.fulfillRequest",
                                json!({"requestId": request_id, "responseCode": status,
                                       "responseHeaders": [{"name": "Content-Type", "value": content_type}],
                                       "body": base64::engine::general_purpose::STANDARD.encode(body)}),
                            ),
                            None => (
                                "Fetch.failRequest",
                                json!({"requestId": request_id, "errorReason": "BlockedByClient"}),
                            ),
                        };
                        self.send(session, method, params, None).await?;
                        if let Some(quiet) = loaded_quiet_at.as_mut() {
                            *quiet = Instant::now() + QUIET;
                        }
                    }
                    _ => {}
                }
            }
            if !policy.page_served() {
                return Err(browser_error(format!("chromium did not load `{url}` in time")));
            }
            let value = self
                .call(
                    session,
                    "Runtime.evaluate",
                    json!({"expression": "document.documentElement.outerHTML", "returnByValue": true}),
                )
                .await?;
            let mut rendered = value["result"]["value"].as_str().unwrap_or_default().to_string();
            if rendered.len() > MAX_RENDERED_BYTES {
                let mut cut = MAX_RENDERED_BYTES;
                while !rendered.is_char_boundary(cut) {
                    cut -= 1;
                }
                rendered.truncate(cut);
            }
            Ok(rendered)
        }
        .await;
        self.sessions
            .lock()
            .expect("no panics while held")
            .remove(&session);
        outcome
    }
}

/// What a request the page makes gets.
#[derive(Debug, PartialEq)]
enum Decision<'a> {
    /// The page's own document, already fetched.
    Page,
    /// An empty `204`: the frame stays on the page.
    StayOnPage,
    /// Fetched through the crawler's fetcher.
    Fetch(&'a str),
    /// Failed as blocked.
    Refuse,
}

/// Which of a page's requests are answered: its document once, then
/// scripts, data, style sheets and frames of its own origin up to a budget.
/// The page never navigates away (meta refresh, `location`): the main
/// frame's later documents get a `204`.
#[derive(Debug)]
struct RequestPolicy {
    page: Url,
    main_frame: Option<String>,
    requests: u32,
    max_requests: u32,
}

impl RequestPolicy {
    fn new(page: Url, max_requests: u32) -> Self {
        RequestPolicy {
            page,
            main_frame: None,
            requests: 0,
            max_requests,
        }
    }

    /// Whether the page's own document was answered.
    fn page_served(&self) -> bool {
        self.main_frame.is_some()
    }

    /// Decides on the `params` of a `Fetch.requestPaused` event.
    fn decide<'a>(&mut self, params: &'a Value) -> Decision<'a> {
        let wanted = params["request"]["url"].as_str().unwrap_or_default();
        let kind = params["resourceType"].as_str().unwrap_or_default();
        let frame = params["frameId"].as_str().unwrap_or_default();
        if kind == "Document" {
            // The first document is the navigation the crawler started.
            match &self.main_frame {
                None => {
                    self.main_frame = Some(frame.to_string());
                    return Decision::Page;
                }
                Some(main) if main == frame => return Decision::StayOnPage,
                Some(_) => {}
            }
        }
        if self.requests >= self.max_requests
            || !matches!(kind, "Script" | "XHR" | "Fetch" | "Stylesheet" | "Document")
            || !same_origin(&self.page, wanted)
        {
            return Decision::Refuse;
        }
        self.requests += 1;
        Decision::Fetch(wanted)
    }
}

fn same_origin(page: &Url, wanted: &str) -> bool {
    Url::parse(wanted).is_ok_and(|wanted| origin_key(&wanted) == origin_key(page))
}

/// Fetches what the page asked for through the crawler's fetcher.
async fn subresource(
    fetcher: &dyn Fetcher,
    pacer: &HostPacer,
    interval: Duration,
    url: &str,
) -> Option<(u16, String, Vec<u8>)> {
    match fetch_paced(fetcher, pacer, interval, url, Resource::Subresource).await {
        Ok(fetched) => Some((
            fetched.status,
            fetched
                .content_type
                .unwrap_or_else(|| "application/octet-stream".into()),
            fetched.body,
        )),
        Err(error) => {
            debug!(url, error = %error, "render: request refused");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused(kind: &str, url: &str, frame: &str) -> Value {
        json!({"resourceType": kind, "request": {"url": url}, "frameId": frame})
    }

    #[test]
    fn the_page_never_navigates_away_and_reaches_only_its_origin() {
        let page = Url::parse("http://site.test/1.html").unwrap();
        let mut policy = RequestPolicy::new(page, 2);
        assert!(!policy.page_served());
        let document = paused("Document", "http://site.test/1.html", "main");
        assert_eq!(policy.decide(&document), Decision::Page);
        assert!(policy.page_served());
        // Meta refresh or `location`, within the site or out of it.
        for url in ["http://site.test/2.html", "http://other.test/"] {
            let refresh = paused("Document", url, "main");
            assert_eq!(policy.decide(&refresh), Decision::StayOnPage);
        }
        for (kind, url) in [
            ("Document", "http://other.test/frame.html"),
            ("XHR", "http://site.test:8080/data.json"),
            ("Image", "http://site.test/cover.png"),
            ("WebSocket", "ws://site.test/socket"),
            ("Other", "http://site.test/favicon.ico"),
        ] {
            assert_eq!(policy.decide(&paused(kind, url, "frame")), Decision::Refuse);
        }
        let frame = paused("Document", "http://site.test/frame.html", "frame");
        assert_eq!(
            policy.decide(&frame),
            Decision::Fetch("http://site.test/frame.html")
        );
        let script = paused("Script", "http://site.test/app.js", "main");
        assert_eq!(
            policy.decide(&script),
            Decision::Fetch("http://site.test/app.js")
        );
        assert_eq!(policy.decide(&script), Decision::Refuse, "over budget");
    }
}
