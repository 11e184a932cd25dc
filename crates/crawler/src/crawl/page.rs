//! One logical page: fetch (conditionally), decode, extract, follow the
//! "next page" chain of a chapter split over several pages, store every part
//! and enqueue fingerprinting of new or changed content.
//!
//! Pagination: each part is stored as its own [`Page`] (own URL, id and text),
//! because matches are reported per page; every part carries a
//! [`Pagination`] (first URL, position, all part URLs) and the first part
//! also the joined text of the whole chapter.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use copyhound_core::ids::{CrawlRunId, PageId, sha256_hex};
use copyhound_core::model::{
    Connection, FetchMeta, MAX_REVALIDATIONS, Page, Pagination, Reading, Render, Revalidation,
    Site, Task, TaskKind, Timestamp,
};
use copyhound_core::ports::{
    FetchRequest, FetchedPage, Fetcher, PageStore, PageUpsert, Resource, TaskQueue,
};
use copyhound_core::stages::{Stage, time, time_async};
use copyhound_core::{Error, ErrorKind, Result};
use tracing::{debug, warn};
use url::Url;

use super::fonts::FontCache;
use super::outcome::PageOutcome;
use super::sheets::SheetCache;
use crate::charset::decode_body;
use crate::extract::{Extracted, extract_with_fonts};
use crate::fonts::apply::FontSource;
use crate::pacer::HostPacer;
use crate::render::{Chromium, RenderLimits};
use crate::site::UrlRules;
use crate::urls::{origin_key, resolve_link};

/// Parts followed per paginated chapter.
pub const MAX_PARTS: usize = 10;

/// How long a chain waits for another task's fetch of one of its parts
/// before fetching it itself (a bound, should two chains wait on each other).
const PART_WAIT: Duration = Duration::from_secs(30);

/// Held by the task that fetches a URL until the page is stored; dropping it
/// wakes tasks waiting for that page.
type FetchGuard = tokio::sync::watch::Sender<()>;

/// Everything one page task needs, shared by the page tasks of a run.
#[derive(Debug)]
pub(crate) struct PageContext {
    pub(crate) site: Site,
    pub(crate) rules: UrlRules,
    pub(crate) run_id: CrawlRunId,
    pub(crate) fetcher: Arc<dyn Fetcher>,
    pub(crate) pages: Arc<dyn PageStore>,
    pub(crate) queue: Arc<dyn TaskQueue>,
    pub(crate) pacer: Arc<HostPacer>,
    pub(crate) max_links: usize,
    /// URLs claimed in this run (frontier and pagination parts).
    pub(crate) seen: Mutex<HashSet<String>>,
    /// URLs fetched in this run: the frontier does not fetch one again, and a
    /// chain that reaches one waits for its fetch to be stored, then reads it
    /// back (the receiver's sender drops when the fetching task is done).
    pub(crate) fetched: Mutex<HashMap<String, tokio::sync::watch::Receiver<()>>>,
    /// Every pagination chain followed in this run, as part URLs.
    pub(crate) chains: Mutex<Vec<Vec<String>>>,
    /// Runs cut short by a killed process: a page one of them stored last may
    /// have lost its fingerprint task, so it is enqueued again.
    pub(crate) interrupted_runs: HashSet<CrawlRunId>,
    /// Pages an earlier delivery of this run stored before its process was
    /// killed: read back from the store, not fetched again (the run resumes).
    pub(crate) resumed: HashSet<String>,
    /// Same-site style sheets, fetched once per run.
    pub(crate) sheets: SheetCache,
    /// Same-site web fonts, fetched and decoded once per run.
    pub(crate) fonts: FontCache,
    /// The run's browser, started on the first page a site has rendered.
    pub(crate) browser: tokio::sync::OnceCell<std::result::Result<Arc<Chromium>, String>>,
    /// Chromium binary, render timeout and request budget.
    pub(crate) render: RenderSettings,
    /// Longest pause between visits of a stable chapter page; zero: no pause.
    pub(crate) max_revisit: chrono::Duration,
    /// A targeted run (a release burst, quiet watching): links to pages
    /// already stored are not followed.
    pub(crate) new_links_only: bool,
    /// Hosts of the site itself (its seeds): links elsewhere are discoveries.
    pub(crate) own_hosts: Vec<String>,
    /// Other sites this run's pages point at (see [`crate::discover`]).
    pub(crate) discovered: Mutex<crate::discover::Found>,
}

