//! [`HttpFetcher`], the production [`Fetcher`]: robots.txt, Crawl-delay, a
//! global concurrency limit, timeouts, retries, manual redirects, size caps and
//! the address policy, so that callers only see a bounded body or an error kind.
//!
//! Bounds: every hop of a fetch runs under one deadline of `total_timeout_ms`
//! (retries included), bodies are read as a stream and cut at `max_body_bytes`
//! counted after decompression (so a gzip bomb stops at the cap), and at most
//! `max_redirects` redirects are followed, a revisited URL being a loop.

mod address;
mod robots;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Once};
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use copyhound_core::backoff::Backoff;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::model::Connection;
use copyhound_core::ports::{FetchRequest, FetchedPage, Fetcher, Resource};
use copyhound_core::{Error, ErrorKind, Result};
use reqwest::header::{
    CONTENT_LENGTH, CONTENT_TYPE, ETAG, HeaderName, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    LAST_MODIFIED, LOCATION,
};
use reqwest::{Client, Response, StatusCode};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::{debug, warn};
use url::Url;

pub use address::{GuardedResolver, ResolverAnswers, is_public_host, is_public_ip};
use robots::{MAX_ROBOTS_BYTES, RobotsCache, RobotsRules};

use crate::pacer::HostPacer;
use crate::urls::{normalize_url, origin_key};

/// Content types worth extracting text from; anything else is `Blocked`.
/// Longest wait between two attempts at one URL (the request deadline bounds the total).
const MAX_FETCH_BACKOFF: Duration = Duration::from_secs(30);

const ALLOWED_CONTENT_TYPES: [&str; 3] = ["text/html", "text/plain", "application/xhtml+xml"];

/// Fetches pages over HTTP(S) politely and within limits; see the module docs.
#[derive(Debug)]
pub struct HttpFetcher {
    client: Client,
    config: CrawlerConfig,
    robots: RobotsCache,
    /// The robots.txt files read for `robots`, per origin: a crawl that asks
    /// for robots.txt itself (its `Sitemap:` lines) reads this copy instead
    /// of requesting the file again at the same instant.
    robots_files: std::sync::Mutex<HashMap<String, (Instant, Vec<u8>)>>,
    robots_agent: String,
    pacer: HostPacer,
    in_flight: Arc<Semaphore>,
    /// What the resolver answered, for the capture log.
    answers: Arc<ResolverAnswers>,
}

