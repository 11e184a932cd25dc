//! The one validation of a site, used by the API (`POST` and `PATCH /sites`)
//! and by the CLI (`copyhound sites add`), so that a site refused by one is
//! refused by the other. Every field a tenant or an operator can get wrong is
//! checked before anything is stored: addresses (the crawl-time address policy
//! applied to the seeds' literal hosts), credentials, patterns, selectors,
//! schedules and limits. Errors are `InvalidInput`, name the field
//! (`seeds[2]`, `allow_patterns[0]`, `extraction.content_selector`) and never
//! echo credentials.

use crate::config::CrawlerConfig;
use crate::model::Site;
use crate::{Error, Result};
use chrono::Utc;
use url::Url;

use super::{UrlRules, next_slot, parse_schedule};
use crate::net::is_public_host;
use crate::urls::{MAX_URL_LEN, normalize_url};

/// Longest site name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Most seeds of one site.
pub const MAX_SEEDS: usize = 1000;
/// Most allow or deny patterns of one site.
pub const MAX_PATTERNS: usize = 200;
/// Longest pattern or CSS selector, in characters.
pub const MAX_PATTERN_CHARS: usize = 1000;
/// Deepest link depth.
pub const MAX_DEPTH: u32 = 100;
/// Largest fetch budget of one run.
pub const MAX_PAGES_PER_RUN: u32 = 1_000_000;
/// Most requests in flight per host.
pub const MAX_CONCURRENCY: u32 = 64;
/// Highest request rate per host (0 means unlimited).
pub const MAX_RATE_LIMIT_PER_SECOND: f64 = 1000.0;
/// Lowest request rate per host other than 0: one request a minute. Slower
/// would hold a crawl slot for hours per page.
pub const MIN_RATE_LIMIT_PER_SECOND: f64 = 1.0 / 60.0;
/// The shape of a seed, as the API's schema documents it and as
/// [`check_seed`] holds it: an http(s) URL whose host is a DNS name (ASCII:
/// international names in punycode), an IPv4 literal or a bracketed IPv6
/// literal, an optional port up to 65535, then a path, query or fragment
/// without whitespace or control characters. ECMAScript and Rust read it alike.
pub const SEED_PATTERN: &str = "^[Hh][Tt][Tt][Pp][Ss]?://(?:\\[[0-9A-Fa-f:.]+\\]|(?:[A-Za-z0-9_-]+\\.)*[A-Za-z0-9_-]+\\.?)(?::(?:[0-9]{1,4}|[0-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?(?:[/?#][^\\s\\x00-\\x1f\\x7f]*)?$";

/// Characters of a refused value quoted back in an error.
const QUOTED_CHARS: usize = 120;

/// What a deployment lets a site point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SitePolicy {
    /// Accept seeds on loopback, private, link-local and other non-public
    /// addresses (`crawler.allow_private_addresses`: tests, demo, intranets).
    pub allow_private_addresses: bool,
    /// Shortest interval between two slots of a site's schedule
    /// (`crawler.min_schedule_interval_seconds`).
    pub min_schedule_interval: std::time::Duration,
    /// Wall-clock budget of one run (`crawler.max_run_seconds`); a run queued
    /// or running for longer than this and an hour was abandoned.
    pub max_run: std::time::Duration,
}

impl Default for SitePolicy {
    fn default() -> Self {
        Self::for_crawler(&CrawlerConfig::default())
    }
}

impl SitePolicy {
    /// Returns the default policy, private addresses allowed or not.
    pub const fn new(allow_private_addresses: bool) -> Self {
        Self {
            allow_private_addresses,
            min_schedule_interval: std::time::Duration::from_secs(300),
            max_run: std::time::Duration::from_secs(360 * 60),
        }
    }

    /// Returns the policy that matches what the crawler configured by `config`
    /// will fetch.
    pub fn for_crawler(config: &CrawlerConfig) -> Self {
        Self {
            allow_private_addresses: config.allow_private_addresses,
            min_schedule_interval: std::time::Duration::from_secs(
                config.min_schedule_interval_seconds,
            ),
            max_run: std::time::Duration::from_secs(config.max_run_seconds),
        }
    }
}

