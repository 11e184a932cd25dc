//! Accepting connections without letting idle or slow clients take the server
//! down. `axum::serve` sets no header read timeout and accepts without bound,
//! so 1,100 idle sockets exhausted a 1024-descriptor limit and every later
//! request (and the stores' own files) failed. Here:
//!
//! - at most [`ConnectionLimits::max_connections`] connections are open at
//!   once; past that the server stops accepting, so further clients wait in
//!   the kernel's backlog instead of costing a descriptor each;
//! - a connection must send a request's headers within
//!   [`ConnectionLimits::header_read_timeout`] of being opened or of its last
//!   answer, so idle keep-alive and slowloris connections are closed;
//! - a request body must keep arriving ([`BodyDeadline`]), so a body trickled
//!   a byte at a time cannot hold a connection and a handler for hours.
//!
//! The server speaks HTTP/1.1 only: an idle HTTP/2 connection has no header
//! timeout to close it. A reverse proxy in front offers HTTP/2 to browsers.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// How many connections, and how slow a client, the server tolerates.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Connections open at once (each costs a file descriptor).
    pub max_connections: usize,
    /// Time to receive a request's headers.
    pub header_read_timeout: Duration,
    /// How slowly request bodies may arrive.
    pub body: BodyDeadline,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: MAX_CONNECTIONS,
            header_read_timeout: HEADER_READ_TIMEOUT,
            body: BodyDeadline::default(),
        }
    }
}

/// Connections open at once: half the usual 1024-descriptor limit, leaving
/// the rest to the stores, the queue and outgoing connections.
pub const MAX_CONNECTIONS: usize = 512;
/// Time to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time any request body may take before its pace is checked.
pub const BODY_GRACE: Duration = Duration::from_secs(30);
/// Slowest average pace of a body past the grace time: a 64 MiB upload may
/// take 30 s plus 17 minutes (128 kbit/s), a 16 KiB login 31 s.
pub const BODY_MIN_BYTES_PER_SECOND: u64 = 64 << 10;

/// Serves `app` on `listener` within `limits` until `shutdown` resolves, then
/// lets open connections finish their requests and returns.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let app = app.layer(axum::middleware::from_fn_with_state(
        limits.body,
        pace_bodies,
    ));
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, remote) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors or a connection reset before accept: back off, retry.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let app = app.clone();
        let stop_rx = stop_rx.clone();
        tokio::spawn(async move {
            serve_connection(stream, remote, app, limits, stop_rx).await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    // Every slot back: every connection has finished.
    let _ = slots.acquire_many(all).await;
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    remote: SocketAddr,
    app: Router,
    limits: ConnectionLimits,
    mut stop_rx: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(remote));
        app.clone().oneshot(request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%remote, %error, "connection ended with an error");
                }
                return;
            }
            changed = stop_rx.changed() => {
                if changed.is_err() || *stop_rx.borrow() {
                    // Answer the request in flight, then close.
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.as_mut().await;
                    return;
                }
            }
        }
    }
}

/// How slowly a request body may arrive: within `grace`, then at an average
/// of at least `min_bytes_per_second`. Past that its next read fails, the
/// handler answers an error and the connection closes.
#[derive(Clone, Copy, Debug)]
pub struct BodyDeadline {
    /// Time any body may take.
    pub grace: Duration,
    /// Slowest average pace past `grace`.
    pub min_bytes_per_second: u64,
}

impl Default for BodyDeadline {
    fn default() -> Self {
        Self {
            grace: BODY_GRACE,
            min_bytes_per_second: BODY_MIN_BYTES_PER_SECOND,
        }
    }
}

impl BodyDeadline {
    /// The time by which a body that started at `start` and has delivered
    /// `received` bytes must deliver its next byte (or end).
    fn deadline(&self, start: Instant, received: u64) -> Instant {
        let earned =
            Duration::from_secs_f64(received as f64 / self.min_bytes_per_second.max(1) as f64);
        start + self.grace + earned
    }
}

/// Middleware: wraps every request body in a [`PacedBody`]; a request whose
/// body fell behind is answered 408 and its connection closed, whatever the
/// handler made of the failed read.
async fn pace_bodies(
    axum::extract::State(deadline): axum::extract::State<BodyDeadline>,
    request: Request,
    next: Next,
) -> Response {
    let late = Arc::new(AtomicBool::new(false));
    let paced = {
        let late = late.clone();
        request.map(|body| Body::new(PacedBody::new(body, deadline, late)))
    };
    let response = next.run(paced).await;
    if !late.load(Ordering::Relaxed) {
        return response;
    }
    let mut response = (
        StatusCode::REQUEST_TIMEOUT,
        "the request body arrived too slowly",
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A request body that fails once it falls behind its [`BodyDeadline`].
pub struct PacedBody {
    inner: Body,
    deadline: BodyDeadline,
    start: Instant,
    received: u64,
    timer: Pin<Box<Sleep>>,
    /// Set once the body fell behind.
    late: Arc<AtomicBool>,
}

impl std::fmt::Debug for PacedBody {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PacedBody")
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

impl PacedBody {
    /// Returns `inner` paced by `deadline`, starting now; `late` is set if it falls behind.
    pub fn new(inner: Body, deadline: BodyDeadline, late: Arc<AtomicBool>) -> Self {
        let start = Instant::now();
        Self {
            inner,
            deadline,
            start,
            received: 0,
            timer: Box::pin(tokio::time::sleep_until(deadline.deadline(start, 0))),
            late,
        }
    }
}

impl http_body::Body for PacedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                    let next = this.deadline.deadline(this.start, this.received);
                    this.timer.as_mut().reset(next);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.late.store(true, Ordering::Relaxed);
                    tracing::info!(
                        received_bytes = this.received,
                        elapsed_ms = this.start.elapsed().as_millis(),
                        "request body too slow"
                    );
                    let error = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the request body arrived too slowly",
                    );
                    Poll::Ready(Some(Err(axum::Error::new(error))))
                }
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
