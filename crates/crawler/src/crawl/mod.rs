//! Crawl execution. One `CrawlSite` task runs a site's whole crawl in one
//! worker with an in-process frontier, so per-host politeness is local and
//! needs no coordination; the caller keeps the task invisible to other workers
//! through [`CrawlProgress::heartbeat`]. A re-delivered task of a finished run
//! returns the stored run; one of an interrupted run resumes: it starts over
//! from the seeds, but every page the killed delivery stored is read back from
//! the store (its links included) instead of fetched again.
//!
//! A run ends `Succeeded`, `Partial` or `Failed` by what its pages did
//! ([`outcome::verdict`]): a crawl that fetched nothing because robots.txt was
//! unreachable, the address was refused or the host did not answer is
//! `Failed`, with the reasons in `recent_errors`, never a silent success.

mod fonts;
mod handler;
mod interrupted;
mod outcome;
mod page;
mod reading;
mod reconcile;
mod run_cache;
mod scripted;
mod share;
mod sheets;
mod sitemaps;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::ids::{CrawlRunId, SiteId};
use copyhound_core::model::{
    CrawlCounters, CrawlRun, CrawlRunStatus, RunScope, Site, Task, TaskKind,
};
use copyhound_core::ports::{Fetcher, PageStore, SiteStore, TaskQueue, WorkStore};
use copyhound_core::{Error, ErrorKind, Result};
use tokio::task::JoinSet;
use tracing::{info, warn};

pub use handler::CrawlHandler;
pub use outcome::{CSS_BUDGET, MAX_RECENT_ERRORS, PageOutcome, reason_of, verdict};
use page::PageContext;
pub use page::{MAX_PARTS, PageReport};

use crate::pacer::HostPacer;
use crate::site::UrlRules;
use crate::urls::normalize_url;

/// Why pages a run had no time left for count as failed.
pub const TIME_BUDGET: &str = "time_budget";

/// How often the run is saved and the heartbeat called while crawling.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);

/// Receives the progress of a crawl run (progress bars, task visibility).
#[async_trait]
pub trait CrawlProgress: Send + Sync {
    /// Called once the run is running.
    fn started(&self, _site: &Site) {}

    /// Called after each fetched document with the counters so far and the
    /// number of URLs waiting in the frontier.
    fn page_done(
        &self,
        _url: &str,
        _outcome: &PageOutcome,
        _counters: &CrawlCounters,
        _frontier_len: usize,
    ) {
    }

    /// Called every [`HEARTBEAT_INTERVAL`] while the run goes on: extend the
    /// task's visibility here. An error stops the run (marked `Failed`).
    async fn heartbeat(&self) -> Result<()> {
        Ok(())
    }
}

/// A [`CrawlProgress`] that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl CrawlProgress for NoProgress {}

/// Runs crawls and single-page fetches against the ports.
#[derive(Clone, Debug)]
pub struct Crawler {
    config: CrawlerConfig,
    fetcher: Arc<dyn Fetcher>,
    sites: Arc<dyn SiteStore>,
    pages: Arc<dyn PageStore>,
    queue: Arc<dyn TaskQueue>,
    share_wait: Duration,
    /// Request slots per host, reserved on the queue: runs of one site that
    /// follow each other (a burst's visits) or overlap, in this process or
    /// another, keep the site's rate between them, not only within each.
    pacer: Arc<HostPacer>,
    /// The publishers' works, whose titles a full run searches a site's
    /// own search for (none: no searching).
    works: Option<Arc<dyn WorkStore>>,
}

impl Crawler {
    /// Returns a crawler over the given ports.
    pub fn new(
        config: CrawlerConfig,
        fetcher: Arc<dyn Fetcher>,
        sites: Arc<dyn SiteStore>,
        pages: Arc<dyn PageStore>,
        queue: Arc<dyn TaskQueue>,
    ) -> Self {
        crate::fonts::use_reference_fonts(&config.reference_fonts);
        Self {
            config,
            fetcher,
            sites,
            pages,
            pacer: Arc::new(HostPacer::shared(queue.clone(), "rate")),
            queue,
            share_wait: share::WAIT,
            works: None,
        }
    }

