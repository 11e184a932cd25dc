use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ids::{
    ApiKeyId, ChapterId, CrawlRunId, MatchId, PageId, PublisherId, ReportId, SiteId, WorkId,
};
use crate::model::{
    AlertState, ApiKey, Chapter, CrawlRun, FingerprintOwner, FingerprintRecord, FingerprintStatus,
    Match, MatchStatus, Page, Publisher, Report, Review, Site, SiteSuggestion, SuggestionStatus,
    Timestamp, Work,
};

/// Keyset pagination: `after` is the cursor returned with the previous page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRequest {
    /// Cursor from the previous page; `None` for the first page.
    pub after: Option<String>,
    /// Page size; backends cap it.
    pub limit: u32,
}

/// One page of results and the cursor of the next one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Paged<T> {
    /// The items.
    pub items: Vec<T>,
    /// Cursor of the next page; `None` on the last page.
    pub next: Option<String>,
}

/// What storing a crawled page changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageUpsert {
    /// The URL was new.
    New,
    /// The content changed; the old version went to the page's history.
    Changed,
    /// Same content as last time; only `last_seen` and fetch metadata moved.
    Unchanged,
}

/// Filter of match listings. Every listing is scoped to one publisher.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchFilter {
    /// The tenant (mandatory: listings never cross tenants).
    pub publisher_id: PublisherId,
    /// Only this work.
    pub work_id: Option<WorkId>,
    /// Only this chapter (with `work_id`).
    pub chapter_id: Option<ChapterId>,
    /// Only this site.
    pub site_id: Option<SiteId>,
    /// Only these statuses (empty: all).
    pub statuses: Vec<MatchStatus>,
    /// Only scores at least this.
    pub min_score: Option<f32>,
    /// Only matches last seen at or after.
    pub seen_since: Option<Timestamp>,
    /// Only matches first seen before.
    pub seen_before: Option<Timestamp>,
    /// The listing's order.
    pub order: MatchOrder,
}

/// The order of a match listing; ties go to the larger id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchOrder {
    /// Last seen, newest first.
    #[default]
    Newest,
    /// Score, highest first: what matters most comes first.
    Score,
}

impl MatchOrder {
    /// Parses `newest` or `score`.
    pub fn parse(raw: &str) -> Result<Self> {
        match raw {
            "newest" => Ok(Self::Newest),
            "score" => Ok(Self::Score),
            _ => Err(Error::invalid(format!(
                "`sort` must be `newest` or `score`, not `{raw}`"
            ))),
        }
    }
}

/// A match listing's filter as it arrives from a user (query string, CLI
/// flags): raw values, checked by [`MatchFilter::parse`].
#[derive(Clone, Copy, Debug, Default)]
pub struct MatchFilterInput<'a> {
    /// `work_id`.
    pub work_id: Option<&'a str>,
    /// `chapter_id`.
    pub chapter_id: Option<&'a str>,
    /// `site_id`.
    pub site_id: Option<&'a str>,
    /// Comma-separated status names.
    pub status: Option<&'a str>,
    /// Lowest score, in [0, 1].
    pub min_score: Option<f32>,
    /// RFC 3339 time or `YYYY-MM-DD`.
    pub since: Option<&'a str>,
    /// RFC 3339 time or `YYYY-MM-DD`.
    pub before: Option<&'a str>,
    /// `newest` (default) or `score`.
    pub sort: Option<&'a str>,
}

impl MatchFilter {
    /// Returns the filter of every match of `publisher_id`.
    pub fn of_publisher(publisher_id: PublisherId) -> Self {
        Self {
            publisher_id,
            work_id: None,
            chapter_id: None,
            site_id: None,
            statuses: Vec::new(),
            min_score: None,
            seen_since: None,
            seen_before: None,
            order: MatchOrder::Newest,
        }
    }

