//! The RDAP HTTP client: one GET per query, answers cached for
//! `rdap.cache_ttl_seconds` in process, queries paced per server.
//!
//! The cache is in process (not a store): answers are small, change rarely and
//! are cheap to ask again, every process (server, worker, CLI) asks for few
//! sites, and a store port would add a collection to two backends for data
//! that may be lost on a restart at the cost of one query per registry.
//! Pacing is per server origin (`https://rdap.example`), so one registry is
//! never asked more than `rdap.requests_per_second` times a second by this
//! process, while other registries are asked at once.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use copyhound_core::config::RdapConfig;
use copyhound_core::{Error, ErrorKind, Result};
use reqwest::header::{ACCEPT, CONTENT_LENGTH, LOCATION};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use tokio::time::Instant;
use url::Url;

/// An RDAP server's answer to one query.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The object, as JSON.
    Found(Arc<Value>),
    /// 404: the server has no such object.
    NotFound,
}

/// Fetches RDAP answers politely and within limits; see the module docs.
#[derive(Debug)]
pub struct RdapClient {
    client: Client,
    config: RdapConfig,
    interval: Duration,
    cache: Mutex<HashMap<String, (Instant, Answer)>>,
    next_slot: Mutex<HashMap<String, Instant>>,
}

impl RdapClient {
    /// Returns a client for `config`; `Config` error if the HTTP client cannot be built.
    pub fn new(config: RdapConfig) -> Result<Self> {
        install_crypto_provider();
        let client = Client::builder()
            .user_agent(concat!("CopyHound/", env!("CARGO_PKG_VERSION"), " (rdap)"))
            .redirect(reqwest::redirect::Policy::none())
            // The whole query (redirects, body) runs under `fetch`'s deadline.
            .connect_timeout(Duration::from_millis(config.timeout_ms.max(1)))
            .no_proxy()
            .build()
            .map_err(|error| {
                Error::with_source(ErrorKind::Config, "cannot build the rdap client", error)
            })?;
        let interval = Duration::from_secs_f64(1.0 / config.requests_per_second.max(1e-3));
        Ok(Self {
            client,
            config,
            interval,
            cache: Mutex::new(HashMap::new()),
            next_slot: Mutex::new(HashMap::new()),
        })
    }

    /// Returns the answer to `url`, from the cache when it is fresh.
    pub async fn get(&self, url: &Url) -> Result<Answer> {
        let key = url.to_string();
        if let Some(answer) = self.cached(&key) {
            return Ok(answer);
        }
        let (status, body) = self
            .fetch(url, "application/rdap+json, application/json")
            .await?;
        let answer = match status {
            StatusCode::NOT_FOUND => Answer::NotFound,
            _ => {
                let value: Value = serde_json::from_slice(&body).map_err(|error| {
                    Error::with_source(
                        ErrorKind::Transient,
                        format!("rdap server answered malformed JSON for {url}"),
                        error,
                    )
                })?;
                if !value.is_object() {
                    return Err(Error::new(
                        ErrorKind::Transient,
                        format!("rdap server answered JSON that is no object for {url}"),
                    ));
                }
                Answer::Found(Arc::new(value))
            }
        };
        self.remember(key, answer.clone());
        Ok(answer)
    }

    /// Returns the body of `url` (a bootstrap file), paced and bounded like a query.
    pub async fn get_bytes(&self, url: &Url) -> Result<Vec<u8>> {
        let (status, body) = self.fetch(url, "application/json").await?;
        if status == StatusCode::NOT_FOUND {
            return Err(Error::new(
                ErrorKind::Config,
                format!("rdap bootstrap {url} is not found (404)"),
            ));
        }
        Ok(body)
    }

    fn cached(&self, key: &str) -> Option<Answer> {
        let ttl = Duration::from_secs(self.config.cache_ttl_seconds);
        let cache = self
            .cache
            .lock()
            .expect("rdap cache lock is never poisoned: no panics while held");
        cache
            .get(key)
            .filter(|(stored_at, _)| stored_at.elapsed() < ttl)
            .map(|(_, answer)| answer.clone())
    }

