//! Where each work lives on each site, and revisiting it when it grows.
//!
//! A piracy site copies a chapter minutes after its release and announces it
//! on the same list pages (the book's table of contents, the site's "latest
//! updates") that announced the chapters before it. A crawl records on every
//! page the page whose link led there (`FetchMeta::found_via`), so the pages
//! matched to a work point at those list pages: they are the work's watch,
//! derived from what is stored, never kept apart from it.
//!
//! A release (chapters added to a work, [`copyhound_intake::works`]) starts a
//! burst: `revisit_watch` tasks, one per visit of [`BURST_OFFSETS`], each
//! queuing a targeted run per site that carries the work (its list pages as
//! seeds, depth 1, new links only). Copies appear from seconds to minutes
//! after a release, so visits are dense at first and thin out over
//! `crawler.burst_minutes`. After the burst, quiet watching revisits the same
//! pages by how often they change, at most once per
//! `crawler.min_revisit_seconds` on one site and one request a minute per
//! host. A newer release ends the older chain; a site with a run already
//! going is left to that run (counted as yielded).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::Utc;
use copyhound_core::config::CrawlerConfig;
use copyhound_core::ids::{CrawlRunId, SiteId, WorkId};
use copyhound_core::model::{RunScope, Task, TaskKind, Timestamp};
use copyhound_core::ports::Ports;
use copyhound_core::{ErrorKind, Result};
use copyhound_intake::crawls::{active_run, queue_scoped_run};
pub use copyhound_intake::watch::{
    WatchedPage, change_interval, latest_release, next_scheduled_release, watched_pages,
};
use tracing::{debug, info};

/// When the visits of a burst happen, seconds after the release. Dense in the
/// first minutes (most copies appear then), thinning out to the hour.
pub const BURST_OFFSETS: &[u64] = &[
    0, 20, 40, 60, 90, 120, 180, 240, 360, 480, 660, 900, 1200, 1800, 2700, 3600,
];

/// Most list pages of one site revisited per visit.
pub const MAX_PAGES_PER_SITE: usize = 8;

/// Requests per second of a quiet visit: one a minute.
pub const QUIET_RATE_PER_SECOND: f64 = 1.0 / 60.0;

/// Runs `revisit_watch` tasks (see the module docs).
#[derive(Clone, Debug)]
pub struct Watcher {
    ports: Ports,
    config: CrawlerConfig,
}

/// What one visit did, for logs and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Visit {
    /// Targeted runs queued, one per site.
    pub queued: Vec<CrawlRunId>,
    /// Sites left to a run already going.
    pub yielded: usize,
    /// Sites whose quiet turn was taken by another work's visit.
    pub waited: usize,
    /// The next visit, if the chain goes on.
    pub next: Option<Timestamp>,
}

impl Watcher {
    /// Returns the watcher over `ports` with the crawler's settings.
    pub fn new(ports: Ports, config: CrawlerConfig) -> Self {
        Self { ports, config }
    }

    /// Whether a visit is due; `Some(delay)` puts its task back until it is.
    pub fn admit(&self, due: Timestamp) -> Option<Duration> {
        let wait = due - Utc::now();
        (wait > chrono::Duration::zero()).then(|| wait.to_std().unwrap_or(Duration::ZERO))
    }

