//! Port stand-ins of the crawl throughput benchmark only: maps behind a mutex,
//! so the benchmark measures the crawler (fetch, decode, extract) and not a
//! store's disk writes. Tests use the embedded backends instead.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::ids::{CrawlRunId, PageId, PublisherId, SiteId};
use copyhound_core::model::{
    CrawlRun, Page, PageVersion, Site, SiteSuggestion, SuggestionStatus, Task,
};
use copyhound_core::ports::{
    AckId, DeadTask, PageRequest, PageStore, PageUpsert, Paged, QueueStats, ReceivedTask,
    SiteStore, TaskQueue,
};
use copyhound_core::{Error, Result};

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .expect("fake lock is never poisoned: no panics while held")
}

fn paginate<T: Clone>(items: impl Iterator<Item = (String, T)>, request: &PageRequest) -> Paged<T> {
    let limit = usize::try_from(request.limit.clamp(1, 1000)).unwrap_or(1000);
    let mut page: Vec<(String, T)> = items
        .filter(|(key, _)| request.after.as_ref().is_none_or(|after| key > after))
        .take(limit + 1)
        .collect();
    let next = (page.len() > limit).then(|| page[limit - 1].0.clone());
    page.truncate(limit);
    Paged {
        items: page.into_iter().map(|(_, item)| item).collect(),
        next,
    }
}

/// Sites and crawl runs in memory.
#[derive(Debug, Default)]
pub struct MemorySiteStore {
    sites: Mutex<BTreeMap<SiteId, Site>>,
    runs: Mutex<BTreeMap<CrawlRunId, CrawlRun>>,
}

#[async_trait]
impl SiteStore for MemorySiteStore {
    async fn put_suggestion(&self, _suggestion: &SiteSuggestion) -> Result<()> {
        Ok(())
    }

    async fn get_suggestion(
        &self,
        _publisher_id: &PublisherId,
        id: &str,
    ) -> Result<SiteSuggestion> {
        Err(Error::not_found(format!("site suggestion {id}")))
    }

    async fn list_suggestions(
        &self,
        _publisher_id: &PublisherId,
        _status: Option<SuggestionStatus>,
        _page: &PageRequest,
    ) -> Result<Paged<SiteSuggestion>> {
        Ok(Paged {
            items: Vec::new(),
            next: None,
        })
    }

    async fn put_site(&self, site: &Site) -> Result<()> {
        lock(&self.sites).insert(site.id.clone(), site.clone());
        Ok(())
    }

    async fn get_site(&self, id: &SiteId) -> Result<Site> {
        lock(&self.sites)
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("site {id}")))
    }

    async fn list_sites(
        &self,
        publisher_id: Option<&PublisherId>,
        page: &PageRequest,
    ) -> Result<Paged<Site>> {
        let sites = lock(&self.sites);
        let items = sites
            .values()
            .filter(|site| publisher_id.is_none_or(|publisher| &site.publisher_id == publisher))
            .map(|site| (site.id.to_string(), site.clone()));
        Ok(paginate(items, page))
    }

    async fn put_crawl_run(&self, run: &CrawlRun) -> Result<()> {
        lock(&self.runs).insert(run.id.clone(), run.clone());
        Ok(())
    }

    async fn get_crawl_run(&self, id: &CrawlRunId) -> Result<CrawlRun> {
        lock(&self.runs)
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("crawl run {id}")))
    }

    async fn list_crawl_runs(
        &self,
        site_id: &SiteId,
        page: &PageRequest,
    ) -> Result<Paged<CrawlRun>> {
        let runs = lock(&self.runs);
        let mut items: Vec<&CrawlRun> = runs
            .values()
            .filter(|run| &run.site_id == site_id)
            .collect();
        items.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| b.id.cmp(&a.id))
        });
        let keyed = items
            .into_iter()
            .enumerate()
            .map(|(index, run)| (format!("{index:012}"), run.clone()));
        Ok(paginate(keyed, page))
    }
}

/// Pages in memory, with the version history of the port contract.
#[derive(Debug, Default)]
pub struct MemoryPageStore {
    pages: Mutex<BTreeMap<PageId, Page>>,
}

