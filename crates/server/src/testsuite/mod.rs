//! In-memory fakes of the store and queue ports, for the server's tests, examples
//! and for embedding the router without backends. They keep every contract the
//! server relies on (tenant scoping of `get_work`/`get_match`/`get_report`,
//! `NotFound` kinds, newest-first match listings, cursors) and nothing more:
//! cursors are offsets, and no data survives the process.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use copyhound_core::ids::{
    ApiKeyId, ChapterId, CrawlRunId, MatchId, PageId, PublisherId, ReportId, SiteId, WorkId,
};
use copyhound_core::model::{
    ApiKey, Chapter, CrawlRun, FingerprintOwner, FingerprintRecord, FingerprintStatus, Match, Page,
    Publisher, Report, Review, Site, Work,
};
use copyhound_core::ports::{
    FingerprintStore, MatchFilter, MatchStore, PageRequest, PageStore, PageUpsert, Paged,
    PublisherStore, ReportStore, SiteStore, WorkStore,
};
use copyhound_core::{Error, Result};

mod queue;

pub use queue::{MemoryBackends, MemoryQueue};

#[derive(Debug, Default)]
struct Data {
    publishers: BTreeMap<PublisherId, Publisher>,
    keys: BTreeMap<ApiKeyId, ApiKey>,
    works: BTreeMap<WorkId, Work>,
    chapters: BTreeMap<(WorkId, ChapterId), Chapter>,
    sites: BTreeMap<SiteId, Site>,
    runs: BTreeMap<CrawlRunId, CrawlRun>,
    pages: BTreeMap<PageId, Page>,
    matches: BTreeMap<MatchId, Match>,
    reports: BTreeMap<ReportId, Report>,
    artifacts: BTreeMap<ReportId, Vec<u8>>,
    /// Keyed by (owner index key, version).
    fingerprints: BTreeMap<(String, u32), FingerprintRecord>,
}

/// Every store port in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    data: Mutex<Data>,
    /// When set, every call fails with this error kind (fault injection).
    pub fail_with: Mutex<Option<copyhound_core::ErrorKind>>,
}

fn paginate<T: Clone>(items: Vec<T>, page: &PageRequest) -> Result<Paged<T>> {
    let offset = match &page.after {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("o_")
            .and_then(|number| number.parse::<usize>().ok())
            .ok_or_else(|| {
                Error::invalid(format!("cursor `{cursor}` was not issued by this store"))
            })?,
    };
    let limit = page.limit.clamp(1, 1000) as usize;
    let end = offset.saturating_add(limit).min(items.len());
    let slice = items
        .get(offset..end)
        .map(<[T]>::to_vec)
        .unwrap_or_default();
    // Cursors in the alphabet the API documents (URL-safe base64 characters).
    let next = (end < items.len()).then(|| format!("o_{end}"));
    Ok(Paged { items: slice, next })
}

impl MemoryStore {
    fn data(&self) -> Result<MutexGuard<'_, Data>> {
        let failure = *self
            .fail_with
            .lock()
            .expect("fault switch lock is never poisoned");
        if let Some(kind) = failure {
            return Err(Error::new(kind, "injected failure"));
        }
        Ok(self
            .data
            .lock()
            .expect("memory store lock is never poisoned"))
    }

    /// Inserts a match as the matcher would (tests).
    pub fn insert_match(&self, found: Match) {
        self.data
            .lock()
            .expect("memory store lock is never poisoned")
            .matches
            .insert(found.id.clone(), found);
    }
}

#[async_trait]
impl PublisherStore for MemoryStore {
    async fn check_connectivity(&self) -> Result<()> {
        self.data().map(|_| ())
    }
    async fn put_publisher(&self, publisher: &Publisher) -> Result<()> {
        self.data()?
            .publishers
            .insert(publisher.id.clone(), publisher.clone());
        Ok(())
    }
    async fn get_publisher(&self, id: &PublisherId) -> Result<Publisher> {
        self.data()?
            .publishers
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("publisher {id}")))
    }
    async fn list_publishers(&self, page: &PageRequest) -> Result<Paged<Publisher>> {
        paginate(self.data()?.publishers.values().cloned().collect(), page)
    }
    async fn put_api_key(&self, key: &ApiKey) -> Result<()> {
        self.data()?.keys.insert(key.id.clone(), key.clone());
        Ok(())
    }
    async fn get_api_key(&self, id: &ApiKeyId) -> Result<ApiKey> {
        self.data()?
            .keys
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("api key {id}")))
    }
}

