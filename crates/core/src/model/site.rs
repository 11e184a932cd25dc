use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{CrawlRunId, PublisherId, SiteId};

/// Hints that help extraction on a site whose layout defeats the generic detector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractionHints {
    /// CSS selector of the block holding the chapter text.
    pub content_selector: Option<String>,
    /// CSS selector of the "next page" link of a chapter split over pages.
    pub next_page_selector: Option<String>,
}

/// A watched (suspected piracy) site and how to crawl it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// Its id.
    pub id: SiteId,
    /// The publisher that watches it.
    pub publisher_id: PublisherId,
    /// Display name.
    pub name: String,
    /// Where crawls start.
    pub seeds: Vec<String>,
    /// URL patterns a discovered link must match (empty: same host as a seed).
    #[serde(default)]
    pub allow_patterns: Vec<String>,
    /// URL patterns never followed.
    #[serde(default)]
    pub deny_patterns: Vec<String>,
    /// Link depth from a seed.
    pub max_depth: u32,
    /// Fetch budget of one run.
    pub max_pages_per_run: u32,
    /// Cron expression (UTC); `None`: only on demand.
    pub schedule: Option<String>,
    /// Requests per second per host.
    pub rate_limit_per_second: f64,
    /// Requests in flight per host.
    pub concurrency: u32,
    /// Forces a charset when the site lies about it.
    pub charset_override: Option<String>,
    /// Extraction hints.
    #[serde(default)]
    pub extraction: ExtractionHints,
    /// Disabled sites are never crawled.
    pub enabled: bool,
    /// When it was added.
    pub created_at: Timestamp,
}

/// Lifecycle of a crawl run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrawlRunStatus {
    /// Enqueued, not started.
    Queued,
    /// Fetching.
    Running,
    /// Finished (individual page failures are in the counters).
    Succeeded,
    /// Aborted by an error that stopped the whole run.
    Failed,
    /// Stopped by an operator.
    Cancelled,
}

/// What one run did; failures are counted by reason code.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlCounters {
    /// Pages fetched with a body.
    pub fetched: u64,
    /// Pages new to the store.
    pub new_pages: u64,
    /// Pages whose content changed since the last visit.
    pub changed_pages: u64,
    /// Pages skipped (robots.txt, not modified, filtered), by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Pages that failed, by reason.
    pub failed: BTreeMap<String, u64>,
    /// Body bytes received.
    pub bytes: u64,
}

/// One crawl of a site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlRun {
    /// Its id.
    pub id: CrawlRunId,
    /// The crawled site.
    pub site_id: SiteId,
    /// Lifecycle state.
    pub status: CrawlRunStatus,
    /// When it was enqueued.
    pub created_at: Timestamp,
    /// When fetching started.
    pub started_at: Option<Timestamp>,
    /// When it ended.
    pub finished_at: Option<Timestamp>,
    /// Counters.
    pub counters: CrawlCounters,
    /// The last few errors, `url: reason`, for operators.
    #[serde(default)]
    pub recent_errors: Vec<String>,
}

super::persisted::persisted_v1!(Site => "site", CrawlRun => "crawl_run");
