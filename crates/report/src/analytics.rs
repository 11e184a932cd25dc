//! The figures of a report, as pure functions of a [`ReportInput`]: no clock, no
//! IO, deterministic order everywhere (ties broken by id), so equal inputs give
//! byte-equal reports and snapshot tests are stable.

use std::collections::{BTreeMap, BTreeSet};

use copyhound_core::ids::{ChapterId, PageId, SiteId, WorkId};
use copyhound_core::model::{CopiedSpan, Match, MatchStatus, ReportScope, Site, Timestamp, Work};

use crate::data::{
    MatchEvidence, NewSinceLast, REPORT_DATA_VERSION, ReportData, SiteSummary, StatusCount, Summary,
};
use crate::input::{ChapterInfo, ReportInput};

/// Returns whether a match counts in the infringement figures: every status but
/// dismissed (not an infringement) and licensed (the site may carry the work).
pub fn is_infringing(status: MatchStatus) -> bool {
    !matches!(status, MatchStatus::Dismissed | MatchStatus::Licensed)
}

/// Returns the copied characters of a match: the length of the union of its
/// spans' chapter ranges (overlapping spans are counted once).
pub fn copied_chars(spans: &[CopiedSpan]) -> u64 {
    copyhound_fingerprint::covered_len(
        spans
            .iter()
            .map(|span| (span.chapter_start, span.chapter_end)),
    )
}

/// Returns the host of a URL (lowercase, without port or credentials), or the URL
/// itself when it has none.
pub(crate) fn host_of(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or(after_scheme);
    let without_user = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if without_user.starts_with('[') {
        without_user
            .split_inclusive(']')
            .next()
            .unwrap_or(without_user)
    } else {
        without_user.split(':').next().unwrap_or(without_user)
    };
    if host.is_empty() {
        url.to_string()
    } else {
        host.to_ascii_lowercase()
    }
}

/// Lookups shared by the per-section builders.
pub(crate) struct Context<'a> {
    pub(crate) works: BTreeMap<&'a WorkId, &'a Work>,
    pub(crate) chapters: BTreeMap<(&'a WorkId, &'a ChapterId), &'a ChapterInfo>,
    pub(crate) chapters_per_work: BTreeMap<&'a WorkId, u32>,
    pub(crate) sites: BTreeMap<&'a SiteId, &'a Site>,
    pub(crate) previous_report_at: Option<Timestamp>,
}

impl<'a> Context<'a> {
    fn new(input: &'a ReportInput) -> Self {
        let mut chapters_per_work: BTreeMap<&WorkId, u32> = BTreeMap::new();
        for chapter in &input.chapters {
            *chapters_per_work.entry(&chapter.work_id).or_default() += 1;
        }
        Self {
            works: input.works.iter().map(|work| (&work.id, work)).collect(),
            chapters: input
                .chapters
                .iter()
                .map(|chapter| ((&chapter.work_id, &chapter.chapter_id), chapter))
                .collect(),
            chapters_per_work,
            sites: input.sites.iter().map(|site| (&site.id, site)).collect(),
            previous_report_at: input.previous_report_at,
        }
    }

    pub(crate) fn is_new(&self, found: &Match) -> bool {
        is_infringing(found.status)
            && self
                .previous_report_at
                .is_none_or(|since| found.first_seen > since)
    }

    fn site_name(&self, found: &Match) -> String {
        self.sites
            .get(&found.site_id)
            .map_or_else(|| host_of(&found.page_url), |site| site.name.clone())
    }

    fn site_host(&self, found: &Match) -> String {
        self.sites
            .get(&found.site_id)
            .and_then(|site| site.seeds.first())
            .map_or_else(|| host_of(&found.page_url), |seed| host_of(seed))
    }

    pub(crate) fn work_title(&self, work_id: &WorkId) -> String {
        self.works
            .get(work_id)
            .map_or_else(|| work_id.to_string(), |work| work.title.clone())
    }

    fn chapter(&self, found: &Match) -> Option<&'a ChapterInfo> {
        self.chapters
            .get(&(&found.work_id, &found.chapter_id))
            .copied()
    }
}

/// Returns whether a match falls in the scope (the input may be a superset).
fn in_scope(scope: &ReportScope, found: &Match) -> bool {
    found.publisher_id == scope.publisher_id
        && scope
            .work_id
            .as_ref()
            .is_none_or(|work_id| *work_id == found.work_id)
        && scope
            .site_id
            .as_ref()
            .is_none_or(|site_id| *site_id == found.site_id)
        && scope.since.is_none_or(|since| found.last_seen >= since)
        && scope.until.is_none_or(|until| found.first_seen < until)
        && scope
            .review
            .is_none_or(|review| review.includes(found.status))
}

