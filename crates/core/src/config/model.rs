use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};

/// The whole configuration of a node. Sections mirror the pipeline stages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Format version of this file; only 1 exists.
    #[serde(default = "default_version")]
    pub version: u32,
    /// Where the embedded backends keep their files.
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// Page, fingerprint, match, work and site stores.
    #[serde(default)]
    pub store: StoreConfig,
    /// Segment index.
    #[serde(default)]
    pub index: IndexConfig,
    /// Task queue.
    #[serde(default)]
    pub queue: QueueConfig,
    /// Crawler.
    #[serde(default)]
    pub crawler: CrawlerConfig,
    /// Comparison thresholds.
    #[serde(default)]
    pub matcher: MatcherConfig,
    /// Workers.
    #[serde(default)]
    pub worker: WorkerConfig,
    /// HTTP API.
    #[serde(default)]
    pub server: ServerConfig,
    /// Logging.
    #[serde(default)]
    pub log: LogConfig,
    /// Scheduled reports and alerts.
    #[serde(default)]
    pub reports: ReportsConfig,
    /// The mail server e-mail alerts go through.
    #[serde(default)]
    pub smtp: SmtpConfig,
    /// Who to notify: RDAP lookups of registrars and hosting networks.
    #[serde(default)]
    pub rdap: RdapConfig,
    /// Evidence bundles: the time-stamping authority.
    #[serde(default)]
    pub evidence: EvidenceConfig,
}

fn default_version() -> u32 {
    1
}

fn default_data_dir() -> PathBuf {
    PathBuf::from("./copyhound-data")
}

impl Default for Config {
    fn default() -> Self {
        Self {
            version: default_version(),
            data_dir: default_data_dir(),
            store: StoreConfig::default(),
            index: IndexConfig::default(),
            queue: QueueConfig::default(),
            crawler: CrawlerConfig::default(),
            matcher: MatcherConfig::default(),
            worker: WorkerConfig::default(),
            server: ServerConfig::default(),
            log: LogConfig::default(),
            reports: ReportsConfig::default(),
            smtp: SmtpConfig::default(),
            rdap: RdapConfig::default(),
            evidence: EvidenceConfig::default(),
        }
    }
}

/// Stores. No URL: the embedded store under `data_dir`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `mongodb://...` or `mongodb+srv://...`; empty for the embedded store.
    pub url: Option<String>,
    /// MongoDB database name.
    pub database: String,
    /// Page bodies larger than this are stored truncated (flagged).
    pub max_body_bytes: u64,
    /// Apply pending migrations when a server or worker starts.
    pub migrate_on_start: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: None,
            database: "copyhound".into(),
            max_body_bytes: 4 << 20,
            migrate_on_start: true,
        }
    }
}

/// Segment index. No URL: the in-memory index, snapshotted under `data_dir`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// `redis://...` or `rediss://...`; empty for the in-memory index.
    pub url: Option<String>,
    /// Use Redis Cluster (the URL names one seed node; also detected from
    /// the server).
    pub cluster: bool,
    /// Prefix of every Redis key.
    pub prefix: String,
    /// Largest Hamming distance answered exactly; fixed per index.
    pub max_distance: u32,
}

impl Default for IndexConfig {
    fn default() -> Self {
        Self {
            url: None,
            cluster: false,
            prefix: "copyhound:index:".into(),
            max_distance: 3,
        }
    }
}

/// Task queue. No URL: the embedded queue under `data_dir`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// `redis://...`; empty for the embedded queue.
    pub url: Option<String>,
    /// Use Redis Cluster (the URL names one seed node; also detected from
    /// the server). Keys then share one hash tag made of the prefix.
    pub cluster: bool,
    /// Prefix of every Redis key.
    pub prefix: String,
    /// A delivery not acknowledged within this is re-delivered.
    pub visibility_timeout_ms: u64,
    /// Deliveries before a task is dead-lettered.
    pub max_attempts: u32,
    /// First retry delay; doubles per attempt.
    pub retry_backoff_ms: u64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            url: None,
            cluster: false,
            prefix: "copyhound:queue:".into(),
            visibility_timeout_ms: 300_000,
            max_attempts: 5,
            retry_backoff_ms: 2_000,
        }
    }
}