/// Checks every field of a site under `policy`; returns an `InvalidInput`
/// error naming the first wrong field.
pub fn validate_site(site: &Site, policy: &SitePolicy) -> Result<()> {
    validate_name(&site.name)?;
    validate_seeds(&site.seeds, policy)?;
    for (field, patterns) in [
        ("allow_patterns", &site.allow_patterns),
        ("deny_patterns", &site.deny_patterns),
    ] {
        validate_pattern_list(field, patterns)?;
    }
    UrlRules::for_site(site)?;
    if let Some(cron) = &site.schedule {
        validate_schedule(cron, policy)?;
    }
    validate_limits(site)?;
    if let Some(template) = &site.search_url {
        validate_search_url(template, &site.seeds)?;
    }
    if site
        .audience
        .is_some_and(|audience| audience > Site::MAX_AUDIENCE)
    {
        return Err(Error::invalid(format!(
            "`audience`: at most {} visits a month",
            Site::MAX_AUDIENCE
        )));
    }
    if let Some(charset) = &site.charset_override
        && crate::charset::encoding_for_label(charset).is_none()
    {
        return Err(Error::invalid(format!(
            "`charset_override`: unknown charset `{}`",
            quoted(charset)
        )));
    }
    for (field, css) in [
        (
            "extraction.content_selector",
            &site.extraction.content_selector,
        ),
        (
            "extraction.next_page_selector",
            &site.extraction.next_page_selector,
        ),
    ] {
        if let Some(css) = css {
            validate_selector(field, css)?;
        }
    }
    Ok(())
}

/// The placeholder of a search URL where the title goes.
pub const SEARCH_KEY: &str = "{{key}}";

/// Checks a search template: an http(s) URL with one `{{key}}`, on the host
/// of one of the site's seeds (a site's search never sends us elsewhere).
fn validate_search_url(template: &str, seeds: &[String]) -> Result<()> {
    let refused = |why: &str| {
        Err(Error::invalid(format!(
            "`search_url`: `{}` {why}",
            quoted(template)
        )))
    };
    if template.len() > MAX_URL_LEN {
        return refused(&format!("is longer than {MAX_URL_LEN} bytes"));
    }
    if template.matches(SEARCH_KEY).count() != 1 {
        return refused("must hold `{{key}}` once, where the title goes");
    }
    let Ok(url) = Url::parse(&template.replace(SEARCH_KEY, "key")) else {
        return refused("is not a URL");
    };
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return refused("is not an http(s) URL with a host");
    }
    let host_of = |url: &Url| {
        (
            url.host_str().map(str::to_ascii_lowercase),
            url.port_or_known_default(),
        )
    };
    let on_a_seed = seeds
        .iter()
        .filter_map(|seed| Url::parse(seed).ok())
        .any(|seed| host_of(&seed) == host_of(&url));
    if !on_a_seed {
        return refused("is not on the host of one of the site's seeds");
    }
    Ok(())
}

/// Checks one seed under `policy` and returns its normalized form.
pub fn check_seed(index: usize, seed: &str, policy: &SitePolicy) -> Result<String> {
    let field = format!("seeds[{index}]");
    if seed.len() > MAX_URL_LEN {
        return Err(Error::invalid(format!(
            "`{field}` is longer than {MAX_URL_LEN} bytes"
        )));
    }
    static SHAPE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(SEED_PATTERN).expect("the seed pattern is a valid regex")
    });
    if let Ok(parsed) = Url::parse(seed.trim())
        && (!parsed.username().is_empty() || parsed.password().is_some())
    {
        return Err(Error::invalid(format!(
            "`{field}`: urls with credentials (user:password@) are refused: `{}`",
            quoted(seed)
        )));
    }
    if !SHAPE.is_match(seed) {
        return Err(Error::invalid(format!(
            "`{field}`: `{}` is not an http(s) url with a host name (letters, digits, `-`, `_` \
             and `.`; international names in punycode) or an IP address, without spaces",
            quoted(seed)
        )));
    }
    let normalized = normalize_url(seed).map_err(|err| {
        Error::invalid(format!(
            "`{field}`: `{}` is not an http(s) url with a host: {}",
            quoted(seed),
            err.message()
        ))
    })?;
    let parsed = Url::parse(&normalized).expect("a normalized url parses");
    let host = parsed.host().expect("a normalized url has a host");
    // URLs allow `*`, `!`, `$`, `'`... in a host; a name in the DNS does not
    // (international names arrive here in punycode; `_` occurs in real
    // subdomains and resolves).
    if let url::Host::Domain(name) = &host
        && !name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_'))
    {
        return Err(Error::invalid(format!(
            "`{field}`: `{}` is not an http(s) url with a host name (letters, digits, `-`, `_` and `.`)",
            quoted(seed)
        )));
    }
    if !policy.allow_private_addresses && !is_public_host(&host) {
        return Err(Error::invalid(format!(
            "`{field}`: `{}` is not a public address (loopback, private, link-local or reserved); \
             set crawler.allow_private_addresses to crawl such hosts",
            quoted(seed)
        )));
    }
    Ok(normalized)
}

