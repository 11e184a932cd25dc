//! Site definitions: building and validating a [`Site`], compiling its URL
//! rules and reading its schedule. Everything a tenant or an operator can get
//! wrong in `POST /sites` or `copyhound sites add` is caught by [`validate_site`]
//! with an `InvalidInput` error that says which field is wrong, before anything
//! is stored or crawled.
//!
//! URL patterns match the whole normalized URL. A pattern starting with `re:` is
//! a regular expression (unanchored, as written); any other pattern is a glob in
//! which `*` matches any run of characters (slashes included) and `?` one
//! character, anchored at both ends: `http://127.0.0.1:8001/book/*`.

mod validate;

use crate::ids::{PublisherId, SiteId};
use crate::model::{ExtractionHints, Site, Timestamp};
use crate::{Error, Result};
use chrono::Utc;
use regex::{RegexBuilder, RegexSet, RegexSetBuilder};
use url::Url;

pub use validate::{
    MAX_CONCURRENCY, MAX_DEPTH, MAX_NAME_CHARS, MAX_PAGES_PER_RUN, MAX_PATTERN_CHARS, MAX_PATTERNS,
    MAX_RATE_LIMIT_PER_SECOND, MAX_SEEDS, SEARCH_KEY, SEED_PATTERN, SitePolicy, check_seed, quoted,
    validate_site,
};

/// Largest compiled program of one `re:` pattern; bounds the memory a hostile
/// pattern such as `(a{1000}){1000}` can claim.
pub const MAX_PATTERN_PROGRAM_BYTES: usize = 1 << 20;
/// Largest compiled allow or deny set of one site.
pub const MAX_PATTERN_SET_BYTES: usize = 16 << 20;

/// Builds a validated [`Site`] with sensible defaults.
#[derive(Clone, Debug)]
pub struct SiteBuilder {
    site: Site,
    policy: SitePolicy,
}

/// Returns a site of `publisher_id` with every default and a new id: no name,
/// no seeds, enabled, unscheduled.
pub fn default_site(publisher_id: PublisherId) -> Site {
    Site {
        id: SiteId::generate(),
        publisher_id,
        name: String::new(),
        seeds: Vec::new(),
        allow_patterns: Vec::new(),
        deny_patterns: Vec::new(),
        max_depth: Site::DEFAULT_MAX_DEPTH,
        max_pages_per_run: Site::DEFAULT_MAX_PAGES_PER_RUN,
        schedule: None,
        rate_limit_per_second: Site::DEFAULT_RATE_LIMIT_PER_SECOND,
        concurrency: Site::DEFAULT_CONCURRENCY,
        charset_override: None,
        extraction: ExtractionHints::default(),
        enabled: true,
        created_at: Utc::now(),
        audience: None,
        search_url: None,
    }
}

impl SiteBuilder {
    /// Starts a site of `publisher_id` named `name`, crawled from `seeds`.
    pub fn new(publisher_id: PublisherId, name: impl Into<String>, seeds: Vec<String>) -> Self {
        let mut site = default_site(publisher_id);
        site.name = name.into();
        site.seeds = seeds;
        Self {
            site,
            policy: SitePolicy::default(),
        }
    }