    /// Checks a user's filter, scoped to `publisher_id`; errors name the field.
    /// The API and the CLI both read filters through here.
    pub fn parse(publisher_id: &PublisherId, input: &MatchFilterInput<'_>) -> Result<Self> {
        fn id<T: std::str::FromStr<Err = Error>>(
            name: &str,
            raw: Option<&str>,
        ) -> Result<Option<T>> {
            raw.map(|raw| {
                raw.parse::<T>()
                    .map_err(|error| Error::invalid(format!("`{name}`: {}", error.message())))
            })
            .transpose()
        }
        let statuses = match input.status {
            Some(raw) => raw
                .split(',')
                .filter(|part| !part.is_empty())
                .map(MatchStatus::parse)
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        if input
            .min_score
            .is_some_and(|score| !(0.0..=1.0).contains(&score))
        {
            return Err(Error::invalid("`min_score` must be in [0, 1]"));
        }
        Ok(Self {
            publisher_id: publisher_id.clone(),
            work_id: id("work_id", input.work_id)?,
            chapter_id: id("chapter_id", input.chapter_id)?,
            site_id: id("site_id", input.site_id)?,
            statuses,
            min_score: input.min_score,
            seen_since: input
                .since
                .map(|raw| parse_time("since", raw))
                .transpose()?,
            seen_before: input
                .before
                .map(|raw| parse_time("before", raw))
                .transpose()?,
            order: input
                .sort
                .map(MatchOrder::parse)
                .transpose()?
                .unwrap_or_default(),
        })
    }
}

/// Parses an RFC 3339 time or a `YYYY-MM-DD` date (midnight UTC).
pub fn parse_time(field: &str, raw: &str) -> Result<Timestamp> {
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(raw) {
        return Ok(time.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc())
        .ok_or_else(|| {
            Error::invalid(format!(
                "`{field}` must be an RFC 3339 time or a YYYY-MM-DD date, not `{raw}`"
            ))
        })
}

/// Most keys [`PublisherStore::list_api_keys`] returns.
pub const MAX_LISTED_KEYS: usize = 1000;

/// Publishers and their API keys.
#[async_trait]
pub trait PublisherStore: fmt::Debug + Send + Sync + 'static {
    /// Returns `Ok` when the backend answers.
    async fn check_connectivity(&self) -> Result<()>;
    /// Inserts or replaces a publisher.
    async fn put_publisher(&self, publisher: &Publisher) -> Result<()>;
    /// Returns a publisher or `NotFound`.
    async fn get_publisher(&self, id: &PublisherId) -> Result<Publisher>;
    /// Lists publishers.
    async fn list_publishers(&self, page: &PageRequest) -> Result<Paged<Publisher>>;
    /// Inserts or replaces an API key record.
    async fn put_api_key(&self, key: &ApiKey) -> Result<()>;
    /// Returns an API key record or `NotFound`.
    async fn get_api_key(&self, id: &ApiKeyId) -> Result<ApiKey>;
    /// Returns the publisher's keys (revoked ones included), oldest first, at
    /// most [`MAX_LISTED_KEYS`].
    async fn list_api_keys(&self, publisher_id: &PublisherId) -> Result<Vec<ApiKey>>;
}

/// Registered works and their chapters.
#[async_trait]
pub trait WorkStore: fmt::Debug + Send + Sync + 'static {
    /// Inserts or replaces a work (not its chapters).
    async fn put_work(&self, work: &Work) -> Result<()>;
    /// Returns a work of the publisher or `NotFound` (also for another tenant's work).
    async fn get_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<Work>;
    /// Returns a work whatever its tenant (workers only).
    async fn get_work_any(&self, id: &WorkId) -> Result<Work>;
    /// Lists a publisher's works by id.
    async fn list_works(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Work>>;
    /// Deletes a work and its chapters; `NotFound` if absent.
    async fn delete_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<()>;
    /// Inserts or replaces chapters (keyed by work + chapter id).
    async fn put_chapters(&self, chapters: &[Chapter]) -> Result<()>;
    /// Stores an edit of a work: the record and exactly `chapters` (all of
    /// `work`), deleting its stored chapters that `chapters` leaves out. The
    /// work is never absent meanwhile. Embedded: one transaction, so after a
    /// crash the work is the old version or the new one. MongoDB: chapters,
    /// then the record, then the deletions, each idempotent, so repeating an
    /// edit cut short completes it. `Conflict` if another publisher owns the id.
    async fn replace_work(&self, work: &Work, chapters: &[Chapter]) -> Result<()>;
    /// Returns a chapter or `NotFound`.
    async fn get_chapter(&self, work_id: &WorkId, id: &ChapterId) -> Result<Chapter>;
    /// Lists a work's chapters in reading order.
    async fn list_chapters(&self, work_id: &WorkId) -> Result<Vec<Chapter>>;
    /// Sets a chapter's fingerprint status.
    async fn set_fingerprint_status(
        &self,
        work_id: &WorkId,
        id: &ChapterId,
        status: &FingerprintStatus,
    ) -> Result<()>;
}

/// Watched sites and their crawl runs.
#[async_trait]
pub trait SiteStore: fmt::Debug + Send + Sync + 'static {
    /// Inserts or replaces a site.
    async fn put_site(&self, site: &Site) -> Result<()>;
    /// Returns a site or `NotFound`.
    async fn get_site(&self, id: &SiteId) -> Result<Site>;
    /// Lists sites, of one publisher or (admin, scheduler) all.
    async fn list_sites(
        &self,
        publisher_id: Option<&PublisherId>,
        page: &PageRequest,
    ) -> Result<Paged<Site>>;
    /// Inserts or replaces a crawl run.
    async fn put_crawl_run(&self, run: &CrawlRun) -> Result<()>;
    /// Returns a crawl run or `NotFound`.
    async fn get_crawl_run(&self, id: &CrawlRunId) -> Result<CrawlRun>;
    /// Lists a site's runs, newest first.
    async fn list_crawl_runs(
        &self,
        site_id: &SiteId,
        page: &PageRequest,
    ) -> Result<Paged<CrawlRun>>;
    /// Inserts or replaces a site suggestion.
    async fn put_suggestion(&self, suggestion: &SiteSuggestion) -> Result<()>;
    /// Returns one of `publisher_id`'s suggestions or `NotFound`.
    async fn get_suggestion(&self, publisher_id: &PublisherId, id: &str) -> Result<SiteSuggestion>;
    /// Lists a publisher's suggestions by id, of one status or all.
    async fn list_suggestions(
        &self,
        publisher_id: &PublisherId,
        status: Option<SuggestionStatus>,
        page: &PageRequest,
    ) -> Result<Paged<SiteSuggestion>>;
}

