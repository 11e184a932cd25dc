//! Who to notify about an infringing site, by RDAP (RFC 9083): the registrar of
//! its domain with the registrar's abuse contact, the network hosting its
//! address with the network's abuse contact, and the CDN fronting it, if any.
//! [`RdapRecipientLookup`] implements the core port
//! [`copyhound_core::ports::RecipientLookup`].
//!
//! Which server to ask comes from RFC 9224 bootstrap files under
//! `rdap.bootstrap` (a directory or a URL such as IANA's); nothing is asked
//! when it is empty. Answers are cached and queries paced per server
//! ([`client`]). The site's host is resolved by a [`HostResolver`]: the
//! system's in production, a fixed table in tests, which never reach DNS.

pub mod bootstrap;
pub mod cdn;
pub mod client;
pub mod response;

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::config::RdapConfig;
use copyhound_core::model::{CdnFront, HostingNetwork, Recipients, Registrar};
use copyhound_core::net::is_public_ip;
use copyhound_core::ports::{RecipientLookup, RecipientQuery};
use copyhound_core::{Error, ErrorKind, Result};
use tokio::time::Instant;
use url::{Host, Url};

use self::bootstrap::Bootstrap;
use self::client::{Answer, RdapClient};

/// Most registered-name candidates asked for one host (`b.c.example`, then
/// `a.b.c.example`, ...).
const MAX_DOMAIN_CANDIDATES: usize = 3;

/// Largest bootstrap file read (IANA's are tens of KiB).
const MAX_BOOTSTRAP_BYTES: u64 = 4 << 20;

/// Resolves a site's host to its addresses.
#[async_trait]
pub trait HostResolver: fmt::Debug + Send + Sync + 'static {
    /// Returns the addresses of `host` (a name, never an IP literal).
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>>;
}

/// The system resolver.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>> {
        let addresses = tokio::net::lookup_host((host, 0)).await.map_err(|error| {
            Error::with_source(
                ErrorKind::Transient,
                format!("cannot resolve `{host}`"),
                error,
            )
        })?;
        Ok(addresses.map(|address| address.ip()).collect())
    }
}

/// A fixed table of names: for tests and benchmarks. A name not in the table
/// is an error, never a DNS query.
#[derive(Clone, Debug, Default)]
pub struct StaticResolver {
    names: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// Adds `host` resolving to `addresses`.
    pub fn with(mut self, host: &str, addresses: &[IpAddr]) -> Self {
        self.names
            .insert(host.to_ascii_lowercase(), addresses.to_vec());
        self
    }
}

#[async_trait]
impl HostResolver for StaticResolver {
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>> {
        self.names
            .get(&host.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| Error::new(ErrorKind::Transient, format!("cannot resolve `{host}`")))
    }
}

/// Looks recipients up by RDAP; see the module docs.
#[derive(Debug)]
pub struct RdapRecipientLookup {
    config: RdapConfig,
    client: RdapClient,
    resolver: Arc<dyn HostResolver>,
    allow_private: bool,
    bootstraps: Mutex<HashMap<&'static str, (Instant, Arc<Bootstrap>)>>,
}

impl RdapRecipientLookup {
    /// Returns a lookup for `config` resolving hosts with `resolver`;
    /// private addresses are looked up only when `allow_private` (the
    /// crawler's address policy).
    pub fn new(
        config: RdapConfig,
        resolver: Arc<dyn HostResolver>,
        allow_private: bool,
    ) -> Result<Self> {
        Ok(Self {
            client: RdapClient::new(config.clone())?,
            config,
            resolver,
            allow_private,
            bootstraps: Mutex::new(HashMap::new()),
        })
    }

    /// Returns the lookup the configuration asks for, on the system
    /// resolver; none when `rdap.bootstrap` is empty.
    pub fn from_config(config: &copyhound_core::config::Config) -> Result<Option<Self>> {
        if config.rdap.bootstrap.trim().is_empty() {
            return Ok(None);
        }
        Self::new(
            config.rdap.clone(),
            Arc::new(SystemResolver),
            config.crawler.allow_private_addresses,
        )
        .map(Some)
    }

