//! Login throttling. `/login` compared 667 guesses a second; now each attempt
//! takes a token from its client's bucket and from one global bucket, a
//! successful login gives them back, and an empty bucket answers 429 with
//! `Retry-After` before the key is even looked at. Issued keys carry 256
//! random bits and cannot be guessed anyway; the buckets protect the
//! operator's configured key and keep guessing from costing store reads.
//!
//! The client is the connecting address, or, when that is a loopback or
//! private address (a reverse proxy on the host or its network), the last
//! address of `X-Forwarded-For`: the one the proxy appended.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

/// Failed attempts a client may make at once.
pub const CLIENT_BURST: u32 = 10;
/// Attempts a client regains per second.
pub const CLIENT_PER_SECOND: u32 = 1;
/// Failed attempts all clients together may make at once.
pub const GLOBAL_BURST: u32 = 100;
/// Attempts all clients together regain per second.
pub const GLOBAL_PER_SECOND: u32 = 20;
/// Clients tracked at most; full buckets are forgotten first.
const MAX_CLIENTS: usize = 100_000;

/// Token buckets per client and for the whole server.
#[derive(Clone, Debug, Default)]
pub struct LoginThrottle {
    buckets: Arc<Mutex<Buckets>>,
}

#[derive(Debug, Default)]
struct Buckets {
    clients: HashMap<IpAddr, Bucket>,
    global: Option<Bucket>,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    fn full(burst: f64, now: Instant) -> Self {
        Self {
            tokens: burst,
            updated: now,
        }
    }

    fn refill(&mut self, burst: f64, per_second: f64, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_second).min(burst);
        self.updated = now;
    }

    /// Time until one token is back.
    fn wait(&self, per_second: f64) -> Duration {
        Duration::from_secs_f64(((1.0 - self.tokens) / per_second).max(0.0))
    }
}

impl LoginThrottle {
    /// Takes a token for an attempt of `client`, or returns how long to wait.
    pub fn begin(&self, client: IpAddr) -> Result<(), Duration> {
        self.begin_at(client, Instant::now())
    }

    /// Gives the token of a successful attempt back.
    pub fn succeeded(&self, client: IpAddr) {
        let mut buckets = self.lock();
        if let Some(bucket) = buckets.clients.get_mut(&client) {
            bucket.tokens = (bucket.tokens + 1.0).min(f64::from(CLIENT_BURST));
        }
        if let Some(global) = buckets.global.as_mut() {
            global.tokens = (global.tokens + 1.0).min(f64::from(GLOBAL_BURST));
        }
    }

    fn begin_at(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.lock();
        let global = buckets
            .global
            .get_or_insert_with(|| Bucket::full(f64::from(GLOBAL_BURST), now));
        global.refill(f64::from(GLOBAL_BURST), f64::from(GLOBAL_PER_SECOND), now);
        let global_wait = global.wait(f64::from(GLOBAL_PER_SECOND));
        if buckets.clients.len() >= MAX_CLIENTS {
            buckets.clients.retain(|_, bucket| {
                bucket.refill(f64::from(CLIENT_BURST), f64::from(CLIENT_PER_SECOND), now);
                bucket.tokens < f64::from(CLIENT_BURST)
            });
        }
        let bucket = buckets
            .clients
            .entry(client)
            .or_insert_with(|| Bucket::full(f64::from(CLIENT_BURST), now));
        bucket.refill(f64::from(CLIENT_BURST), f64::from(CLIENT_PER_SECOND), now);
        let wait = bucket.wait(f64::from(CLIENT_PER_SECOND)).max(global_wait);
        if !wait.is_zero() {
            return Err(wait);
        }
        bucket.tokens -= 1.0;
        if let Some(global) = buckets.global.as_mut() {
            global.tokens -= 1.0;
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buckets> {
        self.buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The address a request comes from, as [`client_address`] finds it.
#[derive(Clone, Copy, Debug)]
pub struct ClientAddress(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(client_address(parts)))
    }
}

/// Returns the address a login attempt comes from (see the module docs);
/// requests served without a socket (tests) share the unspecified address.
pub fn client_address(parts: &Parts) -> IpAddr {
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip());
    let Some(peer) = peer else {
        return IpAddr::from([0, 0, 0, 0]);
    };
    if !is_proxy_address(peer) {
        return peer;
    }
    // The proxy appends what it saw last; earlier entries are the client's word.
    let appended = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .next_back();
    appended
        .and_then(|address| address.trim().parse::<IpAddr>().ok())
        .unwrap_or(peer)
}

fn is_proxy_address(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unique_local()
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_proxy_address(IpAddr::V4(v4)))
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Request;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_client_gets_a_burst_then_one_attempt_a_second() {
        let throttle = LoginThrottle::default();
        let start = Instant::now();
        let guesser = ip("203.0.113.7");
        for _ in 0..CLIENT_BURST as usize {
            throttle.begin_at(guesser, start).unwrap();
        }
        let wait = throttle.begin_at(guesser, start).unwrap_err();
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        // Another client is not held back by this one.
        throttle.begin_at(ip("198.51.100.1"), start).unwrap();
        // One attempt a second afterwards.
        let later = start + Duration::from_millis(1001);
        throttle.begin_at(guesser, later).unwrap();
        assert!(throttle.begin_at(guesser, later).is_err());
    }

    #[test]
    fn successful_logins_cost_nothing() {
        let throttle = LoginThrottle::default();
        let start = Instant::now();
        let user = ip("203.0.113.8");
        for _ in 0..10 * CLIENT_BURST as usize {
            throttle.begin_at(user, start).unwrap();
            throttle.succeeded(user);
        }
    }

    #[test]
    fn many_clients_together_meet_the_global_bucket() {
        let throttle = LoginThrottle::default();
        let start = Instant::now();
        let mut refused = 0;
        for number in 0..(2 * GLOBAL_BURST) {
            let client = IpAddr::from(0x0a00_0000_u32.wrapping_add(number).to_be_bytes());
            if throttle.begin_at(client, start).is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, GLOBAL_BURST);
        let later = start + Duration::from_secs(1);
        let allowed = (0..100u32)
            .filter(|number| {
                let client = IpAddr::from((0xc000_0000_u32 + number).to_be_bytes());
                throttle.begin_at(client, later).is_ok()
            })
            .count();
        assert_eq!(allowed, GLOBAL_PER_SECOND as usize);
    }

    #[test]
    fn a_proxys_forwarded_address_is_trusted_only_from_a_private_peer() {
        let parts = |peer: &str, forwarded: Option<&str>| {
            let mut builder = Request::builder();
            if let Some(forwarded) = forwarded {
                builder = builder.header("x-forwarded-for", forwarded);
            }
            let mut request = builder.body(()).unwrap();
            request
                .extensions_mut()
                .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
            request.into_parts().0
        };
        let direct = parts("203.0.113.9:5000", Some("198.51.100.2"));
        assert_eq!(client_address(&direct), ip("203.0.113.9"));
        let proxied = parts("127.0.0.1:5000", Some("10.1.1.1, 198.51.100.2"));
        assert_eq!(client_address(&proxied), ip("198.51.100.2"));
        let no_header = parts("10.0.0.2:5000", None);
        assert_eq!(client_address(&no_header), ip("10.0.0.2"));
        let unsocketed = Request::builder().body(()).unwrap().into_parts().0;
        assert_eq!(client_address(&unsocketed), ip("0.0.0.0"));
    }
}
