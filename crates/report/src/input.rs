//! What a report is computed from, and the one function that fetches it from the
//! stores. Everything after this point is pure.

use std::collections::BTreeSet;

use copyhound_core::ids::{ChapterId, SiteId, WorkId};
use copyhound_core::model::{
    Match, Publisher, PublisherProfile, ReportScope, ReviewScope, Site, Timestamp, Work,
};
use copyhound_core::ports::{MatchFilter, MatchStore, SiteStore, WorkStore, collect_all};
use copyhound_core::{ErrorKind, Result};
use tracing::warn;

/// Page size used when listing matches and works.
const PAGE_SIZE: u32 = 500;

/// What a chapter contributes to a report: its place and title, not its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChapterInfo {
    /// The work it belongs to.
    pub work_id: WorkId,
    /// The chapter.
    pub chapter_id: ChapterId,
    /// Title as registered.
    pub title: String,
    /// 1-based reading order.
    pub index: u32,
}

/// The input of [`crate::build_report_data`]: plain data, no IO.
///
/// Matches outside `scope` are ignored, so the input may be a superset. Works,
/// chapters and sites are looked up by id; a missing record makes the report
/// show the id instead of the name, it does not drop the match.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportInput {
    /// Display name of the publisher.
    pub publisher: String,
    /// The rights holder's details and language (takedown notices sign with them).
    pub profile: PublisherProfile,
    /// When the report is generated (it stamps the report; nothing is compared with the clock).
    pub generated_at: Timestamp,
    /// What the report covers.
    pub scope: ReportScope,
    /// Works referenced by the matches.
    pub works: Vec<Work>,
    /// Chapters of those works.
    pub chapters: Vec<ChapterInfo>,
    /// Sites referenced by the matches.
    pub sites: Vec<Site>,
    /// The matches, any status.
    pub matches: Vec<Match>,
    /// When the previous report of the same scope was generated; `None`: everything is new.
    pub previous_report_at: Option<Timestamp>,
}

impl ReportInput {
    /// Makes `publisher` the report's rights holder: its name and its profile
    /// (what takedown notices sign with, the language of its notices).
    pub fn set_publisher(&mut self, publisher: Publisher) {
        self.publisher = publisher.name;
        self.profile = publisher.profile;
    }
}

/// Returns the input of a report of `scope`, read from the stores.
///
/// Matches are listed page by page with a [`MatchFilter`] built from the scope
/// (`since` filters on `last_seen`); then the works and sites they reference are
/// fetched one by one, with the chapters of each work. `publisher` is set to the
/// publisher id, `profile` to empty and `generated_at` to now: callers holding the
/// publisher set it with [`ReportInput::set_publisher`]; those holding a
/// `ReportStore` fill `previous_report_at`.
pub async fn load_report_input(
    matches: &dyn MatchStore,
    works: &dyn WorkStore,
    sites: &dyn SiteStore,
    scope: &ReportScope,
) -> Result<ReportInput> {
    let found = list_all_matches(matches, scope).await?;
    let work_ids: BTreeSet<&WorkId> = found.iter().map(|found| &found.work_id).collect();
    let site_ids: BTreeSet<&SiteId> = found.iter().map(|found| &found.site_id).collect();

    let mut work_records = Vec::with_capacity(work_ids.len());
    let mut chapters = Vec::new();
    for work_id in work_ids {
        match works.get_work(&scope.publisher_id, work_id).await {
            Ok(work) => work_records.push(work),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                warn!(work_id = %work_id, "work of a match not found; reporting its id");
                continue;
            }
            Err(error) => return Err(error),
        }
        chapters.extend(
            works
                .list_chapters(work_id)
                .await?
                .into_iter()
                .map(|chapter| ChapterInfo {
                    work_id: chapter.work_id,
                    chapter_id: chapter.id,
                    title: chapter.title,
                    index: chapter.index,
                }),
        );
    }

    let mut site_records = Vec::with_capacity(site_ids.len());
    for site_id in site_ids {
        match sites.get_site(site_id).await {
            Ok(site) => site_records.push(site),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                warn!(site_id = %site_id, "site of a match not found; reporting its host");
            }
            Err(error) => return Err(error),
        }
    }

    Ok(ReportInput {
        publisher: scope.publisher_id.to_string(),
        profile: PublisherProfile::default(),
        generated_at: chrono::Utc::now(),
        scope: scope.clone(),
        works: work_records,
        chapters,
        sites: site_records,
        matches: found,
        previous_report_at: None,
    })
}

/// Returns every match of the scope, following the store's cursors.
async fn list_all_matches(store: &dyn MatchStore, scope: &ReportScope) -> Result<Vec<Match>> {
    let filter = MatchFilter {
        work_id: scope.work_id.clone(),
        site_id: scope.site_id.clone(),
        seen_since: scope.since,
        seen_before: scope.until,
        statuses: scope.review.map(ReviewScope::statuses).unwrap_or_default(),
        ..MatchFilter::of_publisher(scope.publisher_id.clone())
    };
    collect_all(PAGE_SIZE, |request| {
        let filter = &filter;
        async move { store.list_matches(filter, &request).await }
    })
    .await
}
