//! Who to notify, against a local RDAP server serving registry-shaped
//! fixtures (`tests/fixtures/rdap/`): a domain with its registrar and the
//! registrar's abuse contact, a hosting network, a CDN network. Hosts resolve
//! through a fixed table (never DNS) and the bootstrap files point every
//! registry at the local server, so nothing leaves 127.0.0.1.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use copyhound_core::ErrorKind;
use copyhound_core::config::RdapConfig;
use copyhound_core::ports::{RecipientLookup, RecipientQuery};
use copyhound_crawler::rdap::{RdapRecipientLookup, StaticResolver};
use tokio::time::Instant;

const DOMAIN: &str = include_str!("fixtures/rdap/domain_novels.json");
const HOSTING: &str = include_str!("fixtures/rdap/ip_hosting.json");
const CDN: &str = include_str!("fixtures/rdap/ip_cdn.json");

/// Paths the server was asked for, with when it received each.
type RequestLog = Arc<Mutex<Vec<(String, Instant)>>>;

async fn serve(State(log): State<RequestLog>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    log.lock().unwrap().push((path.clone(), Instant::now()));
    let rdap = |body: &'static str| {
        ([(header::CONTENT_TYPE, "application/rdap+json")], body).into_response()
    };
    let not_found = || {
        let body = r#"{"errorCode": 404, "title": "Not Found", "description": ["no such object"]}"#;
        (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/rdap+json")],
            body,
        )
            .into_response()
    };
    match path.as_str() {
        "/rdap/domain/novels-free.example" => rdap(DOMAIN),
        "/rdap/ip/45.77.10.20" => rdap(HOSTING),
        "/rdap/ip/104.16.10.20" => rdap(CDN),
        "/moved/domain/novels-free.moved" => (
            StatusCode::MOVED_PERMANENTLY,
            [(header::LOCATION, "/rdap/domain/novels-free.example")],
        )
            .into_response(),
        _ if path.starts_with("/malformed/") => {
            rdap(r#"{"objectClassName": "domain", "entities": ["#)
        }
        _ if path.starts_with("/huge/") => {
            let padding = " ".repeat(3 << 20);
            (
                [(header::CONTENT_TYPE, "application/rdap+json")],
                format!("{{{padding}}}"),
            )
                .into_response()
        }
        _ if path.starts_with("/loop/") => {
            let next = if path.ends_with("/a") { "b" } else { "a" };
            (
                StatusCode::FOUND,
                [(header::LOCATION, format!("/loop/x/{next}"))],
            )
                .into_response()
        }
        _ if path.starts_with("/slow/") => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            rdap(DOMAIN)
        }
        _ if path.starts_with("/broken/") => StatusCode::SERVICE_UNAVAILABLE.into_response(),
        _ => not_found(),
    }
}

struct Registry {
    log: RequestLog,
    bootstrap: tempfile::TempDir,
}