impl HttpFetcher {
    /// Returns a fetcher for `config`; `Config` error if the HTTP client cannot be built.
    pub fn new(config: CrawlerConfig) -> Result<Self> {
        install_crypto_provider();
        let answers = Arc::new(ResolverAnswers::default());
        let client = Client::builder()
            .user_agent(config.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms.max(1)))
            .timeout(Duration::from_millis(config.total_timeout_ms.max(1)))
            .no_proxy()
            .dns_resolver(GuardedResolver {
                allow_private: config.allow_private_addresses,
                answers: Arc::clone(&answers),
            })
            .tls_info(true)
            .build()
            .map_err(|err| {
                Error::with_source(ErrorKind::Config, "cannot build the http client", err)
            })?;
        let robots_agent = config
            .user_agent
            .split(['/', ' '])
            .next()
            .unwrap_or("CopyHound")
            .to_string();
        let permits = usize::try_from(config.global_concurrency.max(1)).unwrap_or(1);
        Ok(Self {
            client,
            robots: RobotsCache::default(),
            robots_files: std::sync::Mutex::new(HashMap::new()),
            robots_agent,
            pacer: HostPacer::new(),
            in_flight: Arc::new(Semaphore::new(permits)),
            answers,
            config,
        })
    }

    /// Keeps robots.txt's Crawl-delay across every process on `queue` (see
    /// [`HostPacer::shared`]), not only within this one.
    pub fn with_shared_pacing(
        mut self,
        queue: std::sync::Arc<dyn copyhound_core::ports::TaskQueue>,
    ) -> Self {
        self.pacer = HostPacer::shared(queue, "crawl-delay");
        self
    }

    fn max_body_bytes(&self) -> usize {
        usize::try_from(self.config.max_body_bytes).unwrap_or(usize::MAX)
    }

    async fn robots_rules(&self, url: &Url) -> Arc<RobotsRules> {
        let origin = origin_key(url);
        self.robots
            .get_or_fetch(&origin, || self.fetch_robots(url.clone()))
            .await
    }

    /// robots.txt as read for the rules, when `url` is an origin's robots.txt
    /// read within the rules' lifetime.
    async fn robots_file(&self, url: &Url) -> Option<FetchedPage> {
        if url.path() != "/robots.txt" || url.query().is_some() {
            return None;
        }
        self.robots_rules(url).await;
        let files = self
            .robots_files
            .lock()
            .expect("robots files lock is never poisoned: no panics while held");
        let (read_at, body) = files.get(&origin_key(url))?;
        (read_at.elapsed() < robots::RULES_TTL).then(|| FetchedPage {
            final_url: url.to_string(),
            status: 200,
            content_type: Some("text/plain".into()),
            etag: None,
            last_modified: None,
            headers: Vec::new(),
            body: body.clone(),
            duration_ms: 0,
            received_at: None,
            connection: None,
        })
    }

    async fn fetch_robots(&self, mut url: Url) -> RobotsRules {
        url.set_path("/robots.txt");
        url.set_query(None);
        url.set_fragment(None);
        // A Crawl-delay another process learnt holds for this request too:
        // wait for the host's turn there (a 1 ms reservation of it).
        self.pacer
            .wait(&origin_key(&url), Duration::from_millis(1))
            .await;
        let deadline = Instant::now() + Duration::from_millis(self.config.total_timeout_ms);
        let outcome = tokio::time::timeout_at(deadline, async {
            let response = self
                .send(
                    &url,
                    &FetchRequest {
                        url: url.to_string(),
                        etag: None,
                        last_modified: None,
                        resource: Resource::Page,
                    },
                )
                .await?;
            let status = response.status();
            if status.is_success() {
                let body = read_capped(response, MAX_ROBOTS_BYTES).await?;
                let rules = RobotsRules::parse(&self.robots_agent, &body);
                // This request counts: the next one to the host keeps its Crawl-delay.
                self.pacer
                    .wait(&origin_key(&url), rules.crawl_delay())
                    .await;
                self.robots_files
                    .lock()
                    .expect("robots files lock is never poisoned: no panics while held")
                    .insert(origin_key(&url), (Instant::now(), body));
                return Ok(rules);
            }
            if status.is_client_error() || status.is_redirection() {
                return Ok(RobotsRules::AllowAll);
            }
            Err(Error::new(
                ErrorKind::Transient,
                format!("robots.txt answered {status}"),
            ))
        })
        .await;
        match outcome {
            Ok(Ok(rules)) => rules,
            Ok(Err(err)) => {
                warn!(url=%url, error=%err, "robots.txt unreachable, disallowing the origin for now");
                RobotsRules::unreachable(&err)
            }
            Err(_elapsed) => {
                warn!(url=%url, "robots.txt timed out, disallowing the origin for now");
                RobotsRules::unreachable(&Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "fetching `{url}` timed out after {} ms",
                        self.config.total_timeout_ms
                    ),
                ))
            }
        }
    }

    async fn send(&self, url: &Url, request: &FetchRequest) -> Result<Response> {
        address::check_url_host(url, self.config.allow_private_addresses).await?;
        let _permit = self
            .in_flight
            .acquire()
            .await
            .map_err(|_| Error::internal("fetcher semaphore closed"))?;
        let mut builder = self.client.get(url.as_str());
        for (name, value) in conditional_headers(request) {
            builder = builder.header(name, value);
        }
        builder
            .send()
            .await
            .map_err(|err| map_reqwest_error(url, err))
    }

    /// One hop (no redirect following), with retries on timeouts, 5xx and 429.
    async fn fetch_hop(&self, url: &Url, request: &FetchRequest, deadline: Instant) -> Result<Hop> {
        let mut attempt = 0u32;
        loop {
            let result = tokio::time::timeout_at(deadline, self.fetch_once(url, request))
                .await
                .unwrap_or_else(|_| {
                    Err(Error::new(
                        ErrorKind::Timeout,
                        format!("fetching `{url}` timed out"),
                    ))
                });
            let retryable = matches!(&result, Err(err) if matches!(err.kind(), ErrorKind::Timeout | ErrorKind::Transient));
            if !retryable || attempt >= self.config.max_retries {
                return result;
            }
            let backoff = Backoff::new(
                Duration::from_millis(self.config.retry_backoff_ms),
                MAX_FETCH_BACKOFF,
            )
            .delay(attempt + 1);
            if Instant::now() + backoff >= deadline {
                return result;
            }
            debug!(url=%url, attempt, "retrying fetch");
            tokio::time::sleep(backoff).await;
            attempt += 1;
        }
    }

    async fn fetch_once(&self, url: &Url, request: &FetchRequest) -> Result<Hop> {
        let response = self.send(url, request).await?;
        let status = response.status();
        if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok());
            let Some(location) = location else {
                return Err(Error::invalid(format!(
                    "redirect without location from `{url}`"
                )));
            };
            let target = url
                .join(location)
                .map_err(|_| Error::invalid(format!("bad redirect location `{location}`")))?;
            return Ok(Hop::Redirect(target));
        }
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|value: &reqwest::header::HeaderValue| value.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(CONTENT_TYPE);
        let etag = header(ETAG);
        let last_modified = header(LAST_MODIFIED);
        let mut page = FetchedPage {
            final_url: url.to_string(),
            status: status.as_u16(),
            content_type,
            etag,
            last_modified,
            headers: kept_headers(response.headers()),
            body: Vec::new(),
            duration_ms: 0,
            received_at: Some(chrono::Utc::now()),
            connection: Some(self.connection(url, request, &response)),
        };
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Hop::Done(Box::new(page)));
        }
        check_status(url, status)?;
        check_content_type(url, page.content_type.as_deref(), request.resource)?;
        let max = self.max_body_bytes();
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|length| length > max as u64) {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("`{url}` declares a body over {max} bytes"),
            ));
        }
        page.body = read_capped(response, max).await?;
        Ok(Hop::Done(Box::new(page)))
    }
}