/// Crawler limits and politeness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrawlerConfig {
    /// User-Agent header; also the robots.txt agent name.
    pub user_agent: String,
    /// Allow loopback, private and link-local addresses (tests, intranets).
    pub allow_private_addresses: bool,
    /// Responses are cut off past this many bytes.
    pub max_body_bytes: u64,
    /// TCP connect timeout.
    pub connect_timeout_ms: u64,
    /// Whole-request timeout, body included.
    pub total_timeout_ms: u64,
    /// Redirects followed before giving up.
    pub max_redirects: u32,
    /// Requests in flight over all hosts.
    pub global_concurrency: u32,
    /// Retries of a request that timed out or got a 5xx / 429 answer.
    pub max_retries: u32,
    /// Backoff before the first retry; doubled on each further one.
    pub retry_backoff_ms: u64,
    /// Links kept per page (link farms are cut here).
    pub max_links_per_page: u32,
    /// Chromium binary for sites rendered by a browser (`render = "chromium"`).
    pub chromium: String,
    /// Time one page may take to render, its script requests included.
    pub render_timeout_ms: u64,
    /// Requests one rendered page may make (scripts, data); more are refused.
    pub max_render_requests: u32,
    /// Longest pause between two fetches of a chapter page that does not
    /// change: such a page is fetched again after half the time it has been
    /// stable, at most this long (hours). 0 fetches every page on every run.
    pub max_revisit_hours: u64,
    /// Quiet watching (between release bursts): a watched list page is
    /// revisited by how often it changes, at most once per this many seconds
    /// on one host, and every request of a quiet visit waits this host's
    /// turn of one request a minute.
    pub min_revisit_seconds: u64,
    /// How long a release burst lasts (minutes): the work's list pages are
    /// revisited often at first, then less, until this is over.
    pub burst_minutes: u64,
    /// Titles a full crawl of a site with a known search (`search_url`)
    /// searches for, the publisher's newest works first (0: none).
    pub search_titles_per_run: u32,
    /// Whether suggested sites are checked (robots.txt and one page each).
    /// Off, suggestions are still recorded and stay `pending`: for
    /// benchmarks and tests, whose pages name real domains that must not be
    /// contacted.
    pub verify_suggestions: bool,
    /// Wall-clock budget of one crawl run (seconds): past it the run stops
    /// fetching and ends `partial`, so no site holds a crawl slot for ever.
    pub max_run_seconds: u64,
    /// Crawl runs one publisher may have running at once, over all workers
    /// (0: no limit): past it a run waits its turn, so one tenant's slow sites
    /// never hold every crawl slot.
    pub max_crawls_per_publisher: u32,
    /// Shortest interval between two scheduled crawls of one site (seconds),
    /// measured on the slots the cron really fires at.
    pub min_schedule_interval_seconds: u64,
    /// Fonts whose outlines decode site web fonts (files or directories,
    /// `:`-separated); empty: the CJK fonts installed under /usr/share/fonts.
    pub reference_fonts: String,
}

impl Default for CrawlerConfig {
    fn default() -> Self {
        Self {
            user_agent: "CopyHound/0.1 (+copyright tracking)".into(),
            allow_private_addresses: false,
            max_body_bytes: 8 << 20,
            connect_timeout_ms: 5_000,
            total_timeout_ms: 30_000,
            max_redirects: 5,
            global_concurrency: 16,
            max_retries: 2,
            retry_backoff_ms: 500,
            max_links_per_page: 2_000,
            chromium: "chromium".into(),
            render_timeout_ms: 15_000,
            max_render_requests: 50,
            max_revisit_hours: 168,
            min_revisit_seconds: 600,
            burst_minutes: 60,
            search_titles_per_run: 20,
            verify_suggestions: true,
            max_run_seconds: 6 * 3600,
            max_crawls_per_publisher: 2,
            min_schedule_interval_seconds: 300,
            reference_fonts: String::new(),
        }
    }
}