    /// Returns the bootstrap file `file` (`dns.json`, `ipv4.json`, `ipv6.json`).
    async fn bootstrap(&self, file: &'static str) -> Result<Arc<Bootstrap>> {
        let ttl = Duration::from_secs(self.config.cache_ttl_seconds);
        if let Some((_, bootstrap)) = self
            .bootstraps
            .lock()
            .expect("bootstrap lock is never poisoned: no panics while held")
            .get(file)
            .filter(|(read_at, _)| read_at.elapsed() < ttl)
        {
            return Ok(bootstrap.clone());
        }
        let base = self.config.bootstrap.trim();
        let (bytes, source) = if base.starts_with("http://") || base.starts_with("https://") {
            let url = Url::parse(base)
                .and_then(|base| base.join(file))
                .map_err(|_| {
                    Error::new(
                        ErrorKind::Config,
                        format!("rdap.bootstrap {base:?} is not a URL"),
                    )
                })?;
            (self.client.get_bytes(&url).await?, url.to_string())
        } else {
            let path = std::path::Path::new(base).join(file);
            (read_bounded(&path).await?, path.display().to_string())
        };
        let bootstrap = Arc::new(Bootstrap::parse(&bytes, &source)?);
        self.bootstraps
            .lock()
            .expect("bootstrap lock is never poisoned: no panics while held")
            .insert(file, (Instant::now(), bootstrap.clone()));
        Ok(bootstrap)
    }

    /// Finds the registrar of `name`: asks its registry for the shortest
    /// candidate name first, then longer ones while the registry knows none.
    async fn domain(&self, name: &str, found: &mut Found) -> Option<(String, Registrar)> {
        let bootstrap = found.settle(self.bootstrap("dns.json").await)?;
        let Some((server, suffix_labels)) = bootstrap.server_for_domain(name) else {
            let tld = name.rsplit('.').next().unwrap_or(name);
            found
                .problems
                .push(format!("no RDAP server for .{tld} in the bootstrap"));
            return None;
        };
        for candidate in domain_candidates(name, suffix_labels) {
            let url = found.settle(query_url(&server, "domain", &candidate))?;
            found.sources.push(url.to_string());
            match found.settle(self.client.get(&url).await)? {
                Answer::NotFound => continue,
                Answer::Found(answer) if response::is_rdap_object(&answer, "domain") => {
                    let domain = response::domain_name(&answer).unwrap_or(candidate);
                    let Some(registrar) = response::registrar(&answer) else {
                        found
                            .problems
                            .push(format!("{domain}: the registry names no registrar"));
                        return None;
                    };
                    return Some((domain, registrar));
                }
                Answer::Found(_) => {
                    found
                        .problems
                        .push(format!("{url} answered no domain object"));
                    return None;
                }
            }
        }
        found
            .problems
            .push(format!("no registry record for {name}"));
        None
    }

    /// Finds the network of the host's first public address (IPv4 first).
    async fn hosting(&self, host: &Host<String>, found: &mut Found) -> Option<HostingNetwork> {
        let addresses = match host {
            Host::Ipv4(ip) => vec![IpAddr::V4(*ip)],
            Host::Ipv6(ip) => vec![IpAddr::V6(*ip)],
            Host::Domain(name) => found.settle(self.resolver.resolve(name).await)?,
        };
        let mut usable: Vec<IpAddr> = addresses
            .into_iter()
            .filter(|ip| self.allow_private || is_public_ip(*ip))
            .collect();
        usable.sort_by_key(|ip| ip.is_ipv6());
        let Some(address) = usable.first().copied() else {
            found.problems.push(format!("{host} has no public address"));
            return None;
        };
        let file = if address.is_ipv4() {
            "ipv4.json"
        } else {
            "ipv6.json"
        };
        let bootstrap = found.settle(self.bootstrap(file).await)?;
        let Some(server) = bootstrap.server_for_address(address) else {
            found
                .problems
                .push(format!("no RDAP server for {address} in the bootstrap"));
            return None;
        };
        let url = found.settle(query_url(&server, "ip", &address.to_string()))?;
        found.sources.push(url.to_string());
        match found.settle(self.client.get(&url).await)? {
            Answer::Found(answer) if response::is_rdap_object(&answer, "ip network") => {
                Some(response::network(&answer, address))
            }
            Answer::Found(_) => {
                found
                    .problems
                    .push(format!("{url} answered no ip network object"));
                None
            }
            Answer::NotFound => {
                found
                    .problems
                    .push(format!("no registry record for {address}"));
                None
            }
        }
    }
}