impl HttpFetcher {
    /// What the capture log keeps of how `response` reached us: the
    /// resolver's latest answer for the host, the peer, the leaf certificate,
    /// and the request header fields set here.
    fn connection(&self, url: &Url, request: &FetchRequest, response: &Response) -> Connection {
        let resolved = url.host_str().and_then(|host| self.answers.latest(host));
        let tls_certificates = response
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(|info| info.peer_certificate())
            .map(|der| base64::engine::general_purpose::STANDARD.encode(der))
            .into_iter()
            .collect();
        let mut request_headers = vec![("user-agent".to_owned(), self.config.user_agent.clone())];
        request_headers.extend(
            conditional_headers(request)
                .into_iter()
                .map(|(name, value)| (name.as_str().to_owned(), value.to_owned())),
        );
        Connection {
            resolved,
            peer_address: response.remote_addr().map(|addr| addr.to_string()),
            tls_certificates,
            request_headers,
        }
    }
}

/// The validators of `request` as header fields of a conditional GET.
fn conditional_headers(request: &FetchRequest) -> Vec<(HeaderName, &str)> {
    let mut fields = Vec::new();
    if let Some(etag) = &request.etag {
        fields.push((IF_NONE_MATCH, etag.as_str()));
    }
    if let Some(last_modified) = &request.last_modified {
        fields.push((IF_MODIFIED_SINCE, last_modified.as_str()));
    }
    fields
}

enum Hop {
    Redirect(Url),
    Done(Box<FetchedPage>),
}

