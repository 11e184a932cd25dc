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
//! refused, and the page never navigates away (meta refresh, `location`; see
//! `RequestPolicy`). What interception cannot see (preconnect, WebSocket,
//! WebRTC) finds no network: the browser's proxy refuses every connection and
//! its resolver resolves nothing (`render/process.rs`).
//!
//! A page gets `crawler.render_timeout_ms` in all, whatever its scripts do: a
//! page that never yields fails at its timeout and its tab is closed without
//! waiting. It is read once quiet for [`QUIET`] after its load event, or when
//! what is left of its time is what reading it takes. The browser starts once
//! per run, within 10 s per attempt. Its V8 heap is capped by flags, and the
//! memory of all its processes, ArrayBuffers included, by
//! [`MAX_BROWSER_MEMORY_BYTES`]: past it the browser is killed and the page
//! fails with that reason, like any render failure.
//!
//! The browser runs hostile scripts, so it gets nothing of the crawler it does
//! not need and does not outlive it (`render/process.rs`): its environment is
//! cleared (no `COPYHOUND_*` key or password), every dir it writes is inside
//! its throwaway profile, it runs as `nobody` when the crawler is root and
//! inside Chromium's sandbox unless that cannot start ([`Sandbox`]), its whole
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
/// Time the browser has to answer one protocol command (a page's commands
/// are also bounded by its render timeout).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Time kept at the end of a page's render timeout to read its DOM, at most
/// a fifth of the timeout.
const READ_RESERVE: Duration = Duration::from_secs(2);
/// Time given to sending the command that closes a page.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);
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
        f.debug_struct("Chromium")
            .field("pid", &self.process.pid())
            .field("sandbox", &self.process.sandbox())
            .finish_non_exhaustive()
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
        let (socket, _) = tokio::time::timeout(
            process::LAUNCH_TIMEOUT,
            tokio_tungstenite::connect_async(url.as_str()),
        )
        .await
        .map_err(|_| browser_error("chromium's DevTools did not answer"))?
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
        self.send_as(id, session, method, params, reply).await
    }

    async fn send_as(
        &self,
        id: u64,
        session: Option<&str>,
        method: &str,
        params: Value,
        reply: Option<oneshot::Sender<std::result::Result<Value, String>>>,
    ) -> Result<()> {
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
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // A call cut short by its page's deadline forgets its waiter.
        let _waiter = WaiterGuard {
            pending: &self.pending,
            id,
        };
        self.send_as(id, session, method, params, Some(tx)).await?;
        match tokio::time::timeout(COMMAND_TIMEOUT, rx).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(browser_error(format!("chromium refused {method}: {error}"))),
            Ok(Err(_)) => Err(browser_error("chromium connection lost")),
            Err(_) => Err(browser_error(format!("chromium did not answer {method}"))),
        }
    }

    /// Renders `html`, fetched from `url`, and returns the DOM after its
    /// scripts ran, within `limits.timeout` whatever the page does.
    pub async fn render(
        &self,
        url: &str,
        html: &str,
        fetcher: &dyn Fetcher,
        pacer: &HostPacer,
        limits: RenderLimits,
    ) -> Result<String> {
        let deadline = Instant::now() + limits.timeout;
        let timed_out = || {
            browser_error(format!(
                "rendering `{url}` took longer than {} ms",
                limits.timeout.as_millis()
            ))
        };
        let page = RenderJob {
            url,
            html,
            fetcher,
            pacer,
            limits,
            deadline,
        };
        let created = tokio::time::timeout_at(
            deadline,
            self.call(None, "Target.createTarget", json!({"url": "about:blank"})),
        )
        .await
        .unwrap_or_else(|_| Err(timed_out()));
        let outcome = match created {
            Ok(target) => {
                let target_id = target["targetId"].as_str().unwrap_or_default();
                let outcome = tokio::time::timeout_at(deadline, self.render_in(target_id, &page))
                    .await
                    .unwrap_or_else(|_| Err(timed_out()));
                // Not waited for: a page that never yields must not hold the crawl.
                let close = json!({"targetId": target_id});
                let _ = tokio::time::timeout(
                    CLOSE_TIMEOUT,
                    self.send(None, "Target.closeTarget", close, None),
                )
                .await;
                outcome
            }
            Err(error) => Err(error),
        };
        // A dead browser explains the failure better than a lost connection.
        outcome.map_err(|error| match self.process.death() {
            Some(death) => browser_error(death),
            None => error,
        })
    }

    async fn render_in(&self, target_id: &str, page: &RenderJob<'_>) -> Result<String> {
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        let (tx, mut events) = mpsc::unbounded_channel();
        let session = SessionGuard::new(
            &self.sessions,
            attached["sessionId"].as_str().unwrap_or_default(),
            tx,
        );
        let session = Some(session.id.as_str());
        self.call(
            session,
            "Fetch.enable",
            json!({"patterns": [{"urlPattern": "*"}]}),
        )
        .await?;
        self.call(session, "Page.enable", json!({})).await?;
        // Navigation completes only once its document request is answered
        // below: not awaited here.
        self.send(session, "Page.navigate", json!({"url": page.url}), None)
            .await?;
        self.serve_requests(session, page, &mut events).await?;
        let value = self
            .call(
                session,
                "Runtime.evaluate",
                json!({"expression": "document.documentElement.outerHTML", "returnByValue": true}),
            )
            .await?;
        let mut rendered = value["result"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if rendered.len() > MAX_RENDERED_BYTES {
            let mut cut = MAX_RENDERED_BYTES;
            while !rendered.is_char_boundary(cut) {
                cut -= 1;
            }
            rendered.truncate(cut);
        }
        Ok(rendered)
    }

    /// Answers the page's requests until it has been quiet for [`QUIET`]
    /// after its load event, or until the time left is what reading it takes.
    async fn serve_requests(
        &self,
        session: Option<&str>,
        page: &RenderJob<'_>,
        events: &mut mpsc::UnboundedReceiver<Value>,
    ) -> Result<()> {
        let url =
            Url::parse(page.url).map_err(|_| Error::invalid(format!("bad url `{}`", page.url)))?;
        let read_at = page.deadline - (page.limits.timeout / 5).min(READ_RESERVE);
        let mut policy = RequestPolicy::new(url, page.limits.max_requests);
        let mut loaded_quiet_at: Option<Instant> = None;
        loop {
            let wake = loaded_quiet_at.map_or(read_at, |quiet| quiet.min(read_at));
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
                    let answer = match policy.decide(params) {
                        Decision::Page => Some((
                            200,
                            "text/html; charset=utf-8".to_string(),
                            page.html.as_bytes().to_vec(),
                        )),
                        // A 204 navigation leaves the page where it is.
                        Decision::StayOnPage => Some((204, "text/plain".to_string(), Vec::new())),
                        Decision::Fetch(wanted) => {
                            let fetched =
                                subresource(page.fetcher, page.pacer, page.limits.interval, wanted);
                            tokio::time::timeout_at(read_at, fetched)
                                .await
                                .ok()
                                .flatten()
                        }
                        Decision::Refuse => None,
                    };
                    let request_id = params["requestId"].as_str().unwrap_or_default();
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
            return Err(browser_error(format!(
                "chromium did not load `{}` in time",
                page.url
            )));
        }
        Ok(())
    }
}

/// Removes a command's waiter, answered or not.
struct WaiterGuard<'a> {
    pending: &'a Pending,
    id: u64,
}

impl Drop for WaiterGuard<'_> {
    fn drop(&mut self) {
        self.pending
            .lock()
            .expect("no panics while held")
            .remove(&self.id);
    }
}

/// One page to render and its budget.
struct RenderJob<'a> {
    url: &'a str,
    html: &'a str,
    fetcher: &'a dyn Fetcher,
    pacer: &'a HostPacer,
    limits: RenderLimits,
    /// When the page's time is up.
    deadline: Instant,
}

/// A page's DevTools session: its events are routed to the page while this
/// lives, whether the render ends or is cut short by its deadline.
struct SessionGuard<'a> {
    sessions: &'a Sessions,
    id: String,
}

impl<'a> SessionGuard<'a> {
    fn new(sessions: &'a Sessions, id: &str, events: mpsc::UnboundedSender<Value>) -> Self {
        sessions
            .lock()
            .expect("no panics while held")
            .insert(id.to_string(), events);
        SessionGuard {
            sessions,
            id: id.to_string(),
        }
    }
}

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        self.sessions
            .lock()
            .expect("no panics while held")
            .remove(&self.id);
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
