//! `load_report_input` over the embedded store: it must follow the match store's
//! cursors to the end, honour the scope, and survive deleted works and sites.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use copyhound_core::Result;
use copyhound_core::ids::{MatchId, PageId, PublisherId};
use copyhound_core::model::{Chapter, Match, Review};
use copyhound_core::ports::{MatchFilter, MatchStore, PageRequest, Paged};
use copyhound_report::testsuite::sample_input;
use copyhound_report::{build_report_data, load_report_input};
use copyhound_store::Stores;

/// The real match store, serving three matches a page whatever the requested
/// limit (so paging is exercised) and recording the filters it was asked for.
#[derive(Debug)]
struct ThreeAtATime {
    inner: Arc<dyn MatchStore>,
    filters: Mutex<Vec<MatchFilter>>,
}

#[async_trait]
impl MatchStore for ThreeAtATime {
    async fn upsert_match(&self, found: &Match) -> Result<()> {
        self.inner.upsert_match(found).await
    }
    async fn get_match(&self, publisher_id: &PublisherId, id: &MatchId) -> Result<Match> {
        self.inner.get_match(publisher_id, id).await
    }
    async fn list_matches(&self, filter: &MatchFilter, page: &PageRequest) -> Result<Paged<Match>> {
        self.filters.lock().unwrap().push(filter.clone());
        let page = PageRequest {
            after: page.after.clone(),
            limit: 3,
        };
        self.inner.list_matches(filter, &page).await
    }
    async fn matches_of_page(&self, page_id: &PageId) -> Result<Vec<Match>> {
        self.inner.matches_of_page(page_id).await
    }
    async fn delete_matches_of_work(
        &self,
        publisher_id: &PublisherId,
        work_id: &copyhound_core::ids::WorkId,
    ) -> Result<u64> {
        self.inner
            .delete_matches_of_work(publisher_id, work_id)
            .await
    }
    async fn review_match(
        &self,
        publisher_id: &PublisherId,
        id: &MatchId,
        review: &Review,
    ) -> Result<Match> {
        self.inner.review_match(publisher_id, id, review).await
    }
}

/// The sample report's data in a fresh embedded store, minus the named work and site.
async fn stores(
    dir: &tempfile::TempDir,
    without_work: Option<&str>,
    without_site: Option<&str>,
) -> (ThreeAtATime, Stores) {
    let stores = Stores::local(dir.path()).unwrap();
    let sample = sample_input();
    for work in sample
        .works
        .iter()
        .filter(|work| Some(work.id.as_str()) != without_work)
    {
        stores.works.put_work(work).await.unwrap();
    }
    let chapters: Vec<Chapter> = sample
        .chapters
        .iter()
        .map(|info| {
            Chapter::new(
                info.work_id.clone(),
                info.chapter_id.clone(),
                info.index,
                info.title.clone(),
                "正文".into(),
            )
        })
        .collect();
    stores.works.put_chapters(&chapters).await.unwrap();
    for site in sample
        .sites
        .iter()
        .filter(|site| Some(site.id.as_str()) != without_site)
    {
        stores.sites.put_site(site).await.unwrap();
    }
    for found in &sample.matches {
        stores.matches.upsert_match(found).await.unwrap();
    }
    let matches = ThreeAtATime {
        inner: stores.matches.clone(),
        filters: Mutex::new(Vec::new()),
    };
    (matches, stores)
}

#[tokio::test]
async fn loads_every_page_and_builds_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let (matches, stores) = stores(&dir, None, None).await;
    let sample = sample_input();
    let mut input = load_report_input(
        &matches,
        stores.works.as_ref(),
        stores.sites.as_ref(),
        &sample.scope,
    )
    .await
    .unwrap();
    assert_eq!(input.matches.len(), 8, "three pages of three, three, two");
    assert_eq!(matches.filters.lock().unwrap().len(), 3);
    input.publisher = sample.publisher.clone();
    input.generated_at = sample.generated_at;
    input.previous_report_at = sample.previous_report_at;
    let mut expected = sample;
    expected
        .chapters
        .sort_by(|left, right| (&left.work_id, left.index).cmp(&(&right.work_id, right.index)));
    assert_eq!(build_report_data(&input), build_report_data(&expected));
}

#[tokio::test]
async fn scope_goes_into_the_filter_and_missing_records_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let (matches, stores) = stores(&dir, Some("w_river"), Some("site_beta")).await;
    let mut scope = sample_input().scope;
    scope.site_id = Some("site_beta".parse().unwrap());
    let input = load_report_input(
        &matches,
        stores.works.as_ref(),
        stores.sites.as_ref(),
        &scope,
    )
    .await
    .unwrap();
    assert_eq!(input.matches.len(), 3);
    assert_eq!(matches.filters.lock().unwrap()[0].site_id, scope.site_id);
    assert!(input.sites.is_empty());
    assert_eq!(input.works.len(), 1);
    let data = build_report_data(&input);
    assert_eq!(
        data.sites[0].name, "beta.example",
        "a deleted site is shown by host"
    );
}

/// The review scope and the period reach the store's filter, so a notice of
/// confirmed matches reads only those.
#[tokio::test]
async fn review_scope_and_period_go_into_the_filter() {
    use copyhound_core::model::{MatchStatus, ReviewScope};
    let dir = tempfile::tempdir().unwrap();
    let (matches, stores) = stores(&dir, None, None).await;
    let mut scope = sample_input().scope;
    scope.review = Some(ReviewScope::Confirmed);
    let until = sample_input().matches[6].first_seen + chrono::Duration::hours(1);
    scope.until = Some(until);
    let input = load_report_input(
        &matches,
        stores.works.as_ref(),
        stores.sites.as_ref(),
        &scope,
    )
    .await
    .unwrap();
    let filter = matches.filters.lock().unwrap()[0].clone();
    assert_eq!(filter.statuses, [MatchStatus::Confirmed]);
    assert_eq!(filter.seen_before, Some(until));
    let mut ids: Vec<String> = input.matches.iter().map(|m| m.id.to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["m_0001", "m_0007"]);
}