    /// Visit `step` of the chain that `release` of `work_id` started.
    pub async fn visit(&self, work_id: &WorkId, release: Timestamp, step: u32) -> Result<Visit> {
        let mut visit = Visit::default();
        let work = match self.ports.works.get_work_any(work_id).await {
            Ok(work) => work,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(visit),
            Err(error) => return Err(error),
        };
        // A newer release (chapters added, or a slot of the timetable) took
        // the watch over.
        if latest_release(&work, Utc::now())
            .is_some_and(|latest| (latest - release).num_milliseconds().abs() >= 1000)
        {
            debug!(work_id=%work_id, "an older release's watch ends");
            return Ok(visit);
        }
        let watched = watched_pages(&self.ports, work_id).await?;
        let burst = burst_offsets(&self.config);
        let step_index = usize::try_from(step).unwrap_or(usize::MAX);
        let quiet = step_index >= burst.len();
        let mut by_site: BTreeMap<&SiteId, Vec<&WatchedPage>> = BTreeMap::new();
        for page in &watched {
            by_site.entry(&page.site_id).or_default().push(page);
        }
        let max_run = Duration::from_secs(self.config.max_run_seconds);
        let now = Utc::now();
        for (site_id, pages) in by_site {
            let site = match self.ports.sites.get_site(site_id).await {
                Ok(site) => site,
                Err(error) if error.kind() == ErrorKind::NotFound => continue,
                Err(error) => return Err(error),
            };
            if !site.enabled || site.publisher_id != work.publisher_id {
                continue;
            }
            if active_run(self.ports.sites.as_ref(), site_id, max_run, now)
                .await?
                .is_some()
            {
                visit.yielded += 1;
                metrics::counter!("copyhound_watch_visits_total", "outcome" => "yielded")
                    .increment(1);
                continue;
            }
            let run_id = CrawlRunId::derive_from(&format!(
                "watch/{work_id}/{}/{step}/{site_id}",
                release.timestamp_millis()
            ));
            if quiet {
                // One quiet visit per site per `min_revisit_seconds`, whichever
                // work's turn it is: the slot is never released, it lapses.
                let lease = Duration::from_secs(self.config.min_revisit_seconds);
                let group = format!("watch-quiet/{site_id}");
                if !self
                    .ports
                    .queue
                    .acquire_slot(&group, run_id.as_str(), 1, lease)
                    .await?
                {
                    visit.waited += 1;
                    metrics::counter!("copyhound_watch_visits_total", "outcome" => "waited")
                        .increment(1);
                    continue;
                }
            }
            let scope = RunScope {
                reason: format!(
                    "{} of {work_id}, visit {}",
                    if quiet {
                        "quiet watch"
                    } else {
                        "release burst"
                    },
                    step + 1
                ),
                seeds: pages
                    .iter()
                    .take(MAX_PAGES_PER_SITE)
                    .map(|page| page.url.clone())
                    .collect(),
                max_depth: 1,
                new_links_only: true,
                rate_limit_per_second: quiet.then_some(QUIET_RATE_PER_SECOND),
            };
            queue_scoped_run(
                self.ports.sites.as_ref(),
                self.ports.queue.as_ref(),
                site_id,
                &run_id,
                now,
                scope,
            )
            .await?;
            metrics::counter!("copyhound_watch_visits_total", "outcome" => if quiet { "quiet" } else { "burst" })
                .increment(1);
            visit.queued.push(run_id);
        }
        if watched.is_empty() {
            info!(work_id=%work_id, "no site is known to carry the work yet; nothing to watch");
            // A timetable keeps its next release: sites may be known by then.
            if let Some(slot) = next_scheduled_release(&work, now) {
                copyhound_intake::works::start_burst_at(&self.ports, work_id, slot).await?;
                visit.next = Some(slot);
            }
            return Ok(visit);
        }
        let next_at = match burst.get(step_index + 1) {
            Some(offset) => {
                release + chrono::Duration::seconds(i64::try_from(*offset).unwrap_or(0))
            }
            None => now + quiet_interval(&self.config, &watched),
        };
        // The timetable's next release comes first: this chain hands over to its burst.
        let (next_release, next_step, next_at) = match next_scheduled_release(&work, now) {
            Some(slot) if slot < next_at => (slot, 0, slot),
            _ => (release, step + 1, next_at),
        };
        self.ports
            .queue
            .enqueue(vec![Task::new(
                TaskKind::RevisitWatch {
                    work_id: work_id.clone(),
                    release: next_release,
                    step: next_step,
                    due: next_at,
                },
                now,
            )])
            .await?;
        visit.next = Some(next_at);
        info!(work_id=%work_id, step, queued=visit.queued.len(), yielded=visit.yielded, waited=visit.waited, next=%next_at, "watch visit");
        Ok(visit)
    }
}

/// The offsets of a burst within `crawler.burst_minutes`, seconds after the release.
pub fn burst_offsets(config: &CrawlerConfig) -> Vec<u64> {
    let end = config.burst_minutes.saturating_mul(60);
    BURST_OFFSETS
        .iter()
        .copied()
        .filter(|at| *at <= end)
        .collect()
}

/// The pause between two quiet visits: how often the watched pages change
/// (the fastest-changing one), within `min_revisit_seconds` and
/// `max_revisit_hours`; unknown, the longest.
pub fn quiet_interval(config: &CrawlerConfig, watched: &[WatchedPage]) -> chrono::Duration {
    let floor =
        chrono::Duration::seconds(i64::try_from(config.min_revisit_seconds).unwrap_or(86_400));
    let ceiling = chrono::Duration::hours(
        i64::try_from(config.max_revisit_hours.clamp(1, 24 * 366)).unwrap_or(24),
    )
    .max(floor);
    watched
        .iter()
        .filter_map(|page| page.change_interval)
        .min()
        .unwrap_or(ceiling)
        .clamp(floor, ceiling)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(burst_minutes: u64) -> CrawlerConfig {
        CrawlerConfig {
            burst_minutes,
            min_revisit_seconds: 600,
            max_revisit_hours: 24,
            ..CrawlerConfig::default()
        }
    }

    fn watched(change_minutes: Option<i64>) -> WatchedPage {
        WatchedPage {
            site_id: "s1".parse().unwrap(),
            url: "http://127.0.0.1/list".into(),
            chapters: 3,
            last_checked: None,
            change_interval: change_minutes.map(chrono::Duration::minutes),
        }
    }

    #[test]
    fn a_burst_is_dense_first_and_ends_with_its_minutes() {
        let hour = burst_offsets(&config(60));
        assert_eq!(hour.first(), Some(&0));
        assert_eq!(hour.last(), Some(&3600));
        assert!(hour.windows(2).all(|pair| pair[0] < pair[1]));
        // Every 20 s in the first minute, then wider.
        assert!(hour.windows(2).take(3).all(|pair| pair[1] - pair[0] == 20));
        assert!(
            hour.windows(2)
                .last()
                .is_some_and(|pair| pair[1] - pair[0] >= 600)
        );
        assert_eq!(burst_offsets(&config(5)).last(), Some(&240));
    }

    #[test]
    fn quiet_visits_follow_the_fastest_changing_page_within_the_bounds() {
        let config = config(60);
        assert_eq!(
            quiet_interval(&config, &[watched(Some(90)), watched(Some(30))]),
            chrono::Duration::minutes(30)
        );
        // Never faster than `min_revisit_seconds`, never slower than `max_revisit_hours`.
        assert_eq!(
            quiet_interval(&config, &[watched(Some(1))]),
            chrono::Duration::minutes(10)
        );
        assert_eq!(
            quiet_interval(&config, &[watched(None)]),
            chrono::Duration::hours(24)
        );
        assert_eq!(
            quiet_interval(&config, &[watched(Some(60 * 24 * 30))]),
            chrono::Duration::hours(24)
        );
    }
}