/// Whether a stored page is due for a visit. Chapters rarely change once
/// posted: a content page stable for a time `t` is visited again after `t / 2`,
/// at most `max_revisit` (the usual age-based revisit policy). Pages that are
/// not chapters (home and list pages: where new chapters appear), pages never
/// stored and a zero `max_revisit` are always due.
pub(crate) fn revisit_due(page: &Page, now: Timestamp, max_revisit: chrono::Duration) -> bool {
    let is_chapter = page.text.chars().filter(|c| !c.is_whitespace()).count()
        >= crate::extract::MIN_CONTENT_CHARS;
    if max_revisit.is_zero() || !is_chapter {
        return true;
    }
    let changed = page
        .previous_versions
        .iter()
        .map(|version| version.last_seen)
        .max()
        .unwrap_or(page.first_seen);
    let stable = page.last_seen - changed;
    let pause = (stable / 2).min(max_revisit);
    now - page.last_seen >= pause
}

/// How pages of `render = "chromium"` sites are rendered.
#[derive(Clone, Debug)]
pub(crate) struct RenderSettings {
    pub(crate) chromium: String,
    pub(crate) timeout: std::time::Duration,
    pub(crate) max_requests: u32,
}

/// What processing one logical page produced.
#[derive(Debug, Default)]
pub struct PageReport {
    /// Every fetched document (the page and its parts) with its outcome.
    pub outcomes: Vec<(String, PageOutcome)>,
    /// Allowed, normalized links found on the page and its parts.
    pub links: Vec<String>,
    /// Stored documents read as markup alone, their CSS cascade out of time
    /// (`style::CSS_TIME_BUDGET`).
    pub css_fallbacks: Vec<String>,
    /// Documents rendered by Chromium, with the milliseconds each took.
    pub rendered: Vec<(String, u64)>,
    /// Stored documents whose text looks like no language, with the reason.
    pub unreadable: Vec<(String, String)>,
}

/// A page's text as read, with how it was read.
struct Read {
    charset: String,
    extracted: Extracted,
    reading: Reading,
    render_ms: Option<u64>,
}

/// Why a page is rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    /// The site is `render = "chromium"`.
    Asked,
    /// An inline script decodes an embedded payload into the page.
    Payload,
    /// The text as served is thin and a script writes into the page.
    Thin,
}

impl Trigger {
    fn name(self) -> &'static str {
        match self {
            Trigger::Asked => "asked",
            Trigger::Payload => "payload",
            Trigger::Thin => "thin",
        }
    }
}

struct Doc {
    /// Read back from what this run stored, not fetched: its outcome was
    /// reported when it was fetched.
    reused: bool,
    /// `fetched` is the stored response, not a new one: storing it again
    /// keeps when and how that response was received.
    from_store: bool,
    /// A chapter page stable for long, read back from an earlier run and not
    /// fetched: not stored again (its `last_seen` stays the last visit).
    fresh: bool,
    url: String,
    fetched: FetchedPage,
    previous: Option<Page>,
    charset: String,
    extracted: Extracted,
    /// How the text was read (rendered, decoded through fonts, unreadable).
    reading: Reading,
    /// Wall time of rendering it, when it was rendered here, milliseconds.
    render_ms: Option<u64>,
    links: Vec<String>,
    next_part: Option<String>,
}