/// Evidence thresholds of the comparison workers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MatcherConfig {
    /// Copied characters (counted on the chapter) that make a page infringing.
    pub min_copied_chars: u32,
    /// Or: share of the chapter found on the page.
    pub min_chapter_coverage: f32,
    /// Or, for one page of a chapter split over several: copied characters of
    /// that page, when the pages together clear the bar.
    pub min_part_copied_chars: u32,
    /// Candidate chapters verified per page.
    pub max_candidates: u32,
    /// Memory for chapters prepared for verification, kept between pages
    /// (MiB per worker process; 0 prepares every candidate anew).
    pub chapter_cache_mib: u64,
}

impl Default for MatcherConfig {
    fn default() -> Self {
        Self {
            min_copied_chars: 300,
            min_chapter_coverage: 0.5,
            min_part_copied_chars: 120,
            max_candidates: 32,
            chapter_cache_mib: 256,
        }
    }
}

/// Worker processes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerConfig {
    /// Tasks handled at once (and as many site crawls beside them). Tasks
    /// wait on syncs, the index and the network for much of their time: 8
    /// keep two cores busy where 2 left them half idle (docs/performance.md).
    pub concurrency: u32,
    /// Time given to in-flight tasks after SIGTERM.
    pub shutdown_deadline_ms: u64,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            concurrency: 8,
            shutdown_deadline_ms: 30_000,
        }
    }
}

/// Shortest operator key `validate` accepts: it logs into the console, so it
/// must not be guessable.
const MIN_ADMIN_KEY_CHARS: usize = 12;

/// The HTTP API.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Listen address.
    pub listen: String,
    /// Bootstrap admin key (secret); masked in every printout.
    pub admin_key: Option<String>,
    /// Largest accepted upload.
    pub max_upload_bytes: u64,
    /// Uploads parsed at once on the blocking pool; 0 means half the cores.
    pub upload_workers: u32,
    /// Where users reach the console (`https://copyhound.example`, no path
    /// or with the proxy's prefix): alert e-mails link each match to
    /// `<public_url>/ui/matches/<id>`. Unset: e-mails carry no links.
    pub public_url: Option<String>,
}

impl ServerConfig {
    /// The console page of match `match_id`, when `public_url` is set.
    pub fn match_link(&self, match_id: &str) -> Option<String> {
        let base = self.public_url.as_deref()?.trim_end_matches('/');
        Some(format!("{base}/ui/matches/{match_id}"))
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            admin_key: None,
            max_upload_bytes: 64 << 20,
            upload_workers: 0,
            public_url: None,
        }
    }
}

/// Scheduled reports and alert webhooks, per publisher. Run by the scheduler
/// process (`copyhound scheduler`, or `serve` on the embedded default), beside
/// the schedules and alerts publishers set in the console.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportsConfig {
    /// Reports generated on a cron schedule.
    pub schedules: Vec<ReportSchedule>,
    /// Webhooks called when confirmed infringements reach a threshold.
    pub alerts: Vec<AlertHook>,
    /// Seconds between the scheduler's checks of schedules and alerts (1..=3600).
    pub tick_seconds: u64,
}

impl Default for ReportsConfig {
    fn default() -> Self {
        Self {
            schedules: Vec::new(),
            alerts: Vec::new(),
            tick_seconds: 60,
        }
    }
}

/// One scheduled report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSchedule {
    /// The publisher reported on.
    pub publisher: String,
    /// Cron expression, UTC (`0 6 * * 1`: Mondays 06:00).
    pub cron: String,
    /// Output format.
    #[serde(default = "default_report_format")]
    pub format: crate::model::ReportFormat,
}

fn default_report_format() -> crate::model::ReportFormat {
    crate::model::ReportFormat::Html
}

/// One alert: when a publisher's newly confirmed infringements reach
/// `threshold_new_confirmed`, a signed JSON POST to `webhook_url`, an e-mail
/// to `email_to` (through `[smtp]`), or both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertHook {
    /// The publisher watched.
    pub publisher: String,
    /// Where to POST.
    #[serde(default)]
    pub webhook_url: Option<String>,
    /// HMAC-SHA256 key of the `X-CopyHound-Signature` header (secret);
    /// required with `webhook_url`.
    #[serde(default)]
    pub secret: Option<String>,
    /// Who gets the e-mail.
    #[serde(default)]
    pub email_to: Vec<String>,
    /// Confirmed (or detected) matches since the last alert that trigger one.
    #[serde(default = "default_alert_threshold")]
    pub threshold_new_confirmed: u32,
    /// What the threshold counts: `confirmed` (default) or `detected`.
    #[serde(default)]
    pub alert_on: crate::model::AlertOn,
}

