//! Idle, slow and oversized clients against the real listener: headers and
//! bodies must arrive in time, connections are capped, and the routes
//! reached without a key take small bodies only.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Harness, send};
use crate::connections::{BodyDeadline, ConnectionLimits};

/// Serves the harness's state on a loopback port within `limits`; returns its address.
async fn listen(harness: &Harness, limits: ConnectionLimits) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let state = harness.state.clone();
    tokio::spawn(crate::serve_listener_within(
        state,
        listener,
        limits,
        std::future::pending(),
    ));
    address
}

fn short_limits() -> ConnectionLimits {
    ConnectionLimits {
        max_connections: 64,
        header_read_timeout: Duration::from_millis(300),
        body: BodyDeadline {
            grace: Duration::from_millis(300),
            min_bytes_per_second: 1000,
        },
    }
}

/// Reads until the server closes the connection (or `limit` passes); returns what it sent.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut received = Vec::new();
    let outcome = tokio::time::timeout(limit, stream.read_to_end(&mut received)).await;
    match outcome {
        Ok(_) => Some(String::from_utf8_lossy(&received).into_owned()),
        Err(_) => None,
    }
}

#[tokio::test]
async fn idle_and_half_sent_headers_are_closed_after_the_header_timeout() {
    let harness = Harness::new().await;
    let address = listen(&harness, short_limits()).await;
    let started = Instant::now();
    let mut idle = TcpStream::connect(address).await.unwrap();
    let mut partial = TcpStream::connect(address).await.unwrap();
    partial
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    for stream in [&mut idle, &mut partial] {
        let closed = read_until_closed(stream, Duration::from_secs(5)).await;
        assert!(closed.is_some(), "the connection stayed open");
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    // A kept-alive connection is closed once it idles past the timeout too.
    let mut kept = TcpStream::connect(address).await.unwrap();
    kept.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut kept, Duration::from_secs(5))
        .await
        .expect("closed after idling");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn connections_past_the_cap_wait_for_a_free_slot() {
    let harness = Harness::new().await;
    let limits = ConnectionLimits {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(30),
        ..short_limits()
    };
    let address = listen(&harness, limits).await;
    let first = TcpStream::connect(address).await.unwrap();
    let _second = TcpStream::connect(address).await.unwrap();
    // Both slots are taken by idle clients: the third waits in the backlog.
    let mut third = TcpStream::connect(address).await.unwrap();
    third
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let early = read_until_closed(&mut third, Duration::from_millis(500)).await;
    assert!(early.is_none(), "answered past the cap: {early:?}");
    drop(first);
    let answer = read_until_closed(&mut third, Duration::from_secs(5))
        .await
        .expect("answered once a slot freed");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn a_trickled_body_is_cut_off_with_408() {
    let harness = Harness::new().await;
    let address = listen(&harness, short_limits()).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    let started = Instant::now();
    stream
        .write_all(
            b"POST /login HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\n\
              Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\nkey=",
        )
        .await
        .unwrap();
    let answer = read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .expect("the slow body was cut off");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn bodies_that_keep_pace_are_read_in_full() {
    let harness = Harness::new().await;
    let address = listen(&harness, short_limits()).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    let form = format!("key={}", harness.key_a);
    let head = format!(
        "POST /login HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\nConnection: close\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        form.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Within the grace time, then above the pace.
    let (start, rest) = form.split_at(10);
    stream.write_all(start.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stream.write_all(rest.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
}

#[tokio::test]
async fn routes_reached_without_a_key_take_small_bodies_only() {
    let harness = Harness::new().await;
    let padding = "x".repeat(17 << 10);
    let login = send(
        &harness,
        "POST",
        "/login",
        "",
        Some(&format!("key={}&pad={padding}", harness.key_a)),
    )
    .await;
    assert_eq!(
        login.status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        login.body
    );
    // A console form without work text takes what the API's small routes take.
    let padding = "x".repeat(crate::routes::MAX_BODY_BYTES + 1);
    let form = send(
        &harness,
        "POST",
        "/ui/sites",
        &harness.key_a,
        Some(&format!("name=x&seeds={padding}")),
    )
    .await;
    assert_eq!(form.status, StatusCode::PAYLOAD_TOO_LARGE);
}