#[async_trait]
impl RecipientLookup for RdapRecipientLookup {
    async fn recipients(&self, query: &RecipientQuery) -> Result<Recipients> {
        let host = parse_host(&query.host)?;
        if self.config.bootstrap.trim().is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                "rdap lookups are not configured: set rdap.bootstrap",
            ));
        }
        let mut found = Found::default();
        let registered = match &host {
            Host::Domain(name) => self.domain(name, &mut found).await,
            Host::Ipv4(_) | Host::Ipv6(_) => None,
        };
        let hosting = self.hosting(&host, &mut found).await;
        if registered.is_none()
            && hosting.is_none()
            && let Some(error) = found.first_error
        {
            return Err(error);
        }
        let cdn = cdn_front(hosting.as_ref(), &query.headers);
        let (domain, registrar) = registered.unzip();
        Ok(Recipients {
            host: host.to_string(),
            domain,
            registrar,
            hosting,
            cdn,
            looked_up_at: chrono::Utc::now(),
            sources: found.sources,
            problems: found.problems,
        })
    }
}

/// What a lookup gathered so far: the URLs asked, what went wrong.
#[derive(Debug, Default)]
struct Found {
    sources: Vec<String>,
    problems: Vec<String>,
    first_error: Option<Error>,
}

impl Found {
    /// Returns the value, or records the error as a problem.
    fn settle<T>(&mut self, outcome: Result<T>) -> Option<T> {
        match outcome {
            Ok(value) => Some(value),
            Err(error) => {
                self.problems.push(error.to_string());
                self.first_error.get_or_insert(error);
                None
            }
        }
    }
}

/// Returns the CDN fronting the site: by the hosting network first (its
/// RDAP abuse contact is the CDN's own), else by the pages' header fields.
fn cdn_front(hosting: Option<&HostingNetwork>, headers: &[(String, String)]) -> Option<CdnFront> {
    let published = |text: &'static str| (!text.is_empty()).then(|| text.to_string());
    if let Some(network) = hosting {
        let names: Vec<&str> = [&network.name, &network.handle, &network.organization]
            .into_iter()
            .filter_map(|name| name.as_deref())
            .collect();
        if let Some((operator, matched)) = cdn::by_network(&names) {
            return Some(CdnFront {
                name: operator.name.to_string(),
                detected_by: format!("network {matched}"),
                abuse_email: network
                    .abuse_email
                    .clone()
                    .or_else(|| published(operator.abuse_email)),
                abuse_url: published(operator.abuse_url),
            });
        }
    }
    let (operator, field) = cdn::by_headers(headers)?;
    Some(CdnFront {
        name: operator.name.to_string(),
        detected_by: format!("header {field}"),
        abuse_email: published(operator.abuse_email),
        abuse_url: published(operator.abuse_url),
    })
}