/// Crawled pages with their history.
#[async_trait]
pub trait PageStore: fmt::Debug + Send + Sync + 'static {
    /// Stores a fetched page under its URL. When the content hash differs from the
    /// stored one, the stored version goes to `previous_versions`; `first_seen` is kept.
    async fn upsert_page(&self, page: &Page) -> Result<PageUpsert>;
    /// Stores many fetched pages (crawl batches, imports) with the contract of
    /// [`PageStore::upsert_page`] each; returns the outcomes in input order.
    /// Backends override it to write in bulk; the default stores them one by one.
    async fn upsert_pages(&self, pages: &[Page]) -> Result<Vec<PageUpsert>> {
        let mut outcomes = Vec::with_capacity(pages.len());
        for page in pages {
            outcomes.push(self.upsert_page(page).await?);
        }
        Ok(outcomes)
    }
    /// Returns a page or `NotFound`.
    async fn get_page(&self, id: &PageId) -> Result<Page>;
    /// Lists a site's pages by id.
    async fn list_pages(&self, site_id: &SiteId, page: &PageRequest) -> Result<Paged<Page>>;
}

/// Fingerprints of chapters and pages, one record per (owner, version).
#[async_trait]
pub trait FingerprintStore: fmt::Debug + Send + Sync + 'static {
    /// Inserts or replaces the record of (owner, version).
    async fn put_fingerprint(&self, record: &FingerprintRecord) -> Result<()>;
    /// Inserts or replaces many records (back-fills, bulk registration).
    /// Backends override it to write in bulk; the default stores them one by one.
    async fn put_fingerprints(&self, records: &[FingerprintRecord]) -> Result<()> {
        for record in records {
            self.put_fingerprint(record).await?;
        }
        Ok(())
    }
    /// Returns the record of (owner, version) or `NotFound`.
    async fn get_fingerprint(
        &self,
        owner: &FingerprintOwner,
        version: u32,
    ) -> Result<FingerprintRecord>;
    /// Deletes every version of an owner's records.
    async fn delete_fingerprints(&self, owner: &FingerprintOwner) -> Result<()>;
    /// Lists records of a version in owner order (index rebuilds, back-fills).
    async fn list_fingerprints(
        &self,
        version: u32,
        page: &PageRequest,
    ) -> Result<Paged<FingerprintRecord>>;
}