#[async_trait]
impl Fetcher for HttpFetcher {
    async fn fetch(&self, request: &FetchRequest) -> Result<FetchedPage> {
        let started = Instant::now();
        let mut url = Url::parse(&normalize_url(&request.url)?)
            .map_err(|err| Error::invalid(err.to_string()))?;
        if let Some(page) = self.robots_file(&url).await {
            return Ok(page);
        }
        let mut visited = HashSet::new();
        let mut deadline = None;
        for hop in 0..=self.config.max_redirects {
            if !visited.insert(url.to_string()) {
                return Err(Error::invalid(format!("redirect loop at `{url}`")));
            }
            let rules = self.robots_rules(&url).await;
            if let Some(refusal) = rules.refusal(url.as_str()) {
                return Err(refusal);
            }
            self.pacer
                .wait(&origin_key(&url), rules.crawl_delay())
                .await;
            // The deadline starts with the first request, after politeness waits.
            let deadline = *deadline.get_or_insert_with(|| {
                Instant::now() + Duration::from_millis(self.config.total_timeout_ms)
            });
            // Validators only apply to the URL they were recorded for.
            let conditional = if hop == 0 {
                request.clone()
            } else {
                FetchRequest {
                    url: url.to_string(),
                    etag: None,
                    last_modified: None,
                    resource: request.resource,
                }
            };
            match self.fetch_hop(&url, &conditional, deadline).await? {
                Hop::Redirect(target) => {
                    debug!(from=%url, to=%target, "following redirect");
                    url = Url::parse(&normalize_url(target.as_str())?)
                        .map_err(|err| Error::invalid(err.to_string()))?;
                }
                Hop::Done(mut page) => {
                    page.duration_ms =
                        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    return Ok(*page);
                }
            }
        }
        Err(Error::invalid(format!(
            "more than {} redirects from `{}`",
            self.config.max_redirects, request.url
        )))
    }
}

fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only when another provider is already installed, which is as good.
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

fn check_status(url: &Url, status: StatusCode) -> Result<()> {
    let code = status.as_u16();
    let kind = match code {
        200..=299 => return Ok(()),
        404 | 410 => ErrorKind::NotFound,
        401 | 403 => ErrorKind::Forbidden,
        408 | 429 | 500..=599 => ErrorKind::Transient,
        _ => ErrorKind::InvalidInput,
    };
    Err(Error::new(kind, format!("`{url}` answered http {code}")))
}

fn check_content_type(url: &Url, content_type: Option<&str>, resource: Resource) -> Result<()> {
    let Some(content_type) = content_type else {
        return Ok(());
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let allowed = match resource {
        Resource::Page => ALLOWED_CONTENT_TYPES.contains(&essence.as_str()),
        Resource::StyleSheet => matches!(essence.as_str(), "text/css" | "text/plain"),
        Resource::Sitemap => matches!(
            essence.as_str(),
            "application/xml"
                | "text/xml"
                | "text/plain"
                | "application/gzip"
                | "application/x-gzip"
                | "application/octet-stream"
        ),
        Resource::Font => {
            essence.starts_with("font/")
                || essence.starts_with("application/font-")
                || essence.starts_with("application/x-font-")
                || essence == "application/octet-stream"
                || essence == "application/vnd.ms-opentype"
        }
        Resource::Subresource => {
            essence.starts_with("text/")
                || matches!(
                    essence.as_str(),
                    "application/javascript"
                        | "application/x-javascript"
                        | "application/ecmascript"
                        | "application/json"
                        | "application/xml"
                        | "application/xhtml+xml"
                )
        }
    };
    if essence.is_empty() || allowed {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Blocked,
        format!("content type `{essence}` of `{url}` is not text"),
    ))
}