    /// Searches sites with a known search (`Site::search_url`) for the
    /// titles of their publisher's works on every full run.
    pub fn with_works(mut self, works: Arc<dyn WorkStore>) -> Self {
        self.works = Some(works);
        self
    }

    /// The search result pages a full run of `site` starts from besides its
    /// seeds: its search for each of the publisher's newest titles, at most
    /// `crawler.search_titles_per_run`. A failure to list the works is
    /// logged; the run crawls its seeds.
    async fn search_seeds(&self, site: &Site) -> Vec<String> {
        let (Some(works), Some(template)) = (&self.works, &site.search_url) else {
            return Vec::new();
        };
        let budget = usize::try_from(self.config.search_titles_per_run).unwrap_or(0);
        if budget == 0 {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut page = copyhound_core::ports::PageRequest {
            after: None,
            limit: 200,
        };
        loop {
            match works.list_works(&site.publisher_id, &page).await {
                Ok(listed) => {
                    found.extend(listed.items);
                    match listed.next {
                        Some(after) if found.len() < 5_000 => page.after = Some(after),
                        _ => break,
                    }
                }
                Err(error) => {
                    warn!(site_id=%site.id, error=%error, "works not listed; the run does not search the site");
                    return Vec::new();
                }
            }
        }
        found.sort_by_key(|work| std::cmp::Reverse(work.created_at));
        let mut titles: Vec<String> = Vec::new();
        for work in found {
            let title = work.title.trim().to_string();
            if !title.is_empty() && !titles.contains(&title) {
                titles.push(title);
            }
            if titles.len() == budget {
                break;
            }
        }
        titles
            .iter()
            .map(|title| {
                let encoded: String =
                    url::form_urlencoded::byte_serialize(title.as_bytes()).collect();
                template.replace(copyhound_core::site::SEARCH_KEY, &encoded)
            })
            .collect()
    }

    /// The crawler's configuration.
    pub fn config(&self) -> &CrawlerConfig {
        &self.config
    }

    /// The fetcher every request of this crawler goes through.
    pub fn fetcher(&self) -> Arc<dyn Fetcher> {
        self.fetcher.clone()
    }

    /// Sets how long a run past its publisher's share of crawl slots waits
    /// before it asks again (tests; [`share::WAIT`] otherwise).
    pub fn with_share_wait(mut self, wait: Duration) -> Self {
        self.share_wait = wait;
        self
    }

    /// Crawls a site for a run and returns the finished run (see the module docs).
    pub async fn run_crawl(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        progress: &dyn CrawlProgress,
    ) -> Result<CrawlRun> {
        self.run_crawl_in(site_id, run_id, None, progress).await
    }

    /// Crawls a run whose task carries `scope`: the scope the run's record
    /// keeps, or the task's when the record was lost before it was written.
    pub async fn run_crawl_in(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        scope: Option<&RunScope>,
        progress: &dyn CrawlProgress,
    ) -> Result<CrawlRun> {
        let mut site = self.sites.get_site(site_id).await?;
        let mut run = match self.sites.get_crawl_run(run_id).await {
            Ok(run) => run,
            Err(error) if error.kind() == ErrorKind::NotFound => new_run(run_id, site_id),
            Err(error) => return Err(error),
        };
        if run.scope.is_none() {
            run.scope = scope.cloned();
        }
        if let Some(scope) = &run.scope {
            scope.narrow(&mut site);
        } else {
            let searches = self.search_seeds(&site).await;
            if !searches.is_empty() {
                info!(site_id=%site.id, searches=searches.len(), "the run searches the site for the publisher's titles");
                site.seeds.extend(searches);
            }
        }
        if run.status.is_finished() {
            return Ok(run);
        }
        if !site.enabled {
            return self
                .finish(
                    run,
                    CrawlRunStatus::Cancelled,
                    Some("site is disabled".into()),
                )
                .await;
        }
        let rules = match UrlRules::for_site(&site) {
            Ok(rules) => rules,
            Err(error) => {
                return self
                    .finish(run, CrawlRunStatus::Failed, Some(error.to_string()))
                    .await;
            }
        };
        let interrupted = interrupted::interrupted_runs(self.sites.as_ref(), site_id, &run).await?;
        let resumed = if run.status == CrawlRunStatus::Running {
            interrupted::stored_by(self.pages.as_ref(), site_id, run_id).await?
        } else {
            HashSet::new()
        };
        run.status = CrawlRunStatus::Running;
        run.started_at = Some(Utc::now());
        run.counters = CrawlCounters::default();
        run.recent_errors.clear();
        self.sites.put_crawl_run(&run).await?;
        info!(site_id=%site.id, run_id=%run.id, "crawl started");
        progress.started(&site);
        let new_links_only = run.scope.as_ref().is_some_and(|scope| scope.new_links_only);
        let mut context = self.context(site, rules, run_id.clone());
        context.new_links_only = new_links_only;
        context.interrupted_runs = interrupted;
        if !resumed.is_empty() {
            info!(site_id=%site_id, run_id=%run_id, pages=resumed.len(), "resuming an interrupted crawl run");
        }
        context.resumed = resumed;
        let context = Arc::new(context);
        let crawled = self.crawl_frontier(&context, &mut run, progress).await;
        let crawled = match crawled {
            Ok(()) => {
                let chains = context
                    .chains
                    .lock()
                    .expect("chains lock is never poisoned: no panics while held")
                    .clone();
                reconcile::reconcile(self.pages.as_ref(), &chains)
                    .await
                    .map(drop)
            }
            Err(error) => Err(error),
        };
        self.record_discoveries(&context).await;
        match crawled {
            Ok(()) => {
                let (status, summary) = verdict(&run.counters);
                info!(run_id=%run.id, fetched=run.counters.fetched, status=status.as_str(), "crawl finished");
                self.finish(run, status, summary).await
            }
            Err(error) => {
                warn!(run_id=%run.id, error=%error, "crawl aborted");
                self.finish(run, CrawlRunStatus::Failed, Some(error.to_string()))
                    .await
            }
        }
    }

    /// Ends a run whose crawl task will not finish (it panicked, or its last
    /// attempt failed) as `failed` with `reason`; a finished run stays as it is.
    pub async fn abandon_run(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        reason: &str,
    ) -> Result<()> {
        let run = match self.sites.get_crawl_run(run_id).await {
            Ok(run) => run,
            Err(error) if error.kind() == ErrorKind::NotFound => new_run(run_id, site_id),
            Err(error) => return Err(error),
        };
        self.release_slot(site_id, run_id).await;
        if run.status.is_finished() {
            return Ok(());
        }
        warn!(run_id=%run_id, reason, "crawl abandoned");
        let reason: String = reason.chars().take(500).collect();
        self.finish(
            run,
            CrawlRunStatus::Failed,
            Some(format!("internal error: {reason}")),
        )
        .await
        .map(drop)
    }

    /// Fetches one page (and its pagination parts) of a run, stores it and
    /// enqueues `FetchPage` tasks for its links one level deeper. Does not touch
    /// the run's counters: concurrent single-page tasks would race on them.
    pub async fn handle_fetch_page(
        &self,
        site_id: &SiteId,
        run_id: &CrawlRunId,
        url: &str,
        depth: u32,
    ) -> Result<PageReport> {
        let site = self.sites.get_site(site_id).await?;
        if !site.enabled {
            return Ok(PageReport::default());
        }
        let rules = UrlRules::for_site(&site)?;
        let url = normalize_url(url)?;
        let max_depth = site.max_depth;
        let context = Arc::new(self.context(site.clone(), rules, run_id.clone()));
        context.claim(&url);
        let report = Arc::clone(&context).process(url, None).await;
        self.record_discoveries(&context).await;
        if depth < max_depth {
            let now = Utc::now();
            let tasks: Vec<Task> = report
                .links
                .iter()
                .map(|link| {
                    let kind = TaskKind::FetchPage {
                        site_id: site.id.clone(),
                        run_id: run_id.clone(),
                        url: link.clone(),
                        depth: depth + 1,
                    };
                    Task::new(kind, now)
                })
                .collect();
            if !tasks.is_empty() {
                self.queue.enqueue(tasks).await?;
            }
        }
        Ok(report)
    }

    /// Records the other sites the run's pages pointed at as suggestions for
    /// the site's publisher. A failure is logged: discovery never fails a crawl.
    async fn record_discoveries(&self, context: &PageContext) {
        let candidates = context
            .discovered
            .lock()
            .expect("discovered lock is never poisoned: no panics while held")
            .take();
        if candidates.is_empty() {
            return;
        }
        let site = &context.site;
        match copyhound_intake::suggestions::record(
            self.sites.as_ref(),
            self.queue.as_ref(),
            &site.publisher_id,
            Some(&site.id),
            candidates,
        )
        .await
        {
            Ok(recorded) => {
                if !recorded.new.is_empty() {
                    info!(site_id=%site.id, new=recorded.new.len(), updated=recorded.updated, "sites suggested");
                }
                metrics::counter!("copyhound_sites_suggested_total")
                    .increment(recorded.new.len() as u64);
            }
            Err(error) => warn!(site_id=%site.id, error=%error, "suggested sites not recorded"),
        }
    }

    fn context(&self, site: Site, rules: UrlRules, run_id: CrawlRunId) -> PageContext {
        let own_hosts = site
            .seeds
            .iter()
            .filter_map(|seed| url::Url::parse(seed).ok())
            .filter_map(|seed| copyhound_intake::suggestions::origin_of(&seed))
            .map(|origin| copyhound_intake::suggestions::host_of(&origin).to_string())
            .collect();
        PageContext {
            site,
            rules,
            run_id,
            fetcher: self.fetcher.clone(),
            pages: self.pages.clone(),
            queue: self.queue.clone(),
            pacer: self.pacer.clone(),
            max_links: usize::try_from(self.config.max_links_per_page).unwrap_or(usize::MAX),
            seen: Mutex::new(HashSet::new()),
            fetched: Mutex::new(HashMap::new()),
            chains: Mutex::new(Vec::new()),
            interrupted_runs: HashSet::new(),
            resumed: HashSet::new(),
            sheets: sheets::SheetCache::default(),
            fonts: fonts::FontCache::default(),
            browser: tokio::sync::OnceCell::new(),
            // At most a century: longer is "never again" anyway.
            max_revisit: chrono::Duration::hours(
                i64::try_from(self.config.max_revisit_hours.min(24 * 366 * 100)).unwrap_or(0),
            ),
            new_links_only: false,
            own_hosts,
            discovered: Mutex::new(crate::discover::Found::default()),
            render: page::RenderSettings {
                chromium: self.config.chromium.clone(),
                timeout: Duration::from_millis(self.config.render_timeout_ms),
                max_requests: self.config.max_render_requests,
            },
        }
    }

    async fn crawl_frontier(
        &self,
        context: &Arc<PageContext>,
        run: &mut CrawlRun,
        progress: &dyn CrawlProgress,
    ) -> Result<()> {
        let site = &context.site;
        let budget = usize::try_from(site.max_pages_per_run).unwrap_or(usize::MAX);
        let concurrency = usize::try_from(site.concurrency.max(1)).unwrap_or(1);
        // (URL, depth, the page that linked to it)
        let mut frontier: VecDeque<(String, u32, Option<String>)> = VecDeque::new();
        let mut seeds: HashSet<String> = HashSet::new();
        for seed in &site.seeds {
            match normalize_url(seed) {
                Ok(seed) if context.claim(&seed) => {
                    seeds.insert(seed.clone());
                    frontier.push_back((seed, 0, None));
                }
                Ok(_) => {}
                Err(error) => outcome::record(run, seed, &PageOutcome::from_error(&error)),
            }
        }
        // The run's wall-clock budget: past it, what waits is counted as failed
        // (`time_budget`) and the run ends partial, so no site holds a slot for ever.
        let deadline =
            tokio::time::Instant::now() + Duration::from_secs(self.config.max_run_seconds.max(1));
        // What the sites' sitemaps list joins the frontier one hop from the seeds.
        let interval = crate::pacer::interval_for_rate(site.rate_limit_per_second);
        // A targeted run starts from its pages alone.
        let listed = if context.new_links_only {
            let robots =
                sitemaps::read_robots(self.fetcher.as_ref(), &context.pacer, interval, &site.seeds);
            let _ = tokio::time::timeout_at(deadline, robots).await;
            Vec::new()
        } else {
            tokio::time::timeout_at(
                deadline,
                sitemaps::discover(
                    self.fetcher.as_ref(),
                    &context.pacer,
                    interval,
                    &site.seeds,
                    &context.rules,
                    budget,
                ),
            )
            .await
            .unwrap_or_default()
        };
        for url in listed {
            if frontier.len() >= budget {
                break;
            }
            if context.claim(&url) {
                frontier.push_back((url, 1, None));
            }
        }
        let mut in_flight: JoinSet<(u32, String, PageReport)> = JoinSet::new();
        let mut dispatched = 0usize;
        let mut heartbeat = tokio::time::interval(HEARTBEAT_INTERVAL);
        heartbeat.tick().await;
        loop {
            while in_flight.len() < concurrency && dispatched < budget {
                let Some((url, depth, via)) = frontier.pop_front() else {
                    break;
                };
                dispatched += 1;
                let task_context = context.clone();
                in_flight.spawn(async move {
                    let report = task_context.process(url.clone(), via).await;
                    (depth, url, report)
                });
            }
            if in_flight.is_empty() {
                return Ok(());
            }
            tokio::select! {
                joined = in_flight.join_next() => {
                    let Some(joined) = joined else { return Ok(()) };
                    let (depth, from, report) = joined.map_err(|err| Error::internal(format!("page task failed: {err}")))?;
                    for (url, page_outcome) in report.outcomes {
                        let page_outcome = outcome::for_link(page_outcome, seeds.contains(&url));
                        outcome::record(run, &url, &page_outcome);
                        progress.page_done(&url, &page_outcome, &run.counters, frontier.len());
                    }
                    for url in &report.css_fallbacks {
                        info!(run_id=%run.id, url=%url, "page read as markup: css over its time budget");
                        outcome::record_css_fallback(run);
                    }
                    for (_, ms) in &report.rendered {
                        outcome::record_rendered(run, *ms);
                    }
                    for (url, reason) in &report.unreadable {
                        info!(run_id=%run.id, url=%url, reason=%reason, "page stored unreadable");
                        outcome::record_unreadable(run, url, reason);
                    }
                    if depth < site.max_depth {
                        for link in report.links {
                            if frontier.len() + dispatched >= budget {
                                break;
                            }
                            if context.new_links_only && context.stored(&link).await {
                                continue;
                            }
                            if context.claim(&link) {
                                frontier.push_back((link, depth + 1, Some(from.clone())));
                            }
                        }
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    let waiting = in_flight.len() + frontier.len().min(budget.saturating_sub(dispatched));
                    in_flight.abort_all();
                    *run.counters.failed.entry(TIME_BUDGET.to_string()).or_default() +=
                        u64::try_from(waiting.max(1)).unwrap_or(u64::MAX);
                    warn!(run_id=%run.id, waiting, "crawl run out of time");
                    return Ok(());
                }
                _ = heartbeat.tick() => {
                    if let Err(error) = progress.heartbeat().await {
                        in_flight.abort_all();
                        return Err(error);
                    }
                    if let Err(error) = self.sites.put_crawl_run(run).await {
                        warn!(run_id=%run.id, error=%error, "cannot save crawl progress");
                    }
                }
            }
        }
    }

    async fn finish(
        &self,
        mut run: CrawlRun,
        status: CrawlRunStatus,
        error: Option<String>,
    ) -> Result<CrawlRun> {
        run.status = status;
        run.finished_at = Some(Utc::now());
        if let Some(error) = error {
            outcome::push_recent_error(&mut run.recent_errors, None, error);
        }
        self.sites.put_crawl_run(&run).await?;
        Ok(run)
    }
}

/// The record of a run whose task came before its record (see
/// `copyhound_intake::crawls`): queued now.
fn new_run(run_id: &CrawlRunId, site_id: &SiteId) -> CrawlRun {
    CrawlRun::queued(run_id.clone(), site_id.clone(), Utc::now())
}