#[async_trait]
impl WorkStore for MemoryStore {
    async fn put_work(&self, work: &Work) -> Result<()> {
        self.data()?.works.insert(work.id.clone(), work.clone());
        Ok(())
    }
    async fn get_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<Work> {
        let data = self.data()?;
        data.works
            .get(id)
            .filter(|work| &work.publisher_id == publisher_id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("work {id}")))
    }
    async fn get_work_any(&self, id: &WorkId) -> Result<Work> {
        self.data()?
            .works
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("work {id}")))
    }
    async fn list_works(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Work>> {
        let items = self
            .data()?
            .works
            .values()
            .filter(|work| &work.publisher_id == publisher_id)
            .cloned()
            .collect();
        paginate(items, page)
    }
    async fn delete_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<()> {
        let mut data = self.data()?;
        if data
            .works
            .get(id)
            .is_none_or(|work| &work.publisher_id != publisher_id)
        {
            return Err(Error::not_found(format!("work {id}")));
        }
        data.works.remove(id);
        data.chapters.retain(|(work_id, _), _| work_id != id);
        Ok(())
    }
    async fn put_chapters(&self, chapters: &[Chapter]) -> Result<()> {
        let mut data = self.data()?;
        for chapter in chapters {
            data.chapters.insert(
                (chapter.work_id.clone(), chapter.id.clone()),
                chapter.clone(),
            );
        }
        Ok(())
    }
    async fn get_chapter(&self, work_id: &WorkId, id: &ChapterId) -> Result<Chapter> {
        let data = self.data()?;
        data.chapters
            .get(&(work_id.clone(), id.clone()))
            .cloned()
            .ok_or_else(|| Error::not_found(format!("chapter {id}")))
    }
    async fn list_chapters(&self, work_id: &WorkId) -> Result<Vec<Chapter>> {
        let mut chapters: Vec<Chapter> = self
            .data()?
            .chapters
            .values()
            .filter(|chapter| &chapter.work_id == work_id)
            .cloned()
            .collect();
        chapters.sort_by_key(|chapter| chapter.index);
        Ok(chapters)
    }
    async fn set_fingerprint_status(
        &self,
        work_id: &WorkId,
        id: &ChapterId,
        status: &FingerprintStatus,
    ) -> Result<()> {
        let mut data = self.data()?;
        let chapter = data
            .chapters
            .get_mut(&(work_id.clone(), id.clone()))
            .ok_or_else(|| Error::not_found(format!("chapter {id}")))?;
        chapter.fingerprint_status = status.clone();
        Ok(())
    }
}

#[async_trait]
impl SiteStore for MemoryStore {
    async fn put_site(&self, site: &Site) -> Result<()> {
        self.data()?.sites.insert(site.id.clone(), site.clone());
        Ok(())
    }
    async fn get_site(&self, id: &SiteId) -> Result<Site> {
        self.data()?
            .sites
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("site {id}")))
    }
    async fn list_sites(
        &self,
        publisher_id: Option<&PublisherId>,
        page: &PageRequest,
    ) -> Result<Paged<Site>> {
        let items = self
            .data()?
            .sites
            .values()
            .filter(|site| publisher_id.is_none_or(|publisher| &site.publisher_id == publisher))
            .cloned()
            .collect();
        paginate(items, page)
    }
    async fn put_crawl_run(&self, run: &CrawlRun) -> Result<()> {
        self.data()?.runs.insert(run.id.clone(), run.clone());
        Ok(())
    }
    async fn get_crawl_run(&self, id: &CrawlRunId) -> Result<CrawlRun> {
        self.data()?
            .runs
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("crawl run {id}")))
    }
    async fn list_crawl_runs(
        &self,
        site_id: &SiteId,
        page: &PageRequest,
    ) -> Result<Paged<CrawlRun>> {
        let mut runs: Vec<CrawlRun> = self
            .data()?
            .runs
            .values()
            .filter(|run| &run.site_id == site_id)
            .cloned()
            .collect();
        runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        paginate(runs, page)
    }
}

#[async_trait]
impl PageStore for MemoryStore {
    async fn upsert_page(&self, page: &Page) -> Result<PageUpsert> {
        let previous = self.data()?.pages.insert(page.id.clone(), page.clone());
        Ok(match previous {
            None => PageUpsert::New,
            Some(old) if old.content_sha256 != page.content_sha256 => PageUpsert::Changed,
            Some(_) => PageUpsert::Unchanged,
        })
    }
    async fn get_page(&self, id: &PageId) -> Result<Page> {
        self.data()?
            .pages
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("page {id}")))
    }
    async fn list_pages(&self, site_id: &SiteId, page: &PageRequest) -> Result<Paged<Page>> {
        paginate(
            self.data()?
                .pages
                .values()
                .filter(|stored| &stored.site_id == site_id)
                .cloned()
                .collect(),
            page,
        )
    }
}

fn matches_filter(found: &Match, filter: &MatchFilter) -> bool {
    found.publisher_id == filter.publisher_id
        && filter
            .work_id
            .as_ref()
            .is_none_or(|id| &found.work_id == id)
        && filter
            .chapter_id
            .as_ref()
            .is_none_or(|id| &found.chapter_id == id)
        && filter
            .site_id
            .as_ref()
            .is_none_or(|id| &found.site_id == id)
        && (filter.statuses.is_empty() || filter.statuses.contains(&found.status))
        && filter.min_score.is_none_or(|score| found.score >= score)
        && filter
            .seen_since
            .is_none_or(|since| found.last_seen >= since)
        && filter
            .seen_before
            .is_none_or(|before| found.first_seen < before)
}