/// Reads a body chunk by chunk (decompressed), failing past `max` bytes.
async fn read_capped(mut response: Response, max: usize) -> Result<Vec<u8>> {
    let url = response.url().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| map_reqwest_error(&url, err))?
    {
        if body.len() + chunk.len() > max {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("body of `{url}` exceeds {max} bytes"),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn map_reqwest_error(url: &Url, err: reqwest::Error) -> Error {
    let policy_refusal = std::error::Error::source(&err).is_some_and(|source| {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(source);
        while let Some(error) = current {
            if error.to_string().starts_with("address policy") {
                return true;
            }
            current = error.source();
        }
        false
    });
    let (kind, what) = if policy_refusal {
        (ErrorKind::Blocked, "address policy refused")
    } else if err.is_timeout() {
        (ErrorKind::Timeout, "timed out")
    } else if err.is_decode() {
        (ErrorKind::InvalidInput, "undecodable body")
    } else if err.is_builder() {
        (ErrorKind::InvalidInput, "bad request")
    } else if io_error_kind(&err) == Some(std::io::ErrorKind::ConnectionRefused) {
        (ErrorKind::Transient, "connection refused")
    } else if err.is_connect() {
        (ErrorKind::Transient, "cannot connect")
    } else {
        (ErrorKind::Transient, "connection failed")
    };
    Error::with_source(kind, format!("fetching `{url}`: {what}"), err)
}

/// Returns the kind of the first IO error in the source chain of `err`.
fn io_error_kind(err: &reqwest::Error) -> Option<std::io::ErrorKind> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        current = error.source();
    }
    None
}

/// Header fields kept with a page for its evidence: in order, at most
/// [`MAX_KEPT_HEADERS`] fields and [`MAX_KEPT_HEADER_BYTES`] in all (a site
/// answering with megabytes of headers loses the rest, not the page).
fn kept_headers(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    let mut kept = Vec::new();
    let mut bytes = 0;
    for (name, value) in headers.iter().take(MAX_KEPT_HEADERS) {
        let value = String::from_utf8_lossy(value.as_bytes());
        bytes += name.as_str().len() + value.len();
        if bytes > MAX_KEPT_HEADER_BYTES {
            break;
        }
        kept.push((name.as_str().to_owned(), value.into_owned()));
    }
    kept
}

/// Bounds of [`kept_headers`].
const MAX_KEPT_HEADERS: usize = 100;
const MAX_KEPT_HEADER_BYTES: usize = 16 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_content_types_map_to_kinds() {
        let url = Url::parse("http://a/").unwrap();
        assert_eq!(
            check_status(&url, StatusCode::NOT_FOUND)
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            check_status(&url, StatusCode::FORBIDDEN)
                .unwrap_err()
                .kind(),
            ErrorKind::Forbidden
        );
        assert_eq!(
            check_status(&url, StatusCode::BAD_GATEWAY)
                .unwrap_err()
                .kind(),
            ErrorKind::Transient
        );
        assert!(check_status(&url, StatusCode::OK).is_ok());
        assert!(check_content_type(&url, Some("text/html; charset=gbk"), Resource::Page).is_ok());
        assert!(check_content_type(&url, None, Resource::Page).is_ok());
        assert_eq!(
            check_content_type(&url, Some("image/png"), Resource::Page)
                .unwrap_err()
                .kind(),
            ErrorKind::Blocked
        );
        // A style sheet is text/css; a page never is.
        assert!(check_content_type(&url, Some("text/css"), Resource::StyleSheet).is_ok());
        assert!(check_content_type(&url, Some("text/css"), Resource::Page).is_err());
        assert!(check_content_type(&url, Some("font/woff2"), Resource::Font).is_ok());
        assert!(check_content_type(&url, Some("application/font-woff"), Resource::Font).is_ok());
        assert!(check_content_type(&url, Some("text/html"), Resource::Font).is_err());
        assert!(check_content_type(&url, Some("text/html"), Resource::StyleSheet).is_err());
        assert!(check_content_type(&url, Some("application/x-gzip"), Resource::Sitemap).is_ok());
        assert!(check_content_type(&url, Some("application/xml"), Resource::Page).is_err());
    }
}
