//! Where each work lives: the list pages (a book's table of contents, a
//! site's latest updates) that led the crawler to the pages matched to it.
//! Derived from what is stored (matches, and the `found_via` each page keeps),
//! so it is never out of step with the matches; the crawler's watcher
//! revisits these pages when the work grows, and the console shows them.

use std::collections::BTreeMap;

use copyhound_core::ids::{PageId, SiteId, WorkId};
use copyhound_core::model::{MatchStatus, Page, Timestamp, Work};
use copyhound_core::ports::{MatchFilter, PageRequest, Ports};
use copyhound_core::{ErrorKind, Result};

/// The latest release of `work` at `now`: chapters added, or a slot of its
/// timetable, whichever came last. A watch chain of an older release ends.
pub fn latest_release(work: &Work, now: Timestamp) -> Option<Timestamp> {
    let scheduled = work
        .release_schedule
        .as_deref()
        .and_then(|cron| copyhound_core::schedule::parse_schedule(cron).ok())
        .and_then(|cron| copyhound_core::schedule::last_slot(&cron, now));
    work.released_at.max(scheduled)
}

/// The next slot of `work`'s timetable after `now`, if it has one.
pub fn next_scheduled_release(work: &Work, now: Timestamp) -> Option<Timestamp> {
    let cron = copyhound_core::schedule::parse_schedule(work.release_schedule.as_deref()?).ok()?;
    copyhound_core::schedule::next_slot(&cron, now)
}

/// Most matches read to find a work's watched pages.
const MAX_MATCHES_READ: usize = 2_000;

/// One list page that leads to a work's chapters on a site.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchedPage {
    /// The site.
    pub site_id: SiteId,
    /// The list page.
    pub url: String,
    /// Matched chapter pages it led to.
    pub chapters: usize,
    /// When it was last fetched (`None`: never stored).
    pub last_checked: Option<Timestamp>,
    /// How often its content changes, as measured (`None`: not yet known).
    pub change_interval: Option<chrono::Duration>,
}

/// Returns the list pages that lead to `work_id`'s matched chapters, per site,
/// the most productive first.
pub async fn watched_pages(ports: &Ports, work_id: &WorkId) -> Result<Vec<WatchedPage>> {
    let work = ports.works.get_work_any(work_id).await?;
    let filter = MatchFilter {
        work_id: Some(work_id.clone()),
        statuses: vec![MatchStatus::New, MatchStatus::Confirmed],
        ..MatchFilter::of_publisher(work.publisher_id.clone())
    };
    let mut request = PageRequest {
        after: None,
        limit: 200,
    };
    let mut leads: BTreeMap<(SiteId, String), usize> = BTreeMap::new();
    let mut read = 0;
    loop {
        let listed = ports.matches.list_matches(&filter, &request).await?;
        for found in &listed.items {
            read += 1;
            let Some(page) = stored(ports, &found.page_id).await? else {
                continue;
            };
            // A split chapter is announced by a link to its first part.
            let first = match &page.fetch.pagination {
                Some(chain) if chain.part > 1 => {
                    stored(ports, &PageId::for_url(&chain.first_url)).await?
                }
                _ => None,
            };
            let via = first.as_ref().unwrap_or(&page).fetch.found_via.clone();
            if let Some(via) = via {
                *leads.entry((page.site_id.clone(), via)).or_default() += 1;
            }
        }
        match listed.next {
            Some(next) if read < MAX_MATCHES_READ => request.after = Some(next),
            _ => break,
        }
    }
    let mut watched = Vec::with_capacity(leads.len());
    for ((site_id, url), chapters) in leads {
        let page = stored(ports, &PageId::for_url(&url)).await?;
        watched.push(WatchedPage {
            site_id,
            url,
            chapters,
            last_checked: page.as_ref().map(|page| page.last_seen),
            change_interval: page.as_ref().and_then(change_interval),
        });
    }
    watched.sort_by(|a, b| {
        (&a.site_id, std::cmp::Reverse(a.chapters), &a.url).cmp(&(
            &b.site_id,
            std::cmp::Reverse(b.chapters),
            &b.url,
        ))
    });
    Ok(watched)
}

async fn stored(ports: &Ports, page_id: &PageId) -> Result<Option<Page>> {
    match ports.pages.get_page(page_id).await {
        Ok(page) => Ok(Some(page)),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// The mean time between two versions of a page, over the time it has been
/// watched; `None` before it changed once.
pub fn change_interval(page: &Page) -> Option<chrono::Duration> {
    let changes = i32::try_from(page.previous_versions.len()).ok()?;
    if changes == 0 {
        return None;
    }
    Some((page.last_seen - page.first_seen) / changes)
}