/// Returns `value` as it may be quoted in an error: credentials masked, cut at
/// [`QUOTED_CHARS`] characters.
pub fn quoted(value: &str) -> String {
    let shown = if value.contains('@') {
        match Url::parse(value.trim()) {
            Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
                let _ = url.set_username("***");
                let _ = url.set_password(None);
                url.to_string()
            }
            Ok(url) => url.to_string(),
            Err(_) => "(not shown: it may hold credentials)".to_string(),
        }
    } else {
        value.to_string()
    };
    if shown.chars().count() <= QUOTED_CHARS {
        return shown;
    }
    let mut cut: String = shown.chars().take(QUOTED_CHARS).collect();
    cut.push('…');
    cut
}

fn validate_name(name: &str) -> Result<()> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(Error::invalid("`name` must not be empty"));
    }
    if trimmed.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid(format!(
            "`name` is longer than {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(())
}

fn validate_seeds(seeds: &[String], policy: &SitePolicy) -> Result<()> {
    if seeds.is_empty() {
        return Err(Error::invalid("`seeds` must hold at least one url"));
    }
    if seeds.len() > MAX_SEEDS {
        return Err(Error::invalid(format!(
            "`seeds` holds more than {MAX_SEEDS} urls"
        )));
    }
    for (index, seed) in seeds.iter().enumerate() {
        check_seed(index, seed, policy)?;
    }
    Ok(())
}

fn validate_pattern_list(field: &str, patterns: &[String]) -> Result<()> {
    if patterns.len() > MAX_PATTERNS {
        return Err(Error::invalid(format!(
            "`{field}` holds more than {MAX_PATTERNS} patterns"
        )));
    }
    for (index, pattern) in patterns.iter().enumerate() {
        if pattern.trim().is_empty() {
            return Err(Error::invalid(format!("`{field}[{index}]` is empty")));
        }
        if pattern.chars().count() > MAX_PATTERN_CHARS {
            return Err(Error::invalid(format!(
                "`{field}[{index}]` is longer than {MAX_PATTERN_CHARS} characters"
            )));
        }
    }
    Ok(())
}

/// Refuses a schedule that does not parse, never fires (`0 0 30 2 *`) or
/// fires faster than the policy's floor, however it is spelled.
fn validate_schedule(cron: &str, policy: &SitePolicy) -> Result<()> {
    if cron.chars().count() > MAX_PATTERN_CHARS {
        return Err(Error::invalid(format!(
            "`schedule` is longer than {MAX_PATTERN_CHARS} characters"
        )));
    }
    let parsed = parse_schedule(cron)?;
    if next_slot(&parsed, Utc::now()).is_none() {
        return Err(Error::invalid(format!(
            "`schedule`: `{}` never fires",
            quoted(cron)
        )));
    }
    crate::schedule::check_floor(&parsed, policy.min_schedule_interval, "schedule")
}

fn validate_limits(site: &Site) -> Result<()> {
    let rate = site.rate_limit_per_second;
    let in_range =
        rate == 0.0 || (MIN_RATE_LIMIT_PER_SECOND..=MAX_RATE_LIMIT_PER_SECOND).contains(&rate);
    if !rate.is_finite() || !in_range {
        return Err(Error::invalid(format!(
            "`rate_limit_per_second` must be 0 (unlimited) or a number from {MIN_RATE_LIMIT_PER_SECOND:.4} (one request a minute) to {MAX_RATE_LIMIT_PER_SECOND}"
        )));
    }
    if !(1..=MAX_CONCURRENCY).contains(&site.concurrency) {
        return Err(Error::invalid(format!(
            "`concurrency` must be between 1 and {MAX_CONCURRENCY}"
        )));
    }
    if site.max_depth > MAX_DEPTH {
        return Err(Error::invalid(format!(
            "`max_depth` must be at most {MAX_DEPTH}"
        )));
    }
    if !(1..=MAX_PAGES_PER_RUN).contains(&site.max_pages_per_run) {
        return Err(Error::invalid(format!(
            "`max_pages_per_run` must be between 1 and {MAX_PAGES_PER_RUN}"
        )));
    }
    Ok(())
}

fn validate_selector(field: &str, css: &str) -> Result<()> {
    if css.chars().count() > MAX_PATTERN_CHARS {
        return Err(Error::invalid(format!(
            "`{field}` is longer than {MAX_PATTERN_CHARS} characters"
        )));
    }
    scraper::Selector::parse(css).map_err(|err| {
        Error::invalid(format!(
            "`{field}`: `{}` is not a valid css selector: {err}",
            quoted(css)
        ))
    })?;
    Ok(())
}

#[cfg(test)]
#[path = "validate_test.rs"]
mod tests;