/// How the SMTP connection is secured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmtpSecurity {
    /// Plain SMTP, upgraded with STARTTLS (required).
    Starttls,
    /// TLS from the first byte (SMTPS, port 465).
    Tls,
    /// No encryption: only for a relay on the same host or network.
    None,
}

/// The mail server for e-mail alerts (`COPYHOUND_SMTP_HOST`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SmtpConfig {
    /// Server host name; empty: e-mail alerts are not configured.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// How the connection is secured.
    pub security: SmtpSecurity,
    /// Sender address (`CopyHound <alerts@publisher.example>`).
    pub from: String,
    /// Login, when the server wants one.
    pub username: Option<String>,
    /// Password (secret); masked in every printout.
    pub password: Option<String>,
    /// Seconds before a connection or command times out.
    pub timeout_secs: u64,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        Self {
            host: String::new(),
            port: 587,
            security: SmtpSecurity::Starttls,
            from: String::new(),
            username: None,
            password: None,
            timeout_secs: 30,
        }
    }
}

/// Evidence bundles (`COPYHOUND_EVIDENCE_TSA_URL`, ...): the RFC 3161
/// time-stamping authority that dates each bundle's manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvidenceConfig {
    /// The TSA's http(s) URL (`application/timestamp-query`). Empty: bundles
    /// cannot be made.
    pub tsa_url: String,
    /// A PEM file of the certificates that complete the TSA's chain up to
    /// its root (the token carries the TSA's own); they go into each bundle
    /// so it verifies offline.
    pub tsa_certificates: Option<PathBuf>,
}

/// RDAP lookups of who to notify about a site (`COPYHOUND_RDAP_BOOTSTRAP`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RdapConfig {
    /// Where the RFC 9224 bootstrap files (`dns.json`, `ipv4.json`,
    /// `ipv6.json`) are: a directory, or an http(s) URL ending in `/` such as
    /// IANA's `https://data.iana.org/rdap/`. Empty: lookups are not configured.
    pub bootstrap: String,
    /// Queries per second to one RDAP server (fractions allowed: 0.5 is one
    /// every two seconds).
    pub requests_per_second: f64,
    /// How long an answer (and a bootstrap file) is reused, seconds.
    pub cache_ttl_seconds: u64,
    /// Most answers kept in the cache; the oldest go first.
    pub cache_entries: u32,
    /// Deadline of one query, redirects included, milliseconds.
    pub timeout_ms: u64,
    /// Largest answer read, bytes.
    pub max_response_bytes: u64,
    /// Most redirects followed by one query.
    pub max_redirects: u32,
}

impl Default for RdapConfig {
    fn default() -> Self {
        Self {
            bootstrap: String::new(),
            requests_per_second: 1.0,
            cache_ttl_seconds: 86_400,
            cache_entries: 10_000,
            timeout_ms: 10_000,
            max_response_bytes: 1 << 20,
            max_redirects: 3,
        }
    }
}

fn default_alert_threshold() -> u32 {
    1
}

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Logging; `RUST_LOG` overrides `filter`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// Output format.
    pub format: LogFormat,
    /// tracing filter directive.
    pub filter: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            filter: "info".into(),
        }
    }
}

/// Which backend a component resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The embedded default, files under this directory.
    Embedded(PathBuf),
    /// A production engine at this URL.
    Remote(String),
}