/// Returns the report computed from `input`.
pub fn build_report_data(input: &ReportInput) -> ReportData {
    let context = Context::new(input);
    let matches: Vec<&Match> = input
        .matches
        .iter()
        .filter(|found| in_scope(&input.scope, found))
        .collect();
    let infringing: Vec<&Match> = matches
        .iter()
        .copied()
        .filter(|found| is_infringing(found.status))
        .collect();

    let sites = rank_sites(&context, &infringing);
    let site_rank: BTreeMap<&SiteId, u32> = sites
        .iter()
        .map(|site| (&site.site_id, site.rank))
        .collect();
    let evidence = build_evidence(&context, &matches, &site_rank);
    let new_since_last = new_since_last(&context, &infringing, &evidence);

    ReportData {
        version: REPORT_DATA_VERSION,
        publisher: input.publisher.clone(),
        profile: input.profile.clone(),
        generated_at: input.generated_at,
        scope: input.scope.clone(),
        previous_report_at: input.previous_report_at,
        summary: summarize(&context, &matches, &infringing),
        works: crate::coverage::work_coverage(&context, &infringing, &site_rank),
        timeline: crate::coverage::timeline(&context, &infringing),
        statuses: status_counts(&matches),
        sites,
        new_since_last,
        evidence,
    }
}

/// Returns a match's pages: its own and the duplicates of the same copy.
fn pages_of(found: &Match) -> impl Iterator<Item = &PageId> {
    std::iter::once(&found.page_id).chain(found.duplicate_page_ids.iter())
}

fn summarize(context: &Context<'_>, matches: &[&Match], infringing: &[&Match]) -> Summary {
    let count = |len: usize| u32::try_from(len).unwrap_or(u32::MAX);
    let sites: BTreeSet<&SiteId> = infringing.iter().map(|found| &found.site_id).collect();
    let pages: BTreeSet<&PageId> = infringing
        .iter()
        .flat_map(|found| pages_of(found))
        .collect();
    let works: BTreeSet<&WorkId> = infringing.iter().map(|found| &found.work_id).collect();
    let chapters: BTreeSet<(&WorkId, &ChapterId)> = infringing
        .iter()
        .map(|found| (&found.work_id, &found.chapter_id))
        .collect();
    Summary {
        total_matches: count(matches.len()),
        infringing_matches: count(infringing.len()),
        sites: count(sites.len()),
        pages: count(pages.len()),
        works: count(works.len()),
        chapters: count(chapters.len()),
        copied_chars: infringing
            .iter()
            .map(|found| copied_chars(&found.spans))
            .sum(),
        new_matches: count(
            infringing
                .iter()
                .filter(|found| context.is_new(found))
                .count(),
        ),
    }
}

/// Per-site accumulator.
#[derive(Default)]
struct SiteTally<'a> {
    copied_chars: u64,
    pages: BTreeSet<&'a PageId>,
    chapters: BTreeSet<(&'a WorkId, &'a ChapterId)>,
    works: BTreeSet<&'a WorkId>,
    matches: u32,
    new_matches: u32,
    confirmed_matches: u32,
    first_seen: Option<Timestamp>,
    last_seen: Option<Timestamp>,
    sample: Option<&'a Match>,
}

fn rank_sites(context: &Context<'_>, infringing: &[&Match]) -> Vec<SiteSummary> {
    let mut tallies: BTreeMap<&SiteId, SiteTally<'_>> = BTreeMap::new();
    for found in infringing {
        let tally = tallies.entry(&found.site_id).or_default();
        tally.copied_chars += copied_chars(&found.spans);
        tally.pages.extend(pages_of(found));
        tally.chapters.insert((&found.work_id, &found.chapter_id));
        tally.works.insert(&found.work_id);
        tally.matches += 1;
        tally.new_matches += u32::from(context.is_new(found));
        tally.confirmed_matches += u32::from(found.status == MatchStatus::Confirmed);
        tally.first_seen = Some(
            tally
                .first_seen
                .map_or(found.first_seen, |seen| seen.min(found.first_seen)),
        );
        tally.last_seen = Some(
            tally
                .last_seen
                .map_or(found.last_seen, |seen| seen.max(found.last_seen)),
        );
        // The site's representative match (names a deleted site by its host): the
        // smallest URL, so the report does not depend on the store's order.
        if tally
            .sample
            .is_none_or(|sample: &Match| found.page_url < sample.page_url)
        {
            tally.sample = Some(found);
        }
    }
    let mut ranked: Vec<SiteSummary> = tallies
        .into_iter()
        .filter_map(|(site_id, tally)| {
            let sample = tally.sample?;
            Some(SiteSummary {
                rank: 0,
                site_id: site_id.clone(),
                name: context.site_name(sample),
                host: context.site_host(sample),
                copied_chars: tally.copied_chars,
                pages: u32::try_from(tally.pages.len()).unwrap_or(u32::MAX),
                chapters: u32::try_from(tally.chapters.len()).unwrap_or(u32::MAX),
                works: u32::try_from(tally.works.len()).unwrap_or(u32::MAX),
                matches: tally.matches,
                new_matches: tally.new_matches,
                confirmed_matches: tally.confirmed_matches,
                first_seen: tally.first_seen?,
                last_seen: tally.last_seen?,
                recipients: None,
            })
        })
        .collect();
    ranked.sort_by(|left, right| {
        right
            .copied_chars
            .cmp(&left.copied_chars)
            .then(right.matches.cmp(&left.matches))
            .then(left.site_id.cmp(&right.site_id))
    });
    for (position, site) in ranked.iter_mut().enumerate() {
        site.rank = u32::try_from(position + 1).unwrap_or(u32::MAX);
    }
    ranked
}