/// Parses a site's host: a name (lower case, no trailing dot) or an IP literal.
fn parse_host(text: &str) -> Result<Host<String>> {
    let trimmed = text.trim().trim_end_matches('.');
    let bad = || Error::invalid(format!("`{text}` is not a host name or address"));
    if let Ok(ip) = trimmed.parse::<IpAddr>() {
        return Ok(match ip {
            IpAddr::V4(v4) => Host::Ipv4(v4),
            IpAddr::V6(v6) => Host::Ipv6(v6),
        });
    }
    let literal = trimmed.starts_with('[');
    if trimmed.is_empty() || (!literal && trimmed.contains(['/', ':', '@', ' ', '?', '#'])) {
        return Err(bad());
    }
    let host = Host::parse(trimmed).map_err(|_| bad())?;
    if let Host::Domain(name) = &host
        && !name.contains('.')
    {
        return Err(bad());
    }
    Ok(host)
}

/// The names to ask a registry for, shortest first: one label more than
/// the bootstrap entry that matched, then more (at most a few).
fn domain_candidates(name: &str, suffix_labels: usize) -> Vec<String> {
    let labels: Vec<&str> = name.split('.').collect();
    (suffix_labels + 1..=labels.len())
        .take(MAX_DOMAIN_CANDIDATES)
        .map(|count| labels[labels.len() - count..].join("."))
        .collect()
}

/// Returns `{server}{kind}/{value}`, the value percent-encoded as a path segment.
fn query_url(server: &str, kind: &str, value: &str) -> Result<Url> {
    let mut url = Url::parse(server).map_err(|_| {
        Error::new(
            ErrorKind::Config,
            format!("rdap bootstrap lists {server:?}, which is not a URL"),
        )
    })?;
    url.path_segments_mut()
        .map_err(|_| {
            Error::new(
                ErrorKind::Config,
                format!("{server:?} cannot be a base URL"),
            )
        })?
        .pop_if_empty()
        .push(kind)
        .push(value);
    Ok(url)
}

async fn read_bounded(path: &std::path::Path) -> Result<Vec<u8>> {
    let unreadable = |error: std::io::Error| {
        Error::with_source(
            ErrorKind::Config,
            format!("cannot read rdap bootstrap {}", path.display()),
            error,
        )
    };
    let metadata = tokio::fs::metadata(path).await.map_err(unreadable)?;
    if metadata.len() > MAX_BOOTSTRAP_BYTES {
        return Err(Error::new(
            ErrorKind::Config,
            format!("rdap bootstrap {} is larger than 4 MiB", path.display()),
        ));
    }
    tokio::fs::read(path).await.map_err(unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_start_one_label_below_the_registry() {
        assert_eq!(
            domain_candidates("www.novels.example", 1),
            ["novels.example", "www.novels.example"]
        );
        assert_eq!(
            domain_candidates("a.b.c.d.shop.co.uk", 2),
            ["shop.co.uk", "d.shop.co.uk", "c.d.shop.co.uk"]
        );
        assert!(domain_candidates("example", 1).is_empty());
    }

    #[test]
    fn hosts_are_names_or_addresses() {
        assert_eq!(
            parse_host("WWW.Novels.Example.").unwrap().to_string(),
            "www.novels.example"
        );
        assert_eq!(
            parse_host("203.0.113.9").unwrap().to_string(),
            "203.0.113.9"
        );
        assert_eq!(
            parse_host("2001:db8::1").unwrap().to_string(),
            "[2001:db8::1]"
        );
        for bad in [
            "",
            "http://x.example/",
            "a b.example",
            "localhostname",
            "x.example/path",
        ] {
            assert_eq!(
                parse_host(bad).unwrap_err().kind(),
                ErrorKind::InvalidInput,
                "{bad}"
            );
        }
    }

    #[test]
    fn query_urls_keep_the_server_path_and_encode_the_value() {
        let url = query_url("https://rdap.example/com/v1/", "domain", "novels.example").unwrap();
        assert_eq!(
            url.as_str(),
            "https://rdap.example/com/v1/domain/novels.example"
        );
        let url = query_url("http://127.0.0.1:9/", "ip", "2001:db8::1").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:9/ip/2001:db8::1");
    }
}