    fn remember(&self, key: String, answer: Answer) {
        let capacity = usize::try_from(self.config.cache_entries).unwrap_or(usize::MAX);
        if capacity == 0 {
            return;
        }
        let ttl = Duration::from_secs(self.config.cache_ttl_seconds);
        let mut cache = self
            .cache
            .lock()
            .expect("rdap cache lock is never poisoned: no panics while held");
        if cache.len() >= capacity {
            cache.retain(|_, (stored_at, _)| stored_at.elapsed() < ttl);
        }
        while cache.len() >= capacity {
            let oldest = cache
                .iter()
                .min_by_key(|(_, (stored_at, _))| *stored_at)
                .map(|(key, _)| key.clone());
            match oldest {
                Some(oldest) => cache.remove(&oldest),
                None => break,
            };
        }
        cache.insert(key, (Instant::now(), answer));
    }

    /// Waits for the next free slot of `origin`'s server and takes it.
    async fn pace(&self, origin: &str) {
        let slot = {
            let mut slots = self
                .next_slot
                .lock()
                .expect("rdap pacing lock is never poisoned: no panics while held");
            let now = Instant::now();
            let slot = slots
                .get(origin)
                .copied()
                .filter(|free_at| *free_at > now)
                .unwrap_or(now);
            slots.insert(origin.to_string(), slot + self.interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }

    /// GETs `url`, following redirects; returns 200 or 404 with the body,
    /// every other outcome as an error of its kind.
    async fn fetch(&self, url: &Url, accept: &str) -> Result<(StatusCode, Vec<u8>)> {
        let mut current = url.clone();
        let mut visited = HashSet::from([current.to_string()]);
        // The deadline starts once the first query may go: waiting for the
        // server's pace is not the server being slow.
        let mut deadline_opt: Option<Instant> = None;
        for _hop in 0..=self.config.max_redirects {
            self.pace(&current.origin().ascii_serialization()).await;
            let deadline = *deadline_opt.get_or_insert_with(|| {
                Instant::now() + Duration::from_millis(self.config.timeout_ms)
            });
            let outcome = tokio::time::timeout_at(deadline, self.fetch_once(&current, accept))
                .await
                .map_err(|_| {
                    Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "rdap server did not answer {url} within {} ms",
                            self.config.timeout_ms
                        ),
                    )
                })??;
            match outcome {
                Hop::Done(status, body) => return Ok((status, body)),
                Hop::Redirect(location) => {
                    let next = current.join(&location).map_err(|_| {
                        Error::new(
                            ErrorKind::Transient,
                            format!("rdap server redirected {url} to a bad location"),
                        )
                    })?;
                    if !matches!(next.scheme(), "http" | "https") {
                        return Err(Error::new(
                            ErrorKind::Transient,
                            format!("rdap server redirected {url} off http(s)"),
                        ));
                    }
                    if !visited.insert(next.to_string()) {
                        return Err(Error::invalid(format!("redirect loop querying {url}")));
                    }
                    current = next;
                }
            }
        }
        Err(Error::invalid(format!(
            "more than {} redirects querying {url}",
            self.config.max_redirects
        )))
    }

    async fn fetch_once(&self, url: &Url, accept: &str) -> Result<Hop> {
        let mut response = self
            .client
            .get(url.clone())
            .header(ACCEPT, accept)
            .send()
            .await
            .map_err(|error| {
                let kind = if error.is_timeout() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Transient
                };
                Error::with_source(kind, format!("rdap query {url} failed"), error)
            })?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::Transient,
                        format!("rdap server redirected {url} without a location"),
                    )
                })?;
            return Ok(Hop::Redirect(location.to_string()));
        }
        if status != StatusCode::OK && status != StatusCode::NOT_FOUND {
            return Err(Error::new(
                ErrorKind::Transient,
                format!("rdap server answered {status} for {url}"),
            ));
        }
        let cap = self.config.max_response_bytes;
        let too_large = || {
            Error::new(
                ErrorKind::TooLarge,
                format!("rdap answer for {url} is larger than {cap} bytes"),
            )
        };
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if declared.is_some_and(|length| length > cap) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| {
            Error::with_source(
                ErrorKind::Transient,
                format!("rdap answer for {url} broke off"),
                error,
            )
        })? {
            if (body.len() + chunk.len()) as u64 > cap {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Hop::Done(status, body))
    }
}

fn install_crypto_provider() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // Fails only when another provider is already installed, which is as good.
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

enum Hop {
    Done(StatusCode, Vec<u8>),
    Redirect(String),
}
