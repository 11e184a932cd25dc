//! Address policy: a crawled site must not make us reach into our own network
//! (SSRF). Names are resolved first, the addresses checked, and the connection
//! made to a checked address: reqwest resolves through [`GuardedResolver`],
//! which drops every forbidden address, so a DNS answer that changes between
//! the check and the connect cannot slip through.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

pub use copyhound_core::model::Resolution;
pub use copyhound_core::net::{is_public_host, is_public_ip};
use copyhound_core::{Error, ErrorKind, Result};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Checks the host of `url` before connecting: an IP literal is checked as is,
/// a name is resolved and refused when no public address remains.
pub async fn check_url_host(url: &Url, allow_private: bool) -> Result<()> {
    if allow_private {
        return Ok(());
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses: Vec<IpAddr> = match url.host() {
        Some(Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
        Some(Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
        Some(Host::Domain(name)) => tokio::net::lookup_host((name, port))
            .await
            .map_err(|err| {
                Error::with_source(
                    ErrorKind::Transient,
                    format!("cannot resolve `{name}`"),
                    err,
                )
            })?
            .map(|addr| addr.ip())
            .collect(),
        None => return Err(Error::invalid(format!("url `{url}` has no host"))),
    };
    if addresses.iter().any(|ip| is_public_ip(*ip)) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Blocked,
        format!("address policy: `{url}` resolves to a private address"),
    ))
}

/// A DNS resolver that drops forbidden addresses (all kept when private
/// addresses are allowed), and notes its latest answer per host in `answers`
/// for the capture log of evidence.
#[derive(Clone, Debug)]
pub struct GuardedResolver {
    /// Keep loopback, private and link-local addresses.
    pub allow_private: bool,
    /// The latest answers.
    pub answers: Arc<ResolverAnswers>,
}

/// The latest answer of [`GuardedResolver`] per host name (bounded: cleared
/// past [`MAX_REMEMBERED_HOSTS`]).
#[derive(Debug, Default)]
pub struct ResolverAnswers(Mutex<HashMap<String, Resolution>>);

/// Most host names [`ResolverAnswers`] holds.
const MAX_REMEMBERED_HOSTS: usize = 10_000;

impl ResolverAnswers {
    /// Returns the latest answer for `host`.
    pub fn latest(&self, host: &str) -> Option<Resolution> {
        self.0
            .lock()
            .expect("resolver answers lock is never poisoned: no panics while held")
            .get(host)
            .cloned()
    }

    fn note(&self, host: &str, addresses: &[SocketAddr]) {
        let mut answers = self
            .0
            .lock()
            .expect("resolver answers lock is never poisoned: no panics while held");
        if answers.len() >= MAX_REMEMBERED_HOSTS {
            answers.clear();
        }
        let resolution = Resolution {
            host: host.to_owned(),
            addresses: addresses.iter().map(|addr| addr.ip().to_string()).collect(),
            at: chrono::Utc::now(),
        };
        answers.insert(host.to_owned(), resolution);
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let answers = Arc::clone(&self.answers);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let resolved = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let kept: Vec<SocketAddr> = resolved
                .filter(|addr| allow_private || is_public_ip(addr.ip()))
                .collect();
            if kept.is_empty() {
                let refused: Box<dyn std::error::Error + Send + Sync> =
                    format!("address policy: `{host}` has no public address").into();
                return Err(refused);
            }
            answers.note(&host, &kept);
            let addrs: Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_ranges_are_refused() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:a9fe:a9fe::1",
            "2002:7f00:1::1",
            "fec0::1",
            "100::1",
            "2001::1",
            "192.0.0.170",
        ] {
            assert!(!is_public_ip(private.parse().unwrap()), "{private}");
        }
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(is_public_ip(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn literal_and_resolved_hosts_are_checked() {
        let loopback = Url::parse("http://127.0.0.1:8001/").unwrap();
        let err = check_url_host(&loopback, false).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Blocked);
        check_url_host(&loopback, true).await.unwrap();
        let localhost = Url::parse("http://localhost:8001/").unwrap();
        assert_eq!(
            check_url_host(&localhost, false).await.unwrap_err().kind(),
            ErrorKind::Blocked
        );
    }
}