#[async_trait]
impl MatchStore for MemoryStore {
    async fn upsert_match(&self, found: &Match) -> Result<()> {
        let mut data = self.data()?;
        let mut stored = found.clone();
        if let Some(existing) = data.matches.get(&found.id) {
            if existing.publisher_id != found.publisher_id {
                return Err(Error::new(
                    copyhound_core::ErrorKind::Conflict,
                    format!("match {} is held by another publisher", found.id),
                ));
            }
            stored.status = existing.status;
            stored.reviews = existing.reviews.clone();
            stored.first_seen = existing.first_seen;
        }
        data.matches.insert(stored.id.clone(), stored);
        Ok(())
    }
    async fn delete_matches_of_work(
        &self,
        publisher_id: &PublisherId,
        work_id: &WorkId,
    ) -> Result<u64> {
        let mut data = self.data()?;
        let before = data.matches.len();
        data.matches
            .retain(|_, found| &found.publisher_id != publisher_id || &found.work_id != work_id);
        Ok((before - data.matches.len()) as u64)
    }
    async fn get_match(&self, publisher_id: &PublisherId, id: &MatchId) -> Result<Match> {
        let data = self.data()?;
        data.matches
            .get(id)
            .filter(|found| &found.publisher_id == publisher_id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("match {id}")))
    }
    async fn list_matches(&self, filter: &MatchFilter, page: &PageRequest) -> Result<Paged<Match>> {
        let mut items: Vec<Match> = self
            .data()?
            .matches
            .values()
            .filter(|found| matches_filter(found, filter))
            .cloned()
            .collect();
        items.sort_by(|a, b| b.last_seen.cmp(&a.last_seen).then(a.id.cmp(&b.id)));
        paginate(items, page)
    }
    async fn matches_of_page(&self, page_id: &PageId) -> Result<Vec<Match>> {
        Ok(self
            .data()?
            .matches
            .values()
            .filter(|found| &found.page_id == page_id)
            .cloned()
            .collect())
    }
    async fn review_match(
        &self,
        publisher_id: &PublisherId,
        id: &MatchId,
        review: &Review,
    ) -> Result<Match> {
        let mut data = self.data()?;
        let found = data
            .matches
            .get_mut(id)
            .filter(|found| &found.publisher_id == publisher_id)
            .ok_or_else(|| Error::not_found(format!("match {id}")))?;
        found.status = review.status;
        found.reviews.push(review.clone());
        Ok(found.clone())
    }
}

#[async_trait]
impl FingerprintStore for MemoryStore {
    async fn put_fingerprint(&self, record: &FingerprintRecord) -> Result<()> {
        let key = (record.owner.index_key(), record.version);
        self.data()?.fingerprints.insert(key, record.clone());
        Ok(())
    }
    async fn get_fingerprint(
        &self,
        owner: &FingerprintOwner,
        version: u32,
    ) -> Result<FingerprintRecord> {
        self.data()?
            .fingerprints
            .get(&(owner.index_key(), version))
            .cloned()
            .ok_or_else(|| Error::not_found(format!("fingerprint of {}", owner.index_key())))
    }
    async fn delete_fingerprints(&self, owner: &FingerprintOwner) -> Result<()> {
        let key = owner.index_key();
        self.data()?
            .fingerprints
            .retain(|(owner_key, _), _| owner_key != &key);
        Ok(())
    }
    async fn list_fingerprints(
        &self,
        version: u32,
        page: &PageRequest,
    ) -> Result<Paged<FingerprintRecord>> {
        let items = self
            .data()?
            .fingerprints
            .iter()
            .filter(|((_, record_version), _)| *record_version == version)
            .map(|(_, record)| record.clone())
            .collect();
        paginate(items, page)
    }
}

#[async_trait]
impl ReportStore for MemoryStore {
    async fn put_report(&self, report: &Report) -> Result<()> {
        self.data()?
            .reports
            .insert(report.id.clone(), report.clone());
        Ok(())
    }
    async fn get_report(&self, publisher_id: &PublisherId, id: &ReportId) -> Result<Report> {
        let data = self.data()?;
        data.reports
            .get(id)
            .filter(|report| &report.scope.publisher_id == publisher_id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("report {id}")))
    }
    async fn list_reports(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Report>> {
        let mut items: Vec<Report> = self
            .data()?
            .reports
            .values()
            .filter(|report| &report.scope.publisher_id == publisher_id)
            .cloned()
            .collect();
        items.sort_by_key(|report| std::cmp::Reverse(report.created_at));
        paginate(items, page)
    }
    async fn put_artifact(&self, id: &ReportId, bytes: &[u8]) -> Result<()> {
        self.data()?.artifacts.insert(id.clone(), bytes.to_vec());
        Ok(())
    }
    async fn get_artifact(&self, id: &ReportId) -> Result<Vec<u8>> {
        self.data()?
            .artifacts
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("artifact {id}")))
    }
}