/// Matches and their review history.
#[async_trait]
pub trait MatchStore: fmt::Debug + Send + Sync + 'static {
    /// Inserts a match or refreshes an existing one (same id): scores, spans,
    /// evidence and `last_seen` are updated; status, reviews and `first_seen` are kept.
    /// A stored match of another publisher under the same id is never touched:
    /// the upsert answers `Conflict`.
    async fn upsert_match(&self, found: &Match) -> Result<()>;
    /// Returns a match of the publisher or `NotFound`.
    async fn get_match(&self, publisher_id: &PublisherId, id: &MatchId) -> Result<Match>;
    /// Lists matches, newest `last_seen` first.
    async fn list_matches(&self, filter: &MatchFilter, page: &PageRequest) -> Result<Paged<Match>>;
    /// Lists every match of a page (any tenant; workers only).
    async fn matches_of_page(&self, page_id: &PageId) -> Result<Vec<Match>>;
    /// Deletes every match of the publisher's work (with its reviews); returns how
    /// many. Other publishers' matches are untouched.
    async fn delete_matches_of_work(
        &self,
        publisher_id: &PublisherId,
        work_id: &WorkId,
    ) -> Result<u64>;
    /// Appends a review and sets the status; returns the updated match.
    async fn review_match(
        &self,
        publisher_id: &PublisherId,
        id: &MatchId,
        review: &Review,
    ) -> Result<Match>;
}

/// Reports and their rendered artifacts.
#[async_trait]
pub trait ReportStore: fmt::Debug + Send + Sync + 'static {
    /// Inserts or replaces a report record.
    async fn put_report(&self, report: &Report) -> Result<()>;
    /// Returns a report of the publisher or `NotFound`.
    async fn get_report(&self, publisher_id: &PublisherId, id: &ReportId) -> Result<Report>;
    /// Lists a publisher's reports, newest first.
    async fn list_reports(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Report>>;
    /// Stores a rendered artifact.
    async fn put_artifact(&self, id: &ReportId, bytes: &[u8]) -> Result<()>;
    /// Returns a rendered artifact or `NotFound`.
    async fn get_artifact(&self, id: &ReportId) -> Result<Vec<u8>>;
    /// Returns an alert's state, if one was ever written.
    async fn get_alert_state(&self, id: &str) -> Result<Option<AlertState>>;
    /// Writes `state` if the stored version is `expected` (`None`: no state
    /// stored yet) and returns whether it did: the one atomic step that lets
    /// many schedulers agree on who sends an alert.
    async fn swap_alert_state(&self, expected: Option<u64>, state: &AlertState) -> Result<bool>;
}

#[cfg(test)]
mod match_filter_tests {
    use super::*;

    #[test]
    fn a_users_filter_is_checked_field_by_field() {
        let publisher: PublisherId = "P01".parse().unwrap();
        let filter = MatchFilter::parse(
            &publisher,
            &MatchFilterInput {
                work_id: Some("w1"),
                status: Some("new,confirmed"),
                min_score: Some(0.5),
                since: Some("2026-01-02"),
                ..MatchFilterInput::default()
            },
        )
        .unwrap();
        assert_eq!(filter.statuses, [MatchStatus::New, MatchStatus::Confirmed]);
        assert_eq!(filter.work_id.unwrap().as_str(), "w1");
        assert_eq!(
            filter.seen_since.unwrap().to_rfc3339(),
            "2026-01-02T00:00:00+00:00"
        );
        let error = |input: MatchFilterInput<'_>| {
            MatchFilter::parse(&publisher, &input)
                .unwrap_err()
                .to_string()
        };
        assert!(
            error(MatchFilterInput {
                status: Some("bogus"),
                ..Default::default()
            })
            .contains("unknown status `bogus`")
        );
        assert!(
            error(MatchFilterInput {
                min_score: Some(1.5),
                ..Default::default()
            })
            .contains("`min_score`")
        );
        assert!(
            error(MatchFilterInput {
                site_id: Some("a b"),
                ..Default::default()
            })
            .contains("`site_id`")
        );
        assert!(
            error(MatchFilterInput {
                before: Some("yesterday"),
                ..Default::default()
            })
            .contains("`before`")
        );
    }
}