impl MemoryPageStore {
    /// Returns every stored page, by id.
    pub fn all(&self) -> Vec<Page> {
        lock(&self.pages).values().cloned().collect()
    }
}

#[async_trait]
impl PageStore for MemoryPageStore {
    async fn upsert_page(&self, page: &Page) -> Result<PageUpsert> {
        let mut pages = lock(&self.pages);
        let Some(stored) = pages.get(&page.id) else {
            pages.insert(page.id.clone(), page.clone());
            return Ok(PageUpsert::New);
        };
        let mut updated = page.clone();
        updated.first_seen = stored.first_seen;
        updated.previous_versions = stored.previous_versions.clone();
        let outcome = if stored.content_sha256 == page.content_sha256 {
            PageUpsert::Unchanged
        } else {
            updated.previous_versions.push(PageVersion {
                body_sha256: stored.body_sha256.clone(),
                first_seen: stored.first_seen,
                last_seen: stored.last_seen,
            });
            PageUpsert::Changed
        };
        pages.insert(page.id.clone(), updated);
        Ok(outcome)
    }

    async fn get_page(&self, id: &PageId) -> Result<Page> {
        lock(&self.pages)
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("page {id}")))
    }

    async fn list_pages(&self, site_id: &SiteId, page: &PageRequest) -> Result<Paged<Page>> {
        let pages = lock(&self.pages);
        let items = pages
            .values()
            .filter(|stored| &stored.site_id == site_id)
            .map(|stored| (stored.id.to_string(), stored.clone()));
        Ok(paginate(items, page))
    }
}

/// A queue that records enqueued tasks; `receive` hands them out once, in order.
#[derive(Debug, Default)]
pub struct MemoryTaskQueue {
    enqueued: Mutex<Vec<Task>>,
    next: Mutex<usize>,
}

impl MemoryTaskQueue {
    /// Returns every task enqueued so far (duplicates included).
    pub fn enqueued(&self) -> Vec<Task> {
        lock(&self.enqueued).clone()
    }
}

#[async_trait]
impl TaskQueue for MemoryTaskQueue {
    async fn check_connectivity(&self) -> Result<()> {
        Ok(())
    }

    async fn enqueue(&self, tasks: Vec<Task>) -> Result<()> {
        lock(&self.enqueued).extend(tasks);
        Ok(())
    }

    async fn receive(&self, max: usize, _visibility: Duration) -> Result<Vec<ReceivedTask>> {
        let enqueued = lock(&self.enqueued);
        let mut next = lock(&self.next);
        let end = (*next + max).min(enqueued.len());
        let delivered = enqueued[*next..end]
            .iter()
            .enumerate()
            .map(|(offset, task)| ReceivedTask {
                ack_id: AckId(format!("{}", *next + offset)),
                task: task.clone(),
                attempt: 1,
            })
            .collect();
        *next = end;
        Ok(delivered)
    }

    async fn acknowledge(&self, _ack_ids: &[AckId]) -> Result<()> {
        Ok(())
    }

    async fn fail(&self, _ack_id: &AckId, _error: &str) -> Result<()> {
        Ok(())
    }

    async fn extend(&self, _ack_id: &AckId, _visibility: Duration) -> Result<()> {
        Ok(())
    }

    async fn defer(&self, _ack_id: &AckId, _delay: Duration) -> Result<()> {
        Ok(())
    }

    async fn acquire_slot(&self, _: &str, _: &str, _: u32, _: Duration) -> Result<bool> {
        Ok(true)
    }

    async fn release_slot(&self, _group: &str, _holder: &str) -> Result<()> {
        Ok(())
    }

    async fn reserve_turn(&self, _key: &str, _interval: Duration) -> Result<Duration> {
        Ok(Duration::ZERO)
    }

    async fn stats(&self) -> Result<QueueStats> {
        let depth = lock(&self.enqueued).len().saturating_sub(*lock(&self.next));
        Ok(QueueStats {
            depth: depth as u64,
            ..QueueStats::default()
        })
    }

    async fn dead_letters(&self, _limit: usize) -> Result<Vec<DeadTask>> {
        Ok(Vec::new())
    }

    async fn retry_dead(&self, _limit: usize) -> Result<u64> {
        Ok(0)
    }
}
