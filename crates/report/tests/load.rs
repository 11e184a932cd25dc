//! `load_report_input` over in-test fake stores: it must follow the match store's
//! cursors to the end, honour the scope, and survive deleted works and sites.

use std::sync::Mutex;

use async_trait::async_trait;
use copyhound_core::ids::{ChapterId, CrawlRunId, MatchId, PageId, PublisherId, SiteId, WorkId};
use copyhound_core::model::{Chapter, CrawlRun, FingerprintStatus, Match, Review, Site, Work};
use copyhound_core::ports::{MatchFilter, MatchStore, PageRequest, Paged, SiteStore, WorkStore};
use copyhound_core::{Error, Result};
use copyhound_report::testsuite::sample_input;
use copyhound_report::{build_report_data, load_report_input};

/// Serves matches three at a time, whatever the requested limit, and records filters.
#[derive(Debug)]
struct PagedMatches {
    matches: Vec<Match>,
    filters: Mutex<Vec<MatchFilter>>,
}

#[async_trait]
impl MatchStore for PagedMatches {
    async fn upsert_match(&self, _found: &Match) -> Result<()> {
        unimplemented!("not used by reports")
    }
    async fn get_match(&self, _publisher_id: &PublisherId, _id: &MatchId) -> Result<Match> {
        unimplemented!("not used by reports")
    }
    async fn list_matches(&self, filter: &MatchFilter, page: &PageRequest) -> Result<Paged<Match>> {
        self.filters
            .lock()
            .expect("not poisoned")
            .push(filter.clone());
        let selected: Vec<&Match> = self
            .matches
            .iter()
            .filter(|found| found.publisher_id == filter.publisher_id)
            .filter(|found| {
                filter
                    .work_id
                    .as_ref()
                    .is_none_or(|id| *id == found.work_id)
            })
            .filter(|found| {
                filter
                    .site_id
                    .as_ref()
                    .is_none_or(|id| *id == found.site_id)
            })
            .collect();
        let start: usize = page
            .after
            .as_deref()
            .map_or(0, |cursor| cursor.parse().expect("cursors are offsets"));
        let end = (start + 3).min(selected.len());
        Ok(Paged {
            items: selected[start..end]
                .iter()
                .map(|found| (*found).clone())
                .collect(),
            next: (end < selected.len()).then(|| end.to_string()),
        })
    }
    async fn matches_of_page(&self, _page_id: &PageId) -> Result<Vec<Match>> {
        unimplemented!("not used by reports")
    }
    async fn review_match(
        &self,
        _publisher_id: &PublisherId,
        _id: &MatchId,
        _review: &Review,
    ) -> Result<Match> {
        unimplemented!("not used by reports")
    }
}

#[derive(Debug)]
struct Works {
    works: Vec<Work>,
    chapters: Vec<Chapter>,
}

#[async_trait]
impl WorkStore for Works {
    async fn put_work(&self, _work: &Work) -> Result<()> {
        unimplemented!("not used by reports")
    }
    async fn get_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<Work> {
        self.works
            .iter()
            .find(|work| work.id == *id && work.publisher_id == *publisher_id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("work {id}")))
    }
    async fn get_work_any(&self, _id: &WorkId) -> Result<Work> {
        unimplemented!("reports stay within the tenant")
    }
    async fn list_works(
        &self,
        _publisher_id: &PublisherId,
        _page: &PageRequest,
    ) -> Result<Paged<Work>> {
        unimplemented!("reports fetch the works they need")
    }
    async fn delete_work(&self, _publisher_id: &PublisherId, _id: &WorkId) -> Result<()> {
        unimplemented!("not used by reports")
    }
    async fn put_chapters(&self, _chapters: &[Chapter]) -> Result<()> {
        unimplemented!("not used by reports")
    }
    async fn get_chapter(&self, _work_id: &WorkId, _id: &ChapterId) -> Result<Chapter> {
        unimplemented!("not used by reports")
    }
    async fn list_chapters(&self, work_id: &WorkId) -> Result<Vec<Chapter>> {
        Ok(self
            .chapters
            .iter()
            .filter(|chapter| chapter.work_id == *work_id)
            .cloned()
            .collect())
    }
    async fn set_fingerprint_status(
        &self,
        _: &WorkId,
        _: &ChapterId,
        _: &FingerprintStatus,
    ) -> Result<()> {
        unimplemented!("not used by reports")
    }
}

#[derive(Debug)]
struct Sites(Vec<Site>);

#[async_trait]
impl SiteStore for Sites {
    async fn put_site(&self, _site: &Site) -> Result<()> {
        unimplemented!("not used by reports")
    }
    async fn get_site(&self, id: &SiteId) -> Result<Site> {
        self.0
            .iter()
            .find(|site| site.id == *id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("site {id}")))
    }
    async fn list_sites(
        &self,
        _publisher_id: Option<&PublisherId>,
        _page: &PageRequest,
    ) -> Result<Paged<Site>> {
        unimplemented!("reports fetch the sites they need")
    }
    async fn put_crawl_run(&self, _run: &CrawlRun) -> Result<()> {
        unimplemented!("not used by reports")
    }
    async fn get_crawl_run(&self, _id: &CrawlRunId) -> Result<CrawlRun> {
        unimplemented!("not used by reports")
    }
    async fn list_crawl_runs(
        &self,
        _site_id: &SiteId,
        _page: &PageRequest,
    ) -> Result<Paged<CrawlRun>> {
        unimplemented!("not used by reports")
    }
}

fn stores() -> (PagedMatches, Works, Sites) {
    let sample = sample_input();
    let chapters = sample
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
    (
        PagedMatches {
            matches: sample.matches,
            filters: Mutex::new(Vec::new()),
        },
        Works {
            works: sample.works,
            chapters,
        },
        Sites(sample.sites),
    )
}

#[tokio::test]
async fn loads_every_page_and_builds_the_same_report() {
    let (matches, works, sites) = stores();
    let sample = sample_input();
    let mut input = load_report_input(&matches, &works, &sites, &sample.scope)
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
    let (matches, mut works, mut sites) = stores();
    works.works.retain(|work| work.id.as_str() != "w_river");
    sites.0.retain(|site| site.id.as_str() != "site_beta");
    let mut scope = sample_input().scope;
    scope.site_id = Some("site_beta".parse().unwrap());
    let input = load_report_input(&matches, &works, &sites, &scope)
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