impl PageContext {
    /// Claims `url` for this run; false if it was claimed before.
    pub(crate) fn claim(&self, url: &str) -> bool {
        self.seen
            .lock()
            .expect("seen-set lock is never poisoned: no panics while held")
            .insert(url.to_string())
    }

    fn was_fetched(&self, url: &str) -> bool {
        self.fetched
            .lock()
            .expect("fetched-set lock is never poisoned: no panics while held")
            .contains_key(url)
    }

    /// Whether a page is stored at `url` (a store error counts as stored: a
    /// targeted run then fetches less, never more).
    pub(crate) async fn stored(&self, url: &str) -> bool {
        match self.pages.get_page(&PageId::for_url(url)).await {
            Ok(_) => true,
            Err(error) => error.kind() != copyhound_core::ErrorKind::NotFound,
        }
    }

    /// Marks `url` fetched by the caller, who holds the returned guard until
    /// the page is stored; `None` when another task marked it first.
    fn mark_fetched(&self, url: &str) -> Option<FetchGuard> {
        let mut fetched = self
            .fetched
            .lock()
            .expect("fetched-set lock is never poisoned: no panics while held");
        if fetched.contains_key(url) {
            return None;
        }
        let (guard, done) = tokio::sync::watch::channel(());
        fetched.insert(url.to_string(), done);
        Some(guard)
    }

    /// Waits until the task fetching `url` has stored it (or given up).
    async fn wait_for_fetch(&self, url: &str) {
        let done = self
            .fetched
            .lock()
            .expect("fetched-set lock is never poisoned: no panics while held")
            .get(url)
            .cloned();
        if let Some(mut done) = done {
            // Resolves with an error once the guard drops; nothing is ever sent.
            let _stored = tokio::time::timeout(PART_WAIT, done.changed()).await;
        }
    }