    /// Sets what the seeds may point at (default: public addresses only).
    pub fn policy(mut self, policy: SitePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets the id (default: generated).
    pub fn id(mut self, id: SiteId) -> Self {
        self.site.id = id;
        self
    }

    /// Sets the allowed URL patterns (default: same hosts as the seeds).
    pub fn allow_patterns(mut self, patterns: Vec<String>) -> Self {
        self.site.allow_patterns = patterns;
        self
    }

    /// Sets the denied URL patterns.
    pub fn deny_patterns(mut self, patterns: Vec<String>) -> Self {
        self.site.deny_patterns = patterns;
        self
    }

    /// Sets the link depth and the fetch budget of one run.
    pub fn limits(mut self, max_depth: u32, max_pages_per_run: u32) -> Self {
        self.site.max_depth = max_depth;
        self.site.max_pages_per_run = max_pages_per_run;
        self
    }

    /// Sets the cron schedule (UTC, 5 or 6 fields).
    pub fn schedule(mut self, cron: impl Into<String>) -> Self {
        self.site.schedule = Some(cron.into());
        self
    }

    /// Sets requests per second (0: unlimited) and requests in flight per host.
    pub fn politeness(mut self, rate_limit_per_second: f64, concurrency: u32) -> Self {
        self.site.rate_limit_per_second = rate_limit_per_second;
        self.site.concurrency = concurrency;
        self
    }

    /// Forces a charset.
    pub fn charset_override(mut self, charset: impl Into<String>) -> Self {
        self.site.charset_override = Some(charset.into());
        self
    }

    /// Sets the extraction hints.
    pub fn extraction(mut self, hints: ExtractionHints) -> Self {
        self.site.extraction = hints;
        self
    }

    /// Sets the creation time (default: now).
    pub fn created_at(mut self, created_at: Timestamp) -> Self {
        self.site.created_at = created_at;
        self
    }

    /// Returns the site with normalized seeds, or the first validation error.
    pub fn build(mut self) -> Result<Site> {
        self.site.seeds = self
            .site
            .seeds
            .iter()
            .enumerate()
            .map(|(index, seed)| check_seed(index, seed, &self.policy))
            .collect::<Result<_>>()?;
        validate_site(&self.site, &self.policy)?;
        Ok(self.site)
    }
}

pub use crate::schedule::{last_slot, next_slot, parse_schedule};

/// The compiled allow/deny rules of a site.
#[derive(Clone, Debug)]
pub struct UrlRules {
    allow: Matchers,
    deny: Matchers,
}

#[derive(Clone, Debug)]
enum Matchers {
    /// Same host and port as one of these origins.
    SameHosts(Vec<(String, Option<u16>)>),
    Patterns(RegexSet),
}

impl UrlRules {
    /// Compiles the rules of a site.
    pub fn for_site(site: &Site) -> Result<Self> {
        let allow = if site.allow_patterns.is_empty() {
            let hosts = site
                .seeds
                .iter()
                .filter_map(|seed| Url::parse(seed).ok())
                .filter_map(|url| Some((url.host_str()?.to_string(), url.port_or_known_default())))
                .collect();
            Matchers::SameHosts(hosts)
        } else {
            Matchers::Patterns(compile_patterns("allow_patterns", &site.allow_patterns)?)
        };
        let deny = Matchers::Patterns(compile_patterns("deny_patterns", &site.deny_patterns)?);
        Ok(Self { allow, deny })
    }

