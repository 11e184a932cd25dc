use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{CrawlRunId, PublisherId, SiteId};

/// Hints that help extraction on a site whose layout defeats the generic detector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ExtractionHints {
    /// CSS selector of the block holding the chapter text.
    pub content_selector: Option<String>,
    /// CSS selector of the "next page" link of a chapter split over pages.
    pub next_page_selector: Option<String>,
    /// How pages are read: as served, or rendered by headless Chromium first
    /// (chapters loaded by JavaScript).
    #[serde(default)]
    pub render: Render,
}

/// How a site's pages are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Render {
    /// The HTML as served, unless its text arrives by script: an inline
    /// script decodes an embedded payload, or the served text is thin and a
    /// script writes into the page. Such pages are rendered when a browser is
    /// installed. (`html`, the setting's earlier name, reads as `auto`.)
    #[default]
    #[serde(alias = "html")]
    Auto,
    /// The HTML as served, always: no page of the site is rendered.
    Never,
    /// The DOM after headless Chromium ran the page's scripts, every request
    /// it makes going through the crawler's fetcher.
    Chromium,
}

/// A watched (suspected piracy) site and how to crawl it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// The site's audience as the publisher estimates it (visits a month);
    /// its reach weighs into the score of the matches found on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<u64>,
    /// The site's own search, a URL on the site with `{{key}}` where a
    /// title goes (from a book-source file, kept when the suggestion was
    /// accepted): every full crawl also searches it for the publisher's
    /// titles, within `crawler.search_titles_per_run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_url: Option<String>,
}

impl Site {
    /// The largest audience a site may be given (visits a month).
    pub const MAX_AUDIENCE: u64 = 1_000_000_000_000;
}

/// The defaults of a new site, wherever it is registered (API, CLI, UI).
impl Site {
    /// Link depth from a seed.
    pub const DEFAULT_MAX_DEPTH: u32 = 5;
    /// Fetch budget of one run.
    pub const DEFAULT_MAX_PAGES_PER_RUN: u32 = 10_000;
    /// Requests per second per host.
    pub const DEFAULT_RATE_LIMIT_PER_SECOND: f64 = 1.0;
    /// Requests in flight per host.
    pub const DEFAULT_CONCURRENCY: u32 = 2;
}

/// Lifecycle of a crawl run. The outcome of a finished run is truthful: a run
/// that reached no page is `Failed`, one where some pages failed is `Partial`,
/// and the reasons are in `recent_errors`. New states are only ever added, so
/// stored runs stay readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CrawlRunStatus {
    /// Enqueued, not started.
    Queued,
    /// Fetching.
    Running,
    /// Finished; every page reached was fetched (or not modified). Pages left
    /// out by rule (robots.txt, content type) are counted as skipped.
    Succeeded,
    /// Finished with pages fetched, but some pages failed (counted by reason
    /// in `counters.failed`).
    Partial,
    /// No page fetched (robots.txt unreachable or disallowing, address refused,
    /// connection errors), or aborted by an error that stopped the whole run.
    Failed,
    /// Stopped by an operator.
    Cancelled,
}

impl CrawlRunStatus {
    /// Returns whether the run is over (nothing will change it any more).
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            Self::Succeeded | Self::Partial | Self::Failed | Self::Cancelled
        )
    }

    /// Returns the stable name (`"partial"`), as stored and served.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Partial => "partial",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// What one run did; failures are counted by reason code.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// Pages rendered by headless Chromium before extraction.
    #[serde(default)]
    pub rendered: u64,
    /// Wall time spent rendering them, milliseconds.
    #[serde(default)]
    pub render_ms: u64,
    /// Stored pages whose text still looks like no language, by reason
    /// (`private_use`: drawn by a font that was not decoded; `script_not_run`:
    /// written by a script that did not run).
    #[serde(default)]
    pub unreadable: BTreeMap<String, u64>,
}

/// One crawl of a site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CrawlRun {
    /// Its id.
    pub id: CrawlRunId,
    /// The crawled site.
    pub site_id: SiteId,
    /// Lifecycle state.
    pub status: CrawlRunStatus,
    /// When it was enqueued.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When fetching started.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub started_at: Option<Timestamp>,
    /// When it ended.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_at: Option<Timestamp>,
    /// Counters.
    pub counters: CrawlCounters,
    /// The last few errors, `url: reason`, for operators.
    #[serde(default)]
    pub recent_errors: Vec<String>,
    /// What a targeted run crawls instead of the whole site (a release
    /// burst or quiet watching); none for a full crawl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<RunScope>,
}

