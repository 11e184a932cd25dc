//! The browser reaches the network only through the crawler's fetcher: a page
//! that tries every other way out (preconnect, WebSocket, frames, meta
//! refresh, cross-origin `fetch()`, WebRTC's STUN over UDP) reaches nothing,
//! and a refresh does not navigate the page away.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::IntoResponse;
use copyhound_crawler::HttpFetcher;
use copyhound_crawler::pacer::HostPacer;
use copyhound_crawler::render::{Chromium, RenderLimits};

use super::chromium;
use super::common::{RequestLog, serve_logged, test_config};

/// Counts TCP connections to and datagrams at two ports the test owns.
struct Trap {
    tcp_port: u16,
    udp_port: u16,
    connections: Arc<AtomicUsize>,
    datagrams: Arc<AtomicUsize>,
}

async fn trap() -> Trap {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let trap = Trap {
        tcp_port: listener.local_addr().unwrap().port(),
        udp_port: udp.local_addr().unwrap().port(),
        connections: Arc::default(),
        datagrams: Arc::default(),
    };
    let connections = trap.connections.clone();
    tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            connections.fetch_add(1, Ordering::SeqCst);
        }
    });
    let datagrams = trap.datagrams.clone();
    tokio::spawn(async move {
        let mut buffer = [0u8; 2048];
        while udp.recv_from(&mut buffer).await.is_ok() {
            datagrams.fetch_add(1, Ordering::SeqCst);
        }
    });
    trap
}

/// The page's own site: answers the requests the fetcher makes for it.
async fn site(State(log): State<RequestLog>, request: Request) -> axum::response::Response {
    let path = request.uri().path().to_string();
    log.lock().unwrap().push(path.clone());
    if path == "/slow.json" {
        // Keeps the page busy while its other attempts would get out.
        tokio::time::sleep(Duration::from_millis(1_000)).await;
    }
    let html = "<html><body><p>NAVIGATED AWAY</p></body></html>";
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

async fn render(browser: &Chromium, url: &str, html: &str) -> String {
    let fetcher = HttpFetcher::new(test_config()).unwrap();
    let limits = RenderLimits {
        timeout: Duration::from_secs(10),
        max_requests: 10,
        interval: Duration::ZERO,
    };
    browser
        .render(url, html, &fetcher, &HostPacer::new(), limits)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_browser_reaches_nothing_but_the_fetcher() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let trap = trap().await;
    let (origin, log) = serve_logged(site).await;
    let (tcp, udp) = (trap.tcp_port, trap.udp_port);
    let outside = format!("http://127.0.0.1:{tcp}");
    let hostile = format!(
        r#"<html><head><meta http-equiv="refresh" content="0;url={outside}/refresh">
        <link rel="preconnect" href="{outside}"><link rel="dns-prefetch" href="//copyhound-probe.invalid">
        </head><body><p>ORIGINAL</p><iframe src="{outside}/frame"></iframe><script>
        try {{ new WebSocket('ws://127.0.0.1:{tcp}/socket'); }} catch (e) {{}}
        fetch('{outside}/fetch').catch(() => {{}});
        const peer = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{udp}'}}]}});
        peer.createDataChannel('out');
        peer.createOffer().then(offer => peer.setLocalDescription(offer));
        fetch('/slow.json').catch(() => {{}});
        </script></body></html>"#
    );
    let browser = Chromium::launch(&binary).await.unwrap();
    let rendered = render(&browser, &format!("{origin}/hostile.html"), &hostile).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let reached = (
        trap.connections.load(Ordering::SeqCst),
        trap.datagrams.load(Ordering::SeqCst),
        rendered.contains("ORIGINAL"),
    );

    // A refresh within the site goes through the fetcher no more than out of it.
    let refresh = r#"<html><head><meta http-equiv="refresh" content="0;url=/next.html">
        </head><body><p>ORIGINAL</p></body></html>"#;
    let refreshed = render(&browser, &format!("{origin}/refresh.html"), refresh).await;
    let requested = log.lock().unwrap().clone();
    assert_eq!(
        reached,
        (0, 0, true),
        "(tcp connections, udp datagrams, page kept)"
    );
    assert!(refreshed.contains("ORIGINAL"), "{refreshed}");
    assert!(
        !requested.contains(&"/next.html".to_string()),
        "{requested:?}"
    );
}