    /// Returns whether a normalized URL may be crawled.
    pub fn allows(&self, url: &str) -> bool {
        self.allow.matches(url) && !self.deny.matches(url)
    }
}

impl Matchers {
    fn matches(&self, url: &str) -> bool {
        match self {
            Matchers::Patterns(set) => set.is_match(url),
            Matchers::SameHosts(hosts) => Url::parse(url).is_ok_and(|parsed| {
                let port = parsed.port_or_known_default();
                hosts.iter().any(|(host, seed_port)| {
                    parsed.host_str() == Some(host.as_str()) && port == *seed_port
                })
            }),
        }
    }
}

fn compile_patterns(field: &str, patterns: &[String]) -> Result<RegexSet> {
    let mut sources = Vec::with_capacity(patterns.len());
    for (index, pattern) in patterns.iter().enumerate() {
        let source = match pattern.strip_prefix("re:") {
            Some(regex) => regex.to_string(),
            None => glob_to_regex(pattern),
        };
        RegexBuilder::new(&source)
            .size_limit(MAX_PATTERN_PROGRAM_BYTES)
            .build()
            .map_err(|err| {
                Error::invalid(format!(
                    "`{field}[{index}]`: `{}` is not a valid pattern: {err}",
                    quoted(pattern)
                ))
            })?;
        sources.push(source);
    }
    RegexSetBuilder::new(&sources)
        .size_limit(MAX_PATTERN_SET_BYTES)
        .build()
        .map_err(|err| {
            Error::invalid(format!(
                "`{field}`: the patterns are too large together: {err}"
            ))
        })
}

fn glob_to_regex(glob: &str) -> String {
    let mut regex = String::with_capacity(glob.len() + 8);
    regex.push('^');
    for c in glob.chars() {
        match c {
            '*' => regex.push_str(".*"),
            '?' => regex.push('.'),
            other => regex.push_str(&regex::escape(other.encode_utf8(&mut [0; 4]))),
        }
    }
    regex.push('$');
    regex
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPBACK: SitePolicy = SitePolicy::new(true);

    fn builder() -> SiteBuilder {
        SiteBuilder::new(
            "P01".parse().unwrap(),
            "笔趣阁",
            vec!["http://127.0.0.1:8003/index.html#x".into()],
        )
        .policy(LOOPBACK)
    }

    #[test]
    fn builds_a_valid_site_with_normalized_seeds() {
        let site = builder().schedule("0 */6 * * *").build().unwrap();
        assert_eq!(site.seeds, ["http://127.0.0.1:8003/index.html"]);
        let rules = UrlRules::for_site(&site).unwrap();
        assert!(rules.allows("http://127.0.0.1:8003/read/1.html"));
        assert!(!rules.allows("http://127.0.0.1:8004/read/1.html"));
    }

    #[test]
    fn invalid_fields_are_named() {
        let cases: Vec<(SiteBuilder, &str)> = vec![
            (builder().schedule("every day"), "schedule"),
            (
                SiteBuilder::new("P01".parse().unwrap(), "x", vec!["ftp://a/".into()]),
                "seed",
            ),
            (
                SiteBuilder::new("P01".parse().unwrap(), "x", vec![]),
                "`seeds` must hold",
            ),
            (
                builder().allow_patterns(vec!["re:([".into()]),
                "allow_patterns",
            ),
            (builder().politeness(-1.0, 1), "rate_limit"),
            (builder().politeness(1.0, 0), "concurrency"),
            (builder().charset_override("klingon"), "charset"),
            (
                builder().extraction(ExtractionHints {
                    content_selector: Some("##".into()),
                    next_page_selector: None,
                    render: Default::default(),
                }),
                "content_selector",
            ),
        ];
        for (case, field) in cases {
            let err = case.build().unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
            assert!(err.to_string().contains(field), "{err} should name {field}");
        }
    }

    #[test]
    fn globs_and_regexes_match_whole_urls() {
        let site = builder()
            .allow_patterns(vec![
                "http://127.0.0.1:8003/*".into(),
                "re:^https://m\\.example\\.com/".into(),
            ])
            .deny_patterns(vec!["*/search/*".into(), "*.jpg".into()])
            .build()
            .unwrap();
        let rules = UrlRules::for_site(&site).unwrap();
        assert!(rules.allows("http://127.0.0.1:8003/read/1.html"));
        assert!(rules.allows("https://m.example.com/read/1.html"));
        assert!(!rules.allows("http://127.0.0.1:8003/search/read/1.html"));
        assert!(!rules.allows("http://127.0.0.1:8003/a.jpg"));
        assert!(!rules.allows("http://127.0.0.2:8003/read/1.html"));
    }

    #[test]
    fn schedule_slots() {
        let cron = parse_schedule("0 */6 * * *").unwrap();
        let now: Timestamp = "2024-05-01T13:30:00Z".parse().unwrap();
        assert_eq!(
            last_slot(&cron, now).unwrap().to_rfc3339(),
            "2024-05-01T12:00:00+00:00"
        );
        assert_eq!(
            next_slot(&cron, now).unwrap().to_rfc3339(),
            "2024-05-01T18:00:00+00:00"
        );
    }
}