fn status_counts(matches: &[&Match]) -> Vec<StatusCount> {
    MatchStatus::ALL
        .iter()
        .map(|status| StatusCount {
            status: *status,
            count: u32::try_from(
                matches
                    .iter()
                    .filter(|found| found.status == *status)
                    .count(),
            )
            .unwrap_or(u32::MAX),
        })
        .collect()
}

fn new_since_last(
    context: &Context<'_>,
    infringing: &[&Match],
    evidence: &[MatchEvidence],
) -> NewSinceLast {
    let is_after = |seen: Timestamp| context.previous_report_at.is_none_or(|since| seen > since);
    let mut site_first: BTreeMap<&SiteId, Timestamp> = BTreeMap::new();
    let mut work_first: BTreeMap<&WorkId, Timestamp> = BTreeMap::new();
    let mut chapter_first: BTreeMap<(&WorkId, &ChapterId), Timestamp> = BTreeMap::new();
    for found in infringing {
        let seen = found.first_seen;
        site_first
            .entry(&found.site_id)
            .and_modify(|first| *first = (*first).min(seen))
            .or_insert(seen);
        work_first
            .entry(&found.work_id)
            .and_modify(|first| *first = (*first).min(seen))
            .or_insert(seen);
        chapter_first
            .entry((&found.work_id, &found.chapter_id))
            .and_modify(|first| *first = (*first).min(seen))
            .or_insert(seen);
    }
    let match_ids: Vec<_> = evidence
        .iter()
        .filter(|one| one.new_since_last)
        .map(|one| one.match_id.clone())
        .collect();
    NewSinceLast {
        since: context.previous_report_at,
        matches: u32::try_from(match_ids.len()).unwrap_or(u32::MAX),
        match_ids,
        new_sites: site_first
            .into_iter()
            .filter(|(_, first)| is_after(*first))
            .map(|(id, _)| id.clone())
            .collect(),
        new_works: work_first
            .into_iter()
            .filter(|(_, first)| is_after(*first))
            .map(|(id, _)| id.clone())
            .collect(),
        new_chapters: u32::try_from(
            chapter_first
                .values()
                .filter(|first| is_after(**first))
                .count(),
        )
        .unwrap_or(u32::MAX),
    }
}

fn build_evidence(
    context: &Context<'_>,
    matches: &[&Match],
    site_rank: &BTreeMap<&SiteId, u32>,
) -> Vec<MatchEvidence> {
    let mut evidence: Vec<MatchEvidence> = matches
        .iter()
        .map(|found| {
            let chapter = context.chapter(found);
            let mut spans = found.spans.clone();
            spans.sort_by_key(|span| (span.chapter_start, span.page_start));
            MatchEvidence {
                match_id: found.id.clone(),
                status: found.status,
                infringing: is_infringing(found.status),
                new_since_last: context.is_new(found),
                site_id: found.site_id.clone(),
                site_name: context.site_name(found),
                url: found.page_url.clone(),
                host: host_of(&found.page_url),
                duplicate_pages: u32::try_from(found.duplicate_page_ids.len()).unwrap_or(u32::MAX),
                work_id: found.work_id.clone(),
                work_title: context.work_title(&found.work_id),
                chapter_id: found.chapter_id.clone(),
                chapter_index: chapter.map(|chapter| chapter.index),
                chapter_title: chapter.map_or_else(
                    || found.chapter_id.to_string(),
                    |chapter| chapter.title.clone(),
                ),
                score: found.score,
                chapter_coverage: found.chapter_coverage,
                page_coverage: found.page_coverage,
                copied_chars: copied_chars(&found.spans),
                first_seen: found.first_seen,
                last_seen: found.last_seen,
                captured_at: found.last_seen,
                page_body_sha256: found.page_body_sha256.clone(),
                page_reading: found.page_reading.clone(),
                spans,
                excerpts: found.evidence.clone(),
                last_review: found.reviews.last().cloned(),
            }
        })
        .collect();
    evidence.sort_by(|left, right| {
        let rank = |one: &MatchEvidence| site_rank.get(&one.site_id).copied().unwrap_or(u32::MAX);
        rank(left)
            .cmp(&rank(right))
            .then(left.site_id.cmp(&right.site_id))
            .then(left.work_title.cmp(&right.work_title))
            .then(left.work_id.cmp(&right.work_id))
            .then(
                left.chapter_index
                    .unwrap_or(u32::MAX)
                    .cmp(&right.chapter_index.unwrap_or(u32::MAX)),
            )
            .then(left.url.cmp(&right.url))
            .then(left.match_id.cmp(&right.match_id))
    });
    evidence
}

#[cfg(test)]
#[path = "analytics_test.rs"]
mod tests;