impl Config {
    /// Checks values that parse but make no sense.
    pub fn validate(&self) -> Result<()> {
        if self.version != 1 {
            return Err(config_error(format!(
                "version = {}: only version 1 is supported",
                self.version
            )));
        }
        if !self.evidence.tsa_url.is_empty() {
            check_scheme(
                "evidence.tsa_url",
                Some(&self.evidence.tsa_url),
                &["http://", "https://"],
            )?;
        }
        check_scheme(
            "store.url",
            self.store.url.as_deref(),
            &["mongodb://", "mongodb+srv://"],
        )?;
        check_scheme(
            "index.url",
            self.index.url.as_deref(),
            &["redis://", "rediss://"],
        )?;
        check_scheme(
            "queue.url",
            self.queue.url.as_deref(),
            &["redis://", "rediss://"],
        )?;
        if self.index.max_distance > 8 {
            return Err(config_error(format!(
                "index.max_distance = {}: at most 8 (the index splits 64 bits into max_distance + 1 segments)",
                self.index.max_distance
            )));
        }
        if !(60..=7 * 86_400).contains(&self.crawler.min_revisit_seconds) {
            return Err(config_error(
                "crawler.min_revisit_seconds must be within 60..=604800",
            ));
        }
        if !(1..=24 * 60).contains(&self.crawler.burst_minutes) {
            return Err(config_error(
                "crawler.burst_minutes must be within 1..=1440",
            ));
        }
        if self.crawler.max_run_seconds == 0 {
            return Err(config_error("crawler.max_run_seconds must be at least 1"));
        }
        if self.queue.max_attempts == 0 {
            return Err(config_error("queue.max_attempts must be at least 1"));
        }
        if self.worker.concurrency == 0 {
            return Err(config_error("worker.concurrency must be at least 1"));
        }
        if !(0.0..=1.0).contains(&self.matcher.min_chapter_coverage) {
            return Err(config_error(
                "matcher.min_chapter_coverage must be within [0, 1]",
            ));
        }
        if !(1..=3600).contains(&self.reports.tick_seconds) {
            return Err(config_error(format!(
                "reports.tick_seconds = {}: must be within 1..=3600",
                self.reports.tick_seconds
            )));
        }
        for schedule in &self.reports.schedules {
            schedule.publisher.parse::<crate::ids::PublisherId>()?;
        }
        for hook in &self.reports.alerts {
            hook.publisher.parse::<crate::ids::PublisherId>()?;
            if hook.webhook_url.is_none() && hook.email_to.is_empty() {
                return Err(config_error(format!(
                    "reports.alerts for {}: set webhook_url, email_to, or both",
                    hook.publisher
                )));
            }
            if let Some(url) = &hook.webhook_url {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(config_error(format!(
                        "reports.alerts: webhook_url {url:?} is not an http(s) URL"
                    )));
                }
                if hook.secret.as_deref().is_none_or(str::is_empty) {
                    return Err(config_error(
                        "reports.alerts: a webhook_url needs a non-empty secret",
                    ));
                }
            }
            for address in &hook.email_to {
                check_address("reports.alerts: email_to", address)?;
            }
            if !hook.email_to.is_empty() && self.smtp.host.is_empty() {
                return Err(config_error(format!(
                    "reports.alerts for {} sends e-mail: set smtp.host and smtp.from",
                    hook.publisher
                )));
            }
        }
        if !self.smtp.host.is_empty() {
            check_address("smtp.from", &self.smtp.from)?;
            if self.smtp.timeout_secs == 0 {
                return Err(config_error("smtp.timeout_secs must be at least 1"));
            }
        }
        self.check_rdap()?;
        if let Some(key) = self
            .server
            .admin_key
            .as_deref()
            .filter(|key| !key.is_empty())
            && key.chars().count() < MIN_ADMIN_KEY_CHARS
        {
            return Err(config_error(format!(
                "server.admin_key (COPYHOUND_SERVER_ADMIN_KEY) has {} characters: the operator \
                 key needs at least {MIN_ADMIN_KEY_CHARS} (e.g. `openssl rand -hex 32`)",
                key.chars().count()
            )));
        }
        if let Some(url) = &self.server.public_url
            && !is_public_url(url)
        {
            return Err(config_error(format!(
                "server.public_url = {url:?}: expected an http(s) URL without query or \
                 fragment, like https://copyhound.example"
            )));
        }
        if self.server.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(config_error(format!(
                "server.listen = {:?} is not an address like 127.0.0.1:8080",
                self.server.listen
            )));
        }
        Ok(())
    }

    /// Returns the store backend.
    pub fn store_backend(&self) -> Backend {
        remote_or_embedded(self.store.url.as_deref(), &self.data_dir, "store")
    }

    /// Returns the index backend.
    pub fn index_backend(&self) -> Backend {
        remote_or_embedded(self.index.url.as_deref(), &self.data_dir, "index")
    }

    /// Whether any of the store, index and queue is the embedded default.
    pub fn uses_embedded_backends(&self) -> bool {
        [
            self.store_backend(),
            self.index_backend(),
            self.queue_backend(),
        ]
        .iter()
        .any(|backend| matches!(backend, Backend::Embedded(_)))
    }

    /// Returns the queue backend.
    pub fn queue_backend(&self) -> Backend {
        remote_or_embedded(self.queue.url.as_deref(), &self.data_dir, "queue")
    }

    /// Returns a copy with every secret masked, for printing.
    pub fn masked(&self) -> Config {
        let mut copy = self.clone();
        for url in [
            &mut copy.store.url,
            &mut copy.index.url,
            &mut copy.queue.url,
        ]
        .into_iter()
        .flatten()
        {
            *url = mask_url(url);
        }
        if copy.server.admin_key.is_some() {
            copy.server.admin_key = Some("****".into());
        }
        for hook in &mut copy.reports.alerts {
            if hook.secret.is_some() {
                hook.secret = Some("****".into());
            }
        }
        if copy.smtp.password.is_some() {
            copy.smtp.password = Some("****".into());
        }
        copy
    }
}