/// A targeted run: the pages it starts from and how far it goes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RunScope {
    /// Why it runs (`release burst of w1, visit 3`).
    pub reason: String,
    /// The pages it starts from (the site's seeds are not crawled).
    pub seeds: Vec<String>,
    /// Link depth from those pages.
    pub max_depth: u32,
    /// Follows only links to pages never stored: known chapters are not fetched again.
    pub new_links_only: bool,
    /// Requests per second per host, when slower than the site's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_second: Option<f64>,
}

impl RunScope {
    /// Narrows `site` to this scope for the run: its pages as seeds, its
    /// depth, and its rate when slower than the site's.
    pub fn narrow(&self, site: &mut Site) {
        site.seeds.clone_from(&self.seeds);
        site.max_depth = self.max_depth;
        if let Some(rate) = self.rate_limit_per_second
            && (site.rate_limit_per_second == 0.0 || rate < site.rate_limit_per_second)
        {
            site.rate_limit_per_second = rate;
        }
    }
}

impl CrawlRun {
    /// Returns a run queued at `at`, nothing fetched yet.
    pub fn queued(id: CrawlRunId, site_id: SiteId, at: Timestamp) -> Self {
        Self {
            id,
            site_id,
            status: CrawlRunStatus::Queued,
            created_at: at,
            started_at: None,
            finished_at: None,
            counters: CrawlCounters::default(),
            recent_errors: Vec::new(),
            scope: None,
        }
    }
}

super::persisted::persisted_v1!(Site => "site", CrawlRun => "crawl_run");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Persisted;

    /// A run as stored before `partial` existed.
    const STORED_V1_RUN: &str = r#"{
        "schema_version": 1, "id": "run_1", "site_id": "s1", "status": "succeeded",
        "created_at": "2024-05-01T10:00:00Z", "started_at": "2024-05-01T10:00:01Z",
        "finished_at": "2024-05-01T10:01:00Z",
        "counters": {"fetched": 3, "new_pages": 3, "changed_pages": 0, "skipped": {}, "failed": {}, "bytes": 1024},
        "recent_errors": []
    }"#;

    #[test]
    fn stored_runs_stay_readable_and_partial_round_trips() {
        let document: serde_json::Value = serde_json::from_str(STORED_V1_RUN).unwrap();
        let mut run = CrawlRun::from_document(document).unwrap();
        assert_eq!(run.status, CrawlRunStatus::Succeeded);
        run.status = CrawlRunStatus::Partial;
        let stored = run.to_document().unwrap();
        assert_eq!(stored["status"], "partial");
        assert_eq!(CrawlRun::from_document(stored).unwrap(), run);
        for status in [
            CrawlRunStatus::Queued,
            CrawlRunStatus::Running,
            CrawlRunStatus::Succeeded,
            CrawlRunStatus::Partial,
            CrawlRunStatus::Failed,
            CrawlRunStatus::Cancelled,
        ] {
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, status.as_str());
        }
        assert!(CrawlRunStatus::Partial.is_finished() && !CrawlRunStatus::Running.is_finished());
    }

    #[test]
    fn render_reads_its_earlier_name_and_runs_store_what_was_rendered_and_unreadable() {
        let earlier: Render = serde_json::from_str("\"html\"").unwrap();
        assert_eq!(
            earlier,
            Render::Auto,
            "sites stored with `html` keep auto-rendering"
        );
        for (render, name) in [
            (Render::Auto, "auto"),
            (Render::Never, "never"),
            (Render::Chromium, "chromium"),
        ] {
            assert_eq!(serde_json::to_value(render).unwrap(), name);
            assert_eq!(
                serde_json::from_value::<Render>(name.into()).unwrap(),
                render
            );
        }
        assert_eq!(Render::default(), Render::Auto);
        let document: serde_json::Value = serde_json::from_str(STORED_V1_RUN).unwrap();
        let mut run = CrawlRun::from_document(document).unwrap();
        assert_eq!((run.counters.rendered, run.counters.render_ms), (0, 0));
        run.counters.rendered = 2;
        run.counters.render_ms = 1_500;
        run.counters.unreadable.insert("private_use".into(), 1);
        let stored = run.to_document().unwrap();
        assert_eq!(stored["counters"]["unreadable"]["private_use"], 1);
        assert_eq!(CrawlRun::from_document(stored).unwrap(), run);
    }
}