impl Registry {
    async fn start() -> Self {
        let log = RequestLog::default();
        let router = Router::new().fallback(serve).with_state(log.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        let bootstrap = tempfile::tempdir().unwrap();
        let service = |entries: &str, path: &str| format!(r#"[[{entries}], ["{base}/{path}/"]]"#);
        let dns = [
            service(r#""example""#, "rdap"),
            service(r#""moved""#, "moved"),
            service(r#""malformed""#, "malformed"),
            service(r#""huge""#, "huge"),
            service(r#""loop""#, "loop"),
            service(r#""slow""#, "slow"),
            service(r#""broken""#, "broken"),
        ];
        let ipv4 = [service(r#""45.77.0.0/16", "104.16.0.0/12""#, "rdap")];
        for (file, services) in [("dns.json", &dns[..]), ("ipv4.json", &ipv4[..])] {
            let document = format!(
                r#"{{"version": "1.0", "publication": "2026-11-01T00:00:00Z", "services": [{}]}}"#,
                services.join(", ")
            );
            std::fs::write(bootstrap.path().join(file), document).unwrap();
        }
        std::fs::write(bootstrap.path().join("ipv6.json"), r#"{"services": []}"#).unwrap();
        Self { log, bootstrap }
    }

    fn config(&self) -> RdapConfig {
        RdapConfig {
            bootstrap: self.bootstrap.path().display().to_string(),
            requests_per_second: 20.0,
            timeout_ms: 2_000,
            ..RdapConfig::default()
        }
    }

    fn lookup(&self, config: RdapConfig) -> RdapRecipientLookup {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let resolver = StaticResolver::default()
            .with(
                "www.novels-free.example",
                &[ip("2001:db8::10"), ip("45.77.10.20")],
            )
            .with("cdn.novels-free.example", &[ip("104.16.10.20")])
            .with("private.novels-free.example", &[ip("10.0.0.7")]);
        RdapRecipientLookup::new(config, Arc::new(resolver), false).unwrap()
    }

    fn paths(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(path, _)| path.clone())
            .collect()
    }
}

fn query(host: &str) -> RecipientQuery {
    RecipientQuery {
        host: host.into(),
        headers: Vec::new(),
    }
}

#[tokio::test]
async fn registrar_abuse_contact_and_hosting_network_are_found() {
    let registry = Registry::start().await;
    let lookup = registry.lookup(registry.config());
    let found = lookup
        .recipients(&query("WWW.Novels-Free.example"))
        .await
        .unwrap();
    assert_eq!(found.host, "www.novels-free.example");
    assert_eq!(found.domain.as_deref(), Some("novels-free.example"));
    let registrar = found.registrar.as_ref().unwrap();
    assert_eq!(registrar.name, "Example Names Registrar Co., Ltd.");
    assert_eq!(registrar.iana_id.as_deref(), Some("1068"));
    assert_eq!(
        registrar.abuse_email.as_deref(),
        Some("abuse@registrar.example")
    );
    assert_eq!(registrar.abuse_phone.as_deref(), Some("+86.2088886666"));
    assert_eq!(
        registrar.url.as_deref(),
        Some("https://www.registrar.example/")
    );
    let hosting = found.hosting.as_ref().unwrap();
    assert_eq!(
        hosting.address, "45.77.10.20",
        "IPv4 first, documentation IPv6 skipped"
    );
    assert_eq!(hosting.name.as_deref(), Some("EXAMPLE-HOSTING-NET"));
    assert_eq!(hosting.handle.as_deref(), Some("NET-45-77-0-0-1"));
    assert_eq!(hosting.cidr.as_deref(), Some("45.77.0.0/16"));
    assert_eq!(hosting.organization.as_deref(), Some("Example Hosting Ltd"));
    assert_eq!(
        hosting.abuse_email.as_deref(),
        Some("abuse@hosting.example")
    );
    assert_eq!(hosting.abuse_phone.as_deref(), Some("+65-6555-0100"));
    assert_eq!(found.cdn, None);
    assert_eq!(found.primary_email(), Some("abuse@hosting.example"));
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    assert_eq!(found.sources.len(), 2);
    assert!(found.sources[0].ends_with("/rdap/domain/novels-free.example"));
    assert!(found.sources[1].ends_with("/rdap/ip/45.77.10.20"));
    assert_eq!(
        registry.paths(),
        ["/rdap/domain/novels-free.example", "/rdap/ip/45.77.10.20"]
    );
}

#[tokio::test]
async fn a_cdn_is_told_by_its_network_and_by_header_fields() {
    let registry = Registry::start().await;
    let lookup = registry.lookup(registry.config());
    let found = lookup
        .recipients(&query("cdn.novels-free.example"))
        .await
        .unwrap();
    let cdn = found.cdn.as_ref().unwrap();
    assert_eq!(cdn.name, "Cloudflare");
    assert_eq!(cdn.detected_by, "network CLOUDFLARENET");
    assert_eq!(cdn.abuse_email.as_deref(), Some("abuse@cloudflare.com"));
    assert_eq!(
        found.hosting.as_ref().unwrap().cidr.as_deref(),
        Some("104.16.0.0/12")
    );
    assert_eq!(found.primary_email(), Some("abuse@cloudflare.com"));
    assert_eq!(
        found.registrar.as_ref().unwrap().name,
        "Example Names Registrar Co., Ltd."
    );

    // The address is an ordinary host's, but the pages carry a CDN's fields.
    let fronted = RecipientQuery {
        host: "www.novels-free.example".into(),
        headers: vec![
            ("Server".into(), "nginx".into()),
            ("X-Amz-Cf-Id".into(), "k3JVq9xYz==".into()),
        ],
    };
    let found = lookup.recipients(&fronted).await.unwrap();
    let cdn = found.cdn.as_ref().unwrap();
    assert_eq!(
        (cdn.name.as_str(), cdn.detected_by.as_str()),
        ("Amazon CloudFront", "header x-amz-cf-id")
    );
    assert_eq!(found.primary_email(), Some("abuse@amazonaws.com"));
}

#[tokio::test]
async fn answers_are_cached_and_queries_paced_per_server() {
    let registry = Registry::start().await;
    let config = RdapConfig {
        requests_per_second: 5.0,
        ..registry.config()
    };
    let lookup = registry.lookup(config);
    lookup
        .recipients(&query("www.novels-free.example"))
        .await
        .unwrap();
    lookup
        .recipients(&query("cdn.novels-free.example"))
        .await
        .unwrap();
    let asked = registry.paths().len();
    assert_eq!(
        asked,
        3,
        "the domain once, two networks: {:?}",
        registry.paths()
    );
    // Asked again: every answer comes from the cache.
    lookup
        .recipients(&query("www.novels-free.example"))
        .await
        .unwrap();
    lookup
        .recipients(&query("cdn.novels-free.example"))
        .await
        .unwrap();
    assert_eq!(registry.paths().len(), asked);

    // Concurrent lookups of new names still reach the server 200 ms apart.
    let hosts = ["a.example", "b.example", "c.example", "d.example"];
    let lookups = hosts.map(|host| {
        let lookup = &lookup;
        async move { lookup.recipients(&query(host)).await }
    });
    futures_util::future::join_all(lookups).await;
    let log = registry.log.lock().unwrap().clone();
    let received: Vec<Instant> = log[asked..].iter().map(|(_, at)| *at).collect();
    assert!(received.len() >= hosts.len(), "{log:?}");
    for pair in received.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(190),
            "{gap:?} between queries: {log:?}"
        );
    }
}

#[tokio::test]
async fn a_redirect_is_followed() {
    let registry = Registry::start().await;
    let lookup = registry.lookup(registry.config());
    let found = lookup.recipients(&query("novels-free.moved")).await;
    // The registry of `.moved` redirects to the one that knows the name.
    let found = found.unwrap();
    assert_eq!(found.domain.as_deref(), Some("novels-free.example"));
    assert!(
        registry
            .paths()
            .contains(&"/rdap/domain/novels-free.example".to_string())
    );
}

#[tokio::test]
async fn bad_answers_are_clear_bounded_errors() {
    let registry = Registry::start().await;
    let config = RdapConfig {
        timeout_ms: 500,
        max_response_bytes: 1 << 20,
        ..registry.config()
    };
    let lookup = registry.lookup(config);
    let cases = [
        ("site.malformed", ErrorKind::Transient, "malformed JSON"),
        ("site.huge", ErrorKind::TooLarge, "larger than"),
        ("site.loop", ErrorKind::InvalidInput, "redirect"),
        ("site.slow", ErrorKind::Timeout, "within 500 ms"),
        ("site.broken", ErrorKind::Transient, "503"),
        ("http://x.example/", ErrorKind::InvalidInput, "not a host"),
    ];
    for (host, kind, message) in cases {
        let started = Instant::now();
        let error = lookup.recipients(&query(host)).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{host}: {error}");
        assert!(error.to_string().contains(message), "{host}: {error}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{host} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn what_is_missing_is_listed_not_fatal() {
    let registry = Registry::start().await;
    let lookup = registry.lookup(registry.config());
    // The registry knows no such name, and the host is on a private address.
    let found = lookup
        .recipients(&query("private.novels-free.example"))
        .await
        .unwrap();
    assert_eq!(
        found.registrar.as_ref().unwrap().name,
        "Example Names Registrar Co., Ltd."
    );
    assert_eq!(found.hosting, None);
    assert_eq!(
        found.problems,
        ["private.novels-free.example has no public address"]
    );
    let found = lookup.recipients(&query("nobody.example")).await;
    let error = found.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Transient, "{error}");
    let found = lookup
        .recipients(&query("novels.unknown-tld"))
        .await
        .unwrap_err();
    assert!(found.to_string().contains("cannot resolve"), "{found}");

    let unconfigured = registry.lookup(RdapConfig::default());
    let error = unconfigured
        .recipients(&query("www.novels-free.example"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config);
}

#[tokio::test]
async fn waiting_for_the_pace_is_not_a_timeout() {
    let registry = Registry::start().await;
    let config = RdapConfig {
        requests_per_second: 2.0,
        timeout_ms: 300,
        ..registry.config()
    };
    let lookup = registry.lookup(config);
    // Three queries to one server: the last waits a second for its turn,
    // longer than a query may take.
    let addresses = ["45.77.10.20", "104.16.10.20", "45.77.10.21"];
    let lookups = addresses.map(|address| {
        let lookup = &lookup;
        async move { lookup.recipients(&query(address)).await }
    });
    let found = futures_util::future::join_all(lookups).await;
    let networks: Vec<Option<String>> = found
        .into_iter()
        .map(|recipients| recipients.unwrap().hosting.and_then(|network| network.name))
        .collect();
    assert_eq!(
        networks,
        [
            Some("EXAMPLE-HOSTING-NET".to_string()),
            Some("CLOUDFLARENET".to_string()),
            None
        ]
    );
}