impl Config {
    fn check_rdap(&self) -> Result<()> {
        let rdap = &self.rdap;
        if !(rdap.requests_per_second.is_finite() && rdap.requests_per_second > 0.0) {
            return Err(config_error(
                "rdap.requests_per_second must be a number above 0",
            ));
        }
        if rdap.timeout_ms == 0 || rdap.max_response_bytes == 0 {
            return Err(config_error(
                "rdap.timeout_ms and rdap.max_response_bytes must be at least 1",
            ));
        }
        let bootstrap = rdap.bootstrap.trim();
        let remote = bootstrap.starts_with("http://") || bootstrap.starts_with("https://");
        if remote && !bootstrap.ends_with('/') {
            return Err(config_error(format!(
                "rdap.bootstrap {bootstrap:?}: a URL must end in `/` (the files dns.json, \
                 ipv4.json and ipv6.json are read under it)"
            )));
        }
        if !remote && bootstrap.contains("://") {
            return Err(config_error(format!(
                "rdap.bootstrap {bootstrap:?} is neither a directory nor an http(s) URL"
            )));
        }
        Ok(())
    }
}

fn remote_or_embedded(url: Option<&str>, data_dir: &Path, component: &str) -> Backend {
    match url {
        Some(url) => Backend::Remote(url.to_string()),
        None => Backend::Embedded(data_dir.join(component)),
    }
}

/// Checks that `address` looks like `name@domain` or `Name <name@domain>`,
/// without line breaks (they would inject mail headers).
fn check_address(key: &str, address: &str) -> Result<()> {
    if crate::model::is_email_address(address) {
        Ok(())
    } else {
        Err(config_error(format!(
            "{key}: {address:?} is not an e-mail address"
        )))
    }
}

fn config_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Config, message)
}

fn check_scheme(key: &str, url: Option<&str>, schemes: &[&str]) -> Result<()> {
    let Some(url) = url else { return Ok(()) };
    if schemes.iter().any(|scheme| url.starts_with(scheme)) {
        return Ok(());
    }
    Err(config_error(format!(
        "{key} = {:?}: expected a URL starting with {} (leave it unset for the embedded default)",
        mask_url(url),
        schemes.join(" or ")
    )))
}

/// Whether `url` is an `http(s)://host[/path]` console address: no user
/// info, query, fragment, whitespace or control characters.
fn is_public_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    let host = rest.split('/').next().unwrap_or_default();
    !host.is_empty()
        && !host.contains('@')
        && !rest.contains(['?', '#', '"', '<', '>'])
        && !rest.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Returns `url` with the password of its user-info replaced by `****`.
pub fn mask_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_string();
    };
    let user_info = &rest[..at];
    let masked = match user_info.split_once(':') {
        Some((user, _password)) => format!("{user}:****"),
        None => "****".to_string(),
    };
    format!("{scheme}://{masked}{}", &rest[at..])
}
