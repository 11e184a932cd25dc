//! Where the copies are, per work and over time: the chapters × sites coverage
//! matrices behind the heat maps, and detections per day behind the timeline.

use std::collections::{BTreeMap, BTreeSet};

use copyhound_core::ids::{ChapterId, SiteId, WorkId};
use copyhound_core::model::Match;

use crate::analytics::{Context, copied_chars};
use crate::data::{ChapterCoverage, DayCount, WorkCoverage};

/// Returns the copied works, most copied first, each with its chapters × sites matrix.
pub(crate) fn work_coverage(
    context: &Context<'_>,
    infringing: &[&Match],
    site_rank: &BTreeMap<&SiteId, u32>,
) -> Vec<WorkCoverage> {
    let mut by_work: BTreeMap<&WorkId, Vec<&Match>> = BTreeMap::new();
    for found in infringing {
        by_work.entry(&found.work_id).or_default().push(found);
    }
    let mut works: Vec<WorkCoverage> = by_work
        .into_iter()
        .map(|(work_id, found)| one_work_coverage(context, work_id, &found, site_rank))
        .collect();
    works.sort_by(|left, right| {
        right
            .copied_chars
            .cmp(&left.copied_chars)
            .then(left.work_id.cmp(&right.work_id))
    });
    works
}

fn one_work_coverage(
    context: &Context<'_>,
    work_id: &WorkId,
    found: &[&Match],
    site_rank: &BTreeMap<&SiteId, u32>,
) -> WorkCoverage {
    let mut site_chars: BTreeMap<&SiteId, u64> = BTreeMap::new();
    let mut cells: BTreeMap<(&ChapterId, &SiteId), f32> = BTreeMap::new();
    let mut chapter_ids: BTreeSet<&ChapterId> = BTreeSet::new();
    for one in found {
        *site_chars.entry(&one.site_id).or_default() += copied_chars(&one.spans);
        let cell = cells.entry((&one.chapter_id, &one.site_id)).or_insert(0.0);
        *cell = cell.max(one.chapter_coverage);
        chapter_ids.insert(&one.chapter_id);
    }
    let mut columns: Vec<(&SiteId, u64)> = site_chars.into_iter().collect();
    columns.sort_by(|left, right| {
        let rank = |site_id: &SiteId| site_rank.get(site_id).copied().unwrap_or(u32::MAX);
        right.1.cmp(&left.1).then(rank(left.0).cmp(&rank(right.0)))
    });
    let mut rows: Vec<ChapterCoverage> = chapter_ids
        .into_iter()
        .map(|chapter_id| {
            let info = context.chapters.get(&(work_id, chapter_id));
            let row: Vec<Option<f32>> = columns
                .iter()
                .map(|(site_id, _)| cells.get(&(chapter_id, *site_id)).copied())
                .collect();
            ChapterCoverage {
                chapter_id: chapter_id.clone(),
                index: info.map(|info| info.index),
                title: info.map_or_else(|| chapter_id.to_string(), |info| info.title.clone()),
                max_coverage: row.iter().flatten().copied().fold(0.0, f32::max),
                sites_copying: u32::try_from(row.iter().flatten().count()).unwrap_or(u32::MAX),
                cells: row,
            }
        })
        .collect();
    rows.sort_by(|left, right| {
        left.index
            .unwrap_or(u32::MAX)
            .cmp(&right.index.unwrap_or(u32::MAX))
            .then(left.chapter_id.cmp(&right.chapter_id))
    });
    let work = context.works.get(work_id);
    WorkCoverage {
        work_id: work_id.clone(),
        title: context.work_title(work_id),
        author: work.map(|work| work.author.clone()).unwrap_or_default(),
        chapters_registered: context.chapters_per_work.get(work_id).copied().unwrap_or(0),
        chapters_copied: u32::try_from(rows.len()).unwrap_or(u32::MAX),
        copied_chars: columns.iter().map(|(_, chars)| chars).sum(),
        sites: columns
            .into_iter()
            .map(|(site_id, _)| site_id.clone())
            .collect(),
        chapters: rows,
    }
}

/// Returns infringing detections per day of first sight, days without any left out.
pub(crate) fn timeline(context: &Context<'_>, infringing: &[&Match]) -> Vec<DayCount> {
    let mut days: BTreeMap<chrono::NaiveDate, DayCount> = BTreeMap::new();
    for found in infringing {
        let day = found.first_seen.date_naive();
        let entry = days.entry(day).or_insert(DayCount {
            day,
            detections: 0,
            new: 0,
        });
        entry.detections += 1;
        entry.new += u32::from(context.is_new(found));
    }
    days.into_values().collect()
}