    /// Processes the page at `url` (reached by a link on `via`) and its
    /// pagination chain.
    pub(crate) async fn process(self: Arc<Self>, url: String, via: Option<String>) -> PageReport {
        let mut report = PageReport::default();
        if self.was_fetched(&url) {
            // A later part of a chain that got there first: the chain stores it.
            return report;
        }
        let mut chain: Vec<Doc> = Vec::new();
        // Held until every part is stored: chains waiting on a part wake then.
        let mut guards: Vec<FetchGuard> = Vec::new();
        let mut next = Some(url);
        while let Some(part_url) = next.take() {
            match self.fetch_doc(&part_url, &mut guards).await {
                Ok(doc) => {
                    next = doc.next_part.clone().filter(|candidate| {
                        chain.len() + 1 < MAX_PARTS
                            && candidate != &doc.url
                            && !chain.iter().any(|part| &part.url == candidate)
                    });
                    if let Some(candidate) = &next {
                        self.claim(candidate);
                    }
                    chain.push(doc);
                }
                Err(error) => {
                    debug!(url=%part_url, error=%error, "page not fetched");
                    report
                        .outcomes
                        .push((part_url, PageOutcome::from_error(&error)));
                }
            }
        }
        let mut seen_links = HashSet::new();
        for doc in &chain {
            for link in &doc.links {
                if seen_links.insert(link.as_str()) {
                    report.links.push(link.clone());
                }
            }
        }
        let parts = chain.len();
        let part_urls: Vec<String> = chain.iter().map(|doc| doc.url.clone()).collect();
        if parts > 1 {
            self.chains
                .lock()
                .expect("chains lock is never poisoned: no panics while held")
                .push(part_urls.clone());
        }
        let joined_text = (parts > 1).then(|| {
            chain
                .iter()
                .map(|doc| doc.extracted.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        });
        for (index, doc) in chain.into_iter().enumerate() {
            let pagination = (parts > 1).then(|| Pagination {
                first_url: part_urls[0].clone(),
                part: u32::try_from(index + 1).unwrap_or(u32::MAX),
                part_urls: part_urls.clone(),
                joined_text: if index == 0 {
                    joined_text.clone()
                } else {
                    None
                },
            });
            let url = doc.url.clone();
            let reused = doc.reused;
            let read_as_markup = doc.extracted.styled.read_as_markup;
            let unreadable = doc.reading.unreadable.clone();
            if let Some(ms) = doc.render_ms
                && !reused
            {
                report.rendered.push((url.clone(), ms));
            }
            if doc.fresh {
                report.outcomes.push((
                    url,
                    PageOutcome::Skipped {
                        reason: super::outcome::FRESH.into(),
                    },
                ));
                continue;
            }
            let found_via = if index == 0 { via.clone() } else { None };
            let outcome = match self.store(doc, pagination, found_via).await {
                Ok(outcome) => outcome,
                Err(error) => {
                    warn!(url=%url, error=%error, "storing page failed");
                    PageOutcome::Failed {
                        reason: format!("store_{}", error.code()),
                        message: error.message().to_string(),
                    }
                }
            };
            if !reused {
                if read_as_markup
                    && matches!(
                        outcome,
                        PageOutcome::Stored { .. } | PageOutcome::NotModified
                    )
                {
                    report.css_fallbacks.push(url.clone());
                }
                if let Some(reason) = unreadable
                    && matches!(
                        outcome,
                        PageOutcome::Stored { .. } | PageOutcome::NotModified
                    )
                {
                    report.unreadable.push((url.clone(), reason));
                }
                report.outcomes.push((url, outcome));
            }
        }
        drop(guards);
        report
    }

    /// Fetches one part. A part another task of this run is fetching is read
    /// back from the store once that task has stored it, not fetched twice.
    async fn fetch_doc(&self, url: &str, guards: &mut Vec<FetchGuard>) -> Result<Doc> {
        let resumed = self.resumed.contains(url);
        let guard = self.mark_fetched(url);
        let elsewhere = guard.is_none();
        if elsewhere {
            self.wait_for_fetch(url).await;
        }
        guards.extend(guard);
        if (resumed || elsewhere)
            && let Some(doc) = self.stored_doc(url, !resumed).await
        {
            return Ok(doc);
        }
        let previous = match self.pages.get_page(&PageId::for_url(url)).await {
            Ok(page) => Some(page),
            Err(error) if error.kind() == ErrorKind::NotFound => None,
            Err(error) => {
                warn!(url=%url, error=%error, "cannot read the stored page, fetching unconditionally");
                None
            }
        };
        if let Some(page) = &previous
            && !self.site.seeds.iter().any(|seed| seed == url)
            && !revisit_due(page, Utc::now(), self.max_revisit)
            && let Some(mut doc) = self.doc_of_stored(page.clone(), true).await
        {
            doc.fresh = true;
            return Ok(doc);
        }
        let request = FetchRequest {
            url: url.to_string(),
            etag: previous.as_ref().and_then(|page| page.fetch.etag.clone()),
            last_modified: previous
                .as_ref()
                .and_then(|page| page.fetch.last_modified.clone()),
            resource: Resource::Page,
        };
        if let Ok(parsed) = Url::parse(url) {
            let interval = crate::pacer::interval_for_rate(self.site.rate_limit_per_second);
            self.pacer.wait(&origin_key(&parsed), interval).await;
        }
        let mut fetched = time_async(Stage::Fetch, self.fetcher.fetch(&request)).await?;
        if fetched.status == 304 {
            let Some(stored) = previous.as_ref() else {
                return Err(Error::new(
                    ErrorKind::Transient,
                    "304 for a page that is not stored",
                ));
            };
            fetched.body = stored.raw_body.clone();
        }
        let page_url =
            crate::urls::normalize_url(&fetched.final_url).unwrap_or_else(|_| url.to_string());
        if page_url != url {
            self.claim(&page_url);
        }
        let read = self.read(&fetched, &page_url, true).await?;
        self.doc(page_url, fetched, previous, read, false)
    }

    /// A page this run stored already, without fetching it again. `reused`:
    /// its outcome was reported when it was fetched (a chain part); a page an
    /// earlier delivery stored is reported again, as that delivery's counts are lost.
    async fn stored_doc(&self, url: &str, reused: bool) -> Option<Doc> {
        let page = self.pages.get_page(&PageId::for_url(url)).await.ok()?;
        if page.fetch.crawl_run_id.as_ref() != Some(&self.run_id) {
            return None;
        }
        self.doc_of_stored(page, reused).await
    }

    /// A stored page as a document, read again (links, next part) without fetching.
    async fn doc_of_stored(&self, page: Page, reused: bool) -> Option<Doc> {
        let url = page.url.clone();
        let url = url.as_str();
        let fetched = FetchedPage {
            final_url: page.fetch.final_url.clone(),
            status: page.fetch.status,
            content_type: page.fetch.content_type.clone(),
            etag: page.fetch.etag.clone(),
            last_modified: page.fetch.last_modified.clone(),
            headers: page.fetch.headers.clone(),
            body: page.raw_body.clone(),
            duration_ms: 0,
            received_at: None,
            connection: None,
        };
        let read = self.read(&fetched, url, false).await.ok()?;
        let url = page.url.clone();
        let mut doc = self.doc(url, fetched, Some(page), read, reused).ok()?;
        doc.from_store = true;
        Some(doc)
    }

    fn doc(
        &self,
        page_url: String,
        fetched: FetchedPage,
        previous: Option<Page>,
        read: Read,
        reused: bool,
    ) -> Result<Doc> {
        let Read {
            charset,
            extracted,
            reading,
            render_ms,
        } = read;
        let base = base_url(&page_url, extracted.base_href.as_deref());
        let links = self.allowed_links(&base, &extracted.links);
        crate::discover::read_page(
            &mut self
                .discovered
                .lock()
                .expect("discovered lock is never poisoned: no panics while held"),
            &self.own_hosts,
            &page_url,
            &base,
            &extracted.links,
            &extracted.text,
        );
        let next_part = extracted
            .next_page_url
            .as_deref()
            .and_then(|href| resolve_link(&base, href))
            .filter(|next| self.rules.allows(next));
        Ok(Doc {
            reused,
            from_store: false,
            fresh: false,
            url: page_url,
            fetched,
            previous,
            charset,
            extracted,
            reading,
            render_ms,
            links,
            next_part,
        })
    }

    /// Reads a fetched page's text (see `super::reading`): rendered first when
    /// the site asks for it or an inline script decodes a payload into the
    /// page; rendered after a first reading when that text is thin and a
    /// script writes into the page (`render = "auto"`). With `fetch_resources`
    /// the style sheets and web fonts it applies are fetched (politely, once
    /// per run) and the page read again with them.
    async fn read(
        &self,
        fetched: &FetchedPage,
        page_url: &str,
        fetch_resources: bool,
    ) -> Result<Read> {
        let mode = self.site.extraction.render;
        let binary = looks_binary(&fetched.body);
        let payload = !binary && super::scripted::text_arrives_by_script(&fetched.body);
        let mut rendered = match mode {
            Render::Chromium if !binary => self.render(fetched, page_url, Trigger::Asked).await,
            Render::Auto if payload => self.render(fetched, page_url, Trigger::Payload).await,
            _ => None,
        };
        let mut read = self
            .analyze_with_resources(
                rendered.as_ref().map_or(fetched, |(page, _)| page),
                page_url,
                fetch_resources,
            )
            .await?;
        let thin_writer = rendered.is_none()
            && !binary
            && super::reading::is_thin(&read.1.text)
            && super::scripted::writes_into_page(&fetched.body);
        if thin_writer
            && mode == Render::Auto
            && let Some(page) = self.render(fetched, page_url, Trigger::Thin).await
        {
            read = self
                .analyze_with_resources(&page.0, page_url, fetch_resources)
                .await?;
            rendered = Some(page);
        }
        let (charset, extracted) = read;
        let scripted = payload || thin_writer;
        let reading = super::reading::reading_of(&extracted, rendered.is_some(), scripted);
        Ok(Read {
            charset,
            extracted,
            reading,
            render_ms: rendered.map(|(_, ms)| ms),
        })
    }

    /// Extracts the page; with `fetch_resources`, fetches the sheets and
    /// fonts it applies that the run has not read yet and extracts again.
    async fn analyze_with_resources(
        &self,
        source: &FetchedPage,
        page_url: &str,
        fetch_resources: bool,
    ) -> Result<(String, Extracted)> {
        let mut extracted = self.analyze(source, page_url).await?;
        if !fetch_resources {
            return Ok(extracted);
        }
        if !extracted.1.unread_sheets.is_empty() {
            let interval = crate::pacer::interval_for_rate(self.site.rate_limit_per_second);
            let fetched_sheets = self
                .sheets
                .fetch_missing(
                    page_url,
                    &extracted.1.unread_sheets,
                    self.fetcher.as_ref(),
                    &self.pacer,
                    interval,
                )
                .await;
            if fetched_sheets {
                extracted = self.analyze(source, page_url).await?;
            }
        }
        if !extracted.1.fonts.unread.is_empty() {
            let interval = crate::pacer::interval_for_rate(self.site.rate_limit_per_second);
            let fetched_fonts = self
                .fonts
                .fetch_missing(
                    page_url,
                    &extracted.1.fonts.unread,
                    self.fetcher.as_ref(),
                    &self.pacer,
                    interval,
                )
                .await;
            if fetched_fonts {
                extracted = self.analyze(source, page_url).await?;
            }
        }
        Ok(extracted)
    }

    /// The page as Chromium shows it after its scripts ran (see
    /// `crate::render`), with the milliseconds it took; `None` when no
    /// browser is installed or rendering fails (the page is then read as
    /// served, and the log says why).
    async fn render(
        &self,
        fetched: &FetchedPage,
        page_url: &str,
        trigger: Trigger,
    ) -> Option<(FetchedPage, u64)> {
        let asked = trigger == Trigger::Asked;
        let browser = self
            .browser
            .get_or_init(|| async {
                Chromium::launch(&self.render.chromium)
                    .await
                    .map(Arc::new)
                    .map_err(|error| error.message().to_string())
            })
            .await;
        let browser = match browser {
            Ok(browser) => browser,
            Err(error) if asked => {
                warn!(url = %page_url, error = %error, "cannot render: no browser");
                return None;
            }
            Err(error) => {
                debug!(url = %page_url, error = %error, "a scripted page read as served: no browser");
                return None;
            }
        };
        let decoded = decode_body(
            &fetched.body,
            fetched.content_type.as_deref(),
            self.site.charset_override.as_deref(),
        );
        let limits = RenderLimits {
            timeout: self.render.timeout,
            max_requests: self.render.max_requests,
            interval: crate::pacer::interval_for_rate(self.site.rate_limit_per_second),
        };
        let started = std::time::Instant::now();
        let rendered = browser
            .render(
                page_url,
                &decoded.text,
                self.fetcher.as_ref(),
                &self.pacer,
                limits,
            )
            .await;
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        metrics::counter!("copyhound_render_milliseconds_total", "trigger" => trigger.name())
            .increment(elapsed_ms);
        match rendered {
            Ok(html) => {
                metrics::counter!("copyhound_pages_rendered_total", "trigger" => trigger.name())
                    .increment(1);
                let page = FetchedPage {
                    body: html.into_bytes(),
                    content_type: Some("text/html; charset=utf-8".into()),
                    ..fetched.clone()
                };
                Some((page, elapsed_ms))
            }
            Err(error) => {
                warn!(url = %page_url, error = %error, "render failed; reading the page as served");
                None
            }
        }
    }

    /// Decodes and extracts a fetched body off the async threads, with the
    /// run's style sheets.
    async fn analyze(&self, fetched: &FetchedPage, page_url: &str) -> Result<(String, Extracted)> {
        let body = fetched.body.clone();
        let content_type = fetched.content_type.clone();
        let charset_override = self.site.charset_override.clone();
        let hints = self.site.extraction.clone();
        let max_links = self.max_links;
        let sheets = self.sheets.lookup(page_url);
        let fonts = self.fonts.lookup(page_url);
        tokio::task::spawn_blocking(move || {
            time(Stage::Extract, || {
                analyze(
                    &body,
                    content_type.as_deref(),
                    charset_override.as_deref(),
                    &hints,
                    max_links,
                    &|href| sheets.sheet(href),
                    &|font| fonts.font(font),
                )
            })
        })
        .await
        .map_err(|err| Error::internal(format!("extraction task failed: {err}")))?
    }

    fn allowed_links(&self, base: &Url, hrefs: &[String]) -> Vec<String> {
        hrefs
            .iter()
            .filter_map(|href| resolve_link(base, href))
            .filter(|link| self.rules.allows(link))
            .collect()
    }

    async fn store(
        &self,
        doc: Doc,
        pagination: Option<Pagination>,
        found_via: Option<String>,
    ) -> Result<PageOutcome> {
        let not_modified = doc.fetched.status == 304;
        let now = Utc::now();
        // A 304 keeps the stored body, so it keeps what described that body.
        let (status, content_type, headers) = match (&doc.previous, not_modified) {
            (Some(previous), true) => (
                previous.fetch.status,
                previous.fetch.content_type.clone(),
                previous.fetch.headers.clone(),
            ),
            _ => (
                doc.fetched.status,
                doc.fetched.content_type.clone(),
                doc.fetched.headers.clone(),
            ),
        };
        let (received_at, connection, revalidations) = received(&doc, now);
        let seen = doc.fetched.received_at.unwrap_or(now);
        let keep = |fresh: &Option<String>, stored: Option<&String>| {
            fresh.clone().or_else(|| stored.cloned())
        };
        let fetch = FetchMeta {
            status,
            final_url: doc.fetched.final_url.clone(),
            content_type,
            etag: keep(
                &doc.fetched.etag,
                doc.previous
                    .as_ref()
                    .and_then(|page| page.fetch.etag.as_ref()),
            ),
            last_modified: keep(
                &doc.fetched.last_modified,
                doc.previous
                    .as_ref()
                    .and_then(|page| page.fetch.last_modified.as_ref()),
            ),
            headers,
            duration_ms: doc.fetched.duration_ms,
            received_at,
            connection,
            revalidations,
            crawl_run_id: Some(self.run_id.clone()),
            pagination,
            reading: doc.reading.clone(),
            // The first page that led here stays: a later run finding it
            // through another link does not move its list page.
            found_via: doc
                .previous
                .as_ref()
                .and_then(|page| page.fetch.found_via.clone())
                .or(found_via),
        };
        let text = doc.extracted.text;
        let title = if doc.extracted.title.is_empty() {
            doc.extracted.heading
        } else {
            doc.extracted.title
        };
        let page = Page {
            id: PageId::for_url(&doc.url),
            url: doc.url.clone(),
            site_id: self.site.id.clone(),
            title,
            body_sha256: sha256_hex(&doc.fetched.body),
            body_truncated: false,
            charset: doc.charset,
            content_sha256: sha256_hex(text.as_bytes()),
            text,
            first_seen: doc.previous.as_ref().map_or(seen, |page| page.first_seen),
            last_seen: seen,
            fetch,
            previous_versions: Vec::new(),
            raw_body: doc.fetched.body,
        };
        let upsert = time_async(Stage::StoreWrite, self.pages.upsert_page(&page)).await?;
        let is_content = page.text.chars().filter(|c| !c.is_whitespace()).count()
            >= crate::extract::MIN_CONTENT_CHARS;
        let stored_by_interrupted_run = doc
            .previous
            .as_ref()
            .and_then(|previous| previous.fetch.crawl_run_id.as_ref())
            .is_some_and(|run_id| self.interrupted_runs.contains(run_id));
        let fingerprinted = is_content
            && (matches!(upsert, PageUpsert::New | PageUpsert::Changed)
                || stored_by_interrupted_run);
        if fingerprinted {
            let kind = TaskKind::FingerprintPage {
                page_id: page.id.clone(),
                content_sha256: page.content_sha256.clone(),
            };
            self.queue.enqueue(vec![Task::new(kind, now)]).await?;
        }
        if not_modified {
            return Ok(PageOutcome::NotModified);
        }
        Ok(PageOutcome::Stored {
            upsert,
            bytes: page.raw_body.len() as u64,
            fingerprinted,
        })
    }
}

/// When and how the response a stored page describes was received, and the
/// `304` answers since: a `304` keeps the stored response's time and adds
/// itself to the revalidations (evidence dates the response by when it came,
/// not by its latest confirmation); a new response starts afresh; a response
/// read back from the store keeps what the store has.
fn received(
    doc: &Doc,
    now: Timestamp,
) -> (Option<Timestamp>, Option<Connection>, Vec<Revalidation>) {
    let stored = doc.previous.as_ref().map(|page| &page.fetch);
    let stored_received = || {
        stored.map_or((None, None, Vec::new()), |fetch| {
            (
                fetch.received_at,
                fetch.connection.clone(),
                fetch.revalidations.clone(),
            )
        })
    };
    if doc.from_store {
        return stored_received();
    }
    let at = doc.fetched.received_at.unwrap_or(now);
    if doc.fetched.status != 304 {
        return (Some(at), doc.fetched.connection.clone(), Vec::new());
    }
    let (received_at, connection, mut revalidations) = stored_received();
    revalidations.push(Revalidation {
        at,
        headers: doc.fetched.headers.clone(),
        connection: doc.fetched.connection.clone(),
    });
    if revalidations.len() > MAX_REVALIDATIONS {
        revalidations.drain(..revalidations.len() - MAX_REVALIDATIONS);
    }
    (received_at, connection, revalidations)
}

/// Decodes and extracts a body; refuses bodies that are not text.
pub(crate) fn analyze(
    body: &[u8],
    content_type: Option<&str>,
    charset_override: Option<&str>,
    hints: &copyhound_core::model::ExtractionHints,
    max_links: usize,
    sheet: &dyn Fn(&str) -> Option<Arc<str>>,
    font: FontSource<'_>,
) -> Result<(String, Extracted)> {
    if looks_binary(body) {
        return Err(Error::invalid("binary body"));
    }
    let decoded = decode_body(body, content_type, charset_override);
    let plain = content_type.is_some_and(|value| {
        value
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("text/plain")
    });
    let extracted = if plain {
        let text = decoded
            .text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        Extracted {
            text,
            ..Extracted::default()
        }
    } else {
        extract_with_fonts(&decoded.text, hints, max_links, Some(sheet), Some(font))
    };
    Ok((decoded.charset, extracted))
}

/// Returns whether a body looks binary: NUL bytes or many control bytes early on.
fn looks_binary(body: &[u8]) -> bool {
    let head = &body[..body.len().min(1024)];
    let controls = head
        .iter()
        .filter(|byte| matches!(byte, 0..=8 | 14..=26 | 28..=31))
        .count();
    head.contains(&0) || controls * 10 > head.len().max(1)
}

fn base_url(page_url: &str, base_href: Option<&str>) -> Url {
    let page = Url::parse(page_url).expect("page urls are normalized absolute urls");
    base_href
        .and_then(|href| page.join(href).ok())
        .unwrap_or(page)
}
