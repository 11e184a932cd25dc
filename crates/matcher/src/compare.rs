//! Comparing a page: candidates from the index ([`crate::candidates`]), precise
//! verification, a decision. Only the best `max_candidates` chapters are
//! verified; the verifier, not the vote, decides.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Utc;
use copyhound_core::config::MatcherConfig;
use copyhound_core::ids::{ChapterId, MatchId, PageId, PublisherId, WorkId};
use copyhound_core::model::{
    Chapter, CopiedSpan, FingerprintOwner, FingerprintRecord, Match, MatchStatus, Page, Work,
};
use copyhound_core::stages::{Stage, time, time_async};
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_fingerprint::{FINGERPRINT_VERSION, NormalizedText, PreparedChapter, Verification};
use tracing::debug;

use crate::candidates::candidates;
use crate::chapters::ChapterCache;
use crate::context::{MatcherPorts, WorkContext, page_at, work_context};
use crate::evidence;

/// The verdict on one (page, chapter) pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// Whether the evidence clears the configured bar.
    pub infringing: bool,
    /// Rank in [0, 1] (see [`rank_score`]): at least 0.5 exactly when
    /// `infringing`, so any threshold up to 0.5 keeps every match.
    pub score: f32,
    /// Characters of the chapter found on the page (original offsets).
    pub copied_chars: u32,
}

/// Decides whether a verification is an infringement.
///
/// A page infringes when it carries at least `min_copied_chars` characters of the
/// chapter (the usual bar: a review quoting a sentence stays below it), or, for
/// chapters too short to reach that, at least `min_chapter_coverage` of the chapter.
/// (A page of a chapter split over several pages is also judged with its
/// chain: see `min_part_copied_chars`.)
pub fn decide(verification: &Verification, chapter_chars: u32, config: &MatcherConfig) -> Decision {
    // Each chapter character once: a page may repeat a passage, or a run be found twice.
    let copied = copyhound_fingerprint::covered_len(
        verification
            .spans
            .iter()
            .map(|span| (span.chapter_start, span.chapter_end)),
    );
    let copied_chars = u32::try_from(copied)
        .unwrap_or(u32::MAX)
        .min(chapter_chars.max(1));
    let coverage = verification.chapter_coverage.clamp(0.0, 1.0);
    let by_volume = copied_chars >= config.min_copied_chars;
    let short_chapter = chapter_chars < config.min_copied_chars.saturating_mul(2);
    let by_coverage = short_chapter && coverage >= config.min_chapter_coverage;
    let infringing = by_volume || by_coverage;
    Decision {
        infringing,
        score: rank_score(verification, copied_chars, config, infringing),
        copied_chars,
    }
}

/// Copied volume at which the volume term is full: this many times the bar
/// (300 chars by default: 9,600 chars, a long chapter).
const FULL_VOLUME: f32 = 32.0;

/// Characters drawn as images at which the evasion term is full.
const FULL_EVASION_WILDCARDS: f32 = 20.0;

/// Orders matches by what a publisher acts on first. Every stored match
/// already cleared the bar, so the score ranks, it does not decide:
/// `0.45 coverage + 0.25 volume + 0.2 page share + 0.1 evasion`, mapped to
/// [0.5, 1] for an infringement and [0, 0.5) otherwise. Volume is
/// logarithmic in the copied characters from the bar to [`FULL_VOLUME`]
/// times it (the old linear term was full at four times the bar, so nearly
/// every chapter copy scored 1.0); page share tells a pirate page that is
/// the chapter from a page that carries it among other text; evasion counts
/// text drawn as images inside the copy, an anti-scraping trick.
pub fn rank_score(
    verification: &Verification,
    copied_chars: u32,
    config: &MatcherConfig,
    infringing: bool,
) -> f32 {
    let coverage = verification.chapter_coverage.clamp(0.0, 1.0);
    let bar = config.min_copied_chars.max(1) as f32;
    let volume = ((copied_chars.max(1) as f32 / bar).ln() / FULL_VOLUME.ln()).clamp(0.0, 1.0);
    let page_share = verification.page_coverage.clamp(0.0, 1.0);
    let evasion = (verification.wildcards as f32 / FULL_EVASION_WILDCARDS).clamp(0.0, 1.0);
    let rank = 0.45 * coverage + 0.25 * volume + 0.2 * page_share + 0.1 * evasion;
    let score = if infringing {
        0.5 + 0.5 * rank
    } else {
        0.5 * rank.min(0.999)
    };
    score.clamp(0.0, 1.0)
}

/// Visits a month at which a site's reach is 0, and the factor to full reach:
/// 1,000 visits a month is a private page, 10M a large site.
const REACH_FLOOR_VISITS: f64 = 1_000.0;
const FULL_REACH_FACTOR: f64 = 10_000.0;

/// Weight of the site's reach in the score of a site whose audience is known.
const REACH_WEIGHT: f32 = 0.15;

/// A site's reach in [0, 1] from its audience (visits a month),
/// logarithmic: 1,000 and less is 0, 10M and more is 1. `None` when the
/// publisher has not estimated it.
pub fn site_reach(audience: Option<u64>) -> Option<f32> {
    audience.map(|visits| {
        let ratio = (visits as f64).max(1.0) / REACH_FLOOR_VISITS;
        (ratio.log10() / FULL_REACH_FACTOR.log10()).clamp(0.0, 1.0) as f32
    })
}

/// Weighs a site's reach into an infringement's score: its rank (the part
/// above 0.5) becomes `0.85 rank + 0.15 reach`, so between two equal copies
/// the one on the larger site ranks first. A site without an estimate, and a
/// score below the bar, keep their score.
pub fn with_site_reach(score: f32, reach: Option<f32>) -> f32 {
    match reach {
        Some(reach) if score >= 0.5 => {
            let rank = (score - 0.5) / 0.5;
            let weighed = (1.0 - REACH_WEIGHT) * rank + REACH_WEIGHT * reach.clamp(0.0, 1.0);
            (0.5 + 0.5 * weighed).clamp(0.5, 1.0)
        }
        _ => score,
    }
}

/// Compares a fingerprinted page against the registered chapters.
pub(crate) async fn compare_page(
    ports: &MatcherPorts,
    chapters: &Arc<ChapterCache>,
    page_id: &PageId,
    content_sha256: &str,
) -> Result<()> {
    let Some(page) = page_at(ports, page_id, content_sha256).await? else {
        return Ok(());
    };
    let owner = FingerprintOwner::Page {
        page_id: page_id.clone(),
    };
    let record = match ports
        .fingerprints
        .get_fingerprint(&owner, FINGERPRINT_VERSION)
        .await
    {
        Ok(record) => record,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            if fingerprinted_before(ports, &owner).await? {
                // Fingerprinted under an older version only (a version bump):
                // fingerprint it anew, which compares it too.
                return crate::fingerprinting::fingerprint_page(
                    ports,
                    chapters,
                    page_id,
                    content_sha256,
                )
                .await;
            }
            return Err(Error::unavailable(format!(
                "page {page_id} is not fingerprinted yet"
            )));
        }
        Err(error) => return Err(error),
    };
    if record.content_sha256 != content_sha256 {
        return Err(Error::unavailable(format!(
            "page {page_id} fingerprint is stale; waiting for re-fingerprinting"
        )));
    }
    compare_fingerprinted(ports, chapters, &page, &record, None, None).await
}

/// Whether `owner` has a record of an older [`FINGERPRINT_VERSION`]: its
/// entries are in the index (a back-fill found it there), but no record of
/// this version will come unless it is fingerprinted again.
async fn fingerprinted_before(ports: &MatcherPorts, owner: &FingerprintOwner) -> Result<bool> {
    for version in (1..FINGERPRINT_VERSION).rev() {
        match ports.fingerprints.get_fingerprint(owner, version).await {
            Ok(_) => return Ok(true),
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(false)
}

/// Compares a page whose fingerprint `record` is in the index; `normalized`
/// is the page's text normalized, when the caller has it. `unstored` is the
/// record when it is still to be stored: it is written with the matches.
pub(crate) async fn compare_fingerprinted(
    ports: &MatcherPorts,
    chapters: &Arc<ChapterCache>,
    page: &Page,
    record: &FingerprintRecord,
    normalized: Option<NormalizedText>,
    unstored: Option<&FingerprintRecord>,
) -> Result<()> {
    let candidates = time_async(Stage::Candidates, candidates(ports, record)).await?;
    if candidates.chapters.is_empty() {
        return store_results(ports, unstored, &[]).await;
    }
    // The text is copied only when it is still to be normalized.
    let source = normalized.ok_or_else(|| page.text.clone());
    let fingerprinter = ports.fingerprinter.clone();
    let page_normalized = tokio::task::spawn_blocking(move || {
        time(Stage::Verify, || {
            let normalized = source.unwrap_or_else(|text| fingerprinter.normalize(&text));
            let prepared = fingerprinter.prepare_page(&normalized);
            Arc::new((normalized, prepared))
        })
    })
    .await
    .map_err(join_error)?;
    // Every candidate chapter is loaded first and verified in one blocking
    // call: one thread hop per page, not one per candidate.
    let mut loaded = Vec::with_capacity(candidates.chapters.len());
    for (work_id, chapter_id) in candidates.chapters {
        match time_async(
            Stage::ChapterLoad,
            ports.works.get_chapter(&work_id, &chapter_id),
        )
        .await
        {
            Ok(chapter) => loaded.push((work_id, chapter_id, Arc::new(chapter))),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                debug!(work_id = %work_id, chapter_id = %chapter_id, "candidate vanished (work deleted)");
            }
            Err(error) => return Err(error),
        }
    }
    let fingerprinter = ports.fingerprinter.clone();
    let cache = Arc::clone(chapters);
    let page_for_verify = Arc::clone(&page_normalized);
    let to_verify: Vec<Arc<Chapter>> = loaded
        .iter()
        .map(|(_, _, chapter)| Arc::clone(chapter))
        .collect();
    let verified = tokio::task::spawn_blocking(move || {
        let (normalized, prepared_page) = &*page_for_verify;
        to_verify
            .iter()
            .map(|chapter| {
                let prepared = cache.prepared(&fingerprinter, chapter);
                let verification = time(Stage::Verify, || {
                    fingerprinter.verify_page(&prepared, normalized, prepared_page)
                });
                (prepared, verification)
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(join_error)?;
    let mut works: HashMap<WorkId, WorkContext> = HashMap::new();
    let site = match time_async(Stage::StoreRead, ports.sites.get_site(&page.site_id)).await {
        Ok(site) => Some(site),
        Err(error) if error.kind() == ErrorKind::NotFound => None,
        Err(error) => return Err(error),
    };
    let subject = Subject {
        page,
        near_duplicates: &candidates.near_duplicates,
        reach: site.and_then(|site| Some((site.publisher_id, site_reach(site.audience)?))),
    };
    let mut found = Vec::new();
    for ((work_id, chapter_id, chapter), (prepared, verification)) in
        loaded.into_iter().zip(verified)
    {
        let candidate = Candidate {
            work_id: &work_id,
            chapter_id: &chapter_id,
            chapter: &chapter,
            prepared,
            verification,
        };
        match decide_candidate(ports, &subject, candidate, &mut works).await {
            Ok(decided) => found.extend(decided),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                debug!(work_id = %work_id, chapter_id = %chapter_id, "candidate vanished (work deleted)");
            }
            Err(error) => return Err(error),
        }
    }
    store_results(ports, unstored, &found).await
}

/// Stores a page's record (when still to be stored) and its matches. The
/// record's write and the first match's are submitted together, and the
/// embedded store's writer takes every write waiting into one transaction
/// (one sync); a crash between writes only repeats the task (both are
/// idempotent).
async fn store_results(
    ports: &MatcherPorts,
    record: Option<&FingerprintRecord>,
    found: &[Match],
) -> Result<()> {
    let record = async {
        match record {
            Some(record) => {
                time_async(
                    Stage::StoreWrite,
                    ports.fingerprints.put_fingerprint(record),
                )
                .await
            }
            None => Ok(()),
        }
    };
    let matches = async {
        for found in found {
            time_async(Stage::StoreWrite, ports.matches.upsert_match(found)).await?;
        }
        Ok(())
    };
    tokio::try_join!(record, matches).map(|_| ())
}

/// A candidate chapter, verified.
struct Candidate<'a> {
    work_id: &'a WorkId,
    chapter_id: &'a ChapterId,
    chapter: &'a Chapter,
    prepared: Arc<PreparedChapter>,
    verification: Verification,
}

/// The page under comparison.
struct Subject<'a> {
    page: &'a Page,
    /// Near-duplicate pages the index found beside it.
    near_duplicates: &'a [PageId],
    /// Its site's publisher and reach, when that publisher estimated the
    /// site's audience (it weighs only into that publisher's matches).
    reach: Option<(PublisherId, f32)>,
}

/// Decides whether a verified candidate is an infringement (a part of a split
/// chapter is judged with its whole chain) and returns the match if it is.
async fn decide_candidate(
    ports: &MatcherPorts,
    subject: &Subject<'_>,
    candidate: Candidate<'_>,
    works: &mut HashMap<WorkId, WorkContext>,
) -> Result<Option<Match>> {
    let (page, near_duplicates) = (subject.page, subject.near_duplicates);
    let Candidate {
        work_id,
        chapter_id,
        chapter,
        prepared,
        verification,
    } = candidate;
    let context = work_context(ports, works, work_id).await?;
    let config = &context.config;
    let mut decision = decide(&verification, chapter.chars, config);
    if !decision.infringing
        && decision.copied_chars >= config.min_part_copied_chars
        && let Some(chain) = chain_text(ports, page).await?
    {
        // One page of a split chapter: the pages together are the copy.
        let fingerprinter = ports.fingerprinter.clone();
        let whole = tokio::task::spawn_blocking(move || {
            time(Stage::Verify, || {
                fingerprinter.verify_prepared(&prepared, &fingerprinter.normalize(&chain))
            })
        })
        .await
        .map_err(join_error)?;
        // The part ranks as the copy it belongs to.
        let chain_decision = decide(&whole, chapter.chars, config);
        decision.infringing = chain_decision.infringing;
        decision.score = chain_decision.score;
    }
    let reach = subject
        .reach
        .as_ref()
        .filter(|(owner, _)| *owner == context.work.publisher_id)
        .map(|(_, reach)| *reach);
    decision.score = with_site_reach(decision.score, reach);
    debug!(page_id = %page.id, work_id = %work_id, chapter_id = %chapter_id, copied = decision.copied_chars,
        coverage = verification.chapter_coverage, infringing = decision.infringing, "verified candidate");
    if !decision.infringing {
        return Ok(None);
    }
    let duplicates = duplicates_of(ports, page, work_id, chapter_id, near_duplicates).await?;
    Ok(Some(build_match(
        page,
        &context.work,
        &chapter.text,
        chapter_id,
        &verification,
        &decision,
        duplicates,
    )))
}

/// The joined text of the chapter split over pages that `page` is one of.
async fn chain_text(ports: &MatcherPorts, page: &Page) -> Result<Option<String>> {
    let Some(pagination) = &page.fetch.pagination else {
        return Ok(None);
    };
    if pagination.part_urls.len() < 2 {
        return Ok(None);
    }
    if let Some(joined) = &pagination.joined_text {
        return Ok(Some(joined.clone()));
    }
    match ports
        .pages
        .get_page(&PageId::for_url(&pagination.first_url))
        .await
    {
        Ok(first) => Ok(first.fetch.pagination.and_then(|first| first.joined_text)),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// The fingerprint version every match id is derived under, frozen at the
/// first one. A [`FINGERPRINT_VERSION`] bump fingerprints and compares pages
/// again; the same (page, chapter) pair must land on its stored match (its
/// status, reviews and `first_seen` kept, its `fingerprint_version` updated),
/// not beside it as a second, unreviewed one.
pub const MATCH_ID_VERSION: u32 = 1;

fn build_match(
    page: &Page,
    work: &Work,
    chapter_text: &str,
    chapter_id: &ChapterId,
    verification: &Verification,
    decision: &Decision,
    duplicate_page_ids: Vec<PageId>,
) -> Match {
    let now = Utc::now();
    let runs: Vec<CopiedSpan> = verification.spans.iter().map(|run| run.span).collect();
    let licensed = host_of(&page.url).is_some_and(|host| work.licensed_hosts.contains(&host));
    Match {
        id: MatchId::for_pair(
            &work.publisher_id,
            &page.id,
            &work.id,
            chapter_id,
            MATCH_ID_VERSION,
        ),
        publisher_id: work.publisher_id.clone(),
        page_id: page.id.clone(),
        page_url: page.url.clone(),
        site_id: page.site_id.clone(),
        work_id: work.id.clone(),
        chapter_id: chapter_id.clone(),
        fingerprint_version: FINGERPRINT_VERSION,
        score: decision.score,
        chapter_coverage: verification.chapter_coverage,
        page_coverage: verification.page_coverage,
        evidence: evidence::excerpts(chapter_text, &page.text, &runs),
        spans: evidence::regions(&runs),
        page_body_sha256: page.body_sha256.clone(),
        page_reading: page.fetch.reading.clone(),
        duplicate_page_ids,
        status: if licensed {
            MatchStatus::Licensed
        } else {
            MatchStatus::New
        },
        reviews: Vec::new(),
        first_seen: now,
        last_seen: now,
    }
}

/// Near-duplicate pages of the same site that already carry the same chapter.
async fn duplicates_of(
    ports: &MatcherPorts,
    page: &Page,
    work_id: &WorkId,
    chapter_id: &ChapterId,
    near_duplicates: &[PageId],
) -> Result<Vec<PageId>> {
    let mut duplicates = Vec::new();
    for other in near_duplicates {
        let matches = ports.matches.matches_of_page(other).await?;
        if matches.iter().any(|found| {
            found.site_id == page.site_id
                && found.work_id == *work_id
                && found.chapter_id == *chapter_id
        }) {
            duplicates.push(other.clone());
        }
    }
    Ok(duplicates)
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = host.split(':').next()?;
    Some(host.to_ascii_lowercase())
}

fn join_error(error: tokio::task::JoinError) -> Error {
    Error::internal(format!("comparison panicked: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verification(spans: &[(u32, u32)], coverage: f32) -> Verification {
        Verification {
            spans: spans
                .iter()
                .map(|&(start, end)| copyhound_fingerprint::VerifiedSpan {
                    span: CopiedSpan {
                        chapter_start: start,
                        chapter_end: end,
                        page_start: start,
                        page_end: end,
                    },
                    matched: end - start,
                })
                .collect(),
            chapter_coverage: coverage,
            page_coverage: coverage,
            wildcards: 0,
            matched_chars: spans.iter().map(|(start, end)| end - start).sum(),
        }
    }

    #[test]
    fn a_quote_is_not_an_infringement_but_a_chapter_is() {
        let config = MatcherConfig::default();
        let quote = decide(&verification(&[(100, 160)], 0.02), 3000, &config);
        assert!(!quote.infringing);
        let copy = decide(
            &verification(&[(0, 1500), (1600, 2900)], 0.93),
            3000,
            &config,
        );
        assert!(copy.infringing);
        assert!(copy.score > quote.score);
        let partial = decide(&verification(&[(0, 320)], 0.1), 3000, &config);
        assert!(partial.infringing, "300 copied characters clear the bar");
    }

    #[test]
    fn a_sites_reach_ranks_equal_copies_and_never_crosses_the_bar() {
        assert_eq!(site_reach(None), None);
        assert_eq!(site_reach(Some(0)), Some(0.0));
        assert_eq!(site_reach(Some(1_000)), Some(0.0));
        assert!((site_reach(Some(100_000)).unwrap() - 0.5).abs() < 1e-6);
        assert_eq!(site_reach(Some(10_000_000)), Some(1.0));
        assert_eq!(site_reach(Some(u64::MAX)), Some(1.0));
        let copy = 0.8;
        let small = with_site_reach(copy, site_reach(Some(500)));
        let large = with_site_reach(copy, site_reach(Some(50_000_000)));
        assert!(small < copy && copy < large, "{small} {copy} {large}");
        assert_eq!(with_site_reach(copy, None), copy, "no estimate, no change");
        assert!(
            with_site_reach(0.5, Some(0.0)) >= 0.5,
            "an infringement stays one"
        );
        assert_eq!(
            with_site_reach(0.3, Some(1.0)),
            0.3,
            "below the bar, untouched"
        );
        assert!(with_site_reach(1.0, Some(1.0)) <= 1.0);
    }

    #[test]
    fn scores_spread_over_real_copies_and_split_at_the_bar() {
        let config = MatcherConfig::default();
        let with = |spans: &[(u32, u32)], coverage: f32, page: f32, wildcards: u32| {
            let mut v = verification(spans, coverage);
            v.page_coverage = page;
            v.wildcards = wildcards;
            decide(&v, 6000, &config)
        };
        let whole_clean = with(&[(0, 5900)], 0.98, 0.95, 0);
        let whole_in_ads = with(&[(0, 5900)], 0.98, 0.55, 0);
        let whole_as_images = with(&[(0, 5900)], 0.98, 0.95, 40);
        let half = with(&[(0, 3000)], 0.5, 0.9, 0);
        let borderline = with(&[(0, 320)], 0.05, 0.2, 0);
        let quote = with(&[(0, 120)], 0.02, 0.1, 0);
        let ranked = [whole_as_images, whole_clean, whole_in_ads, half, borderline];
        for pair in ranked.windows(2) {
            assert!(pair[0].score > pair[1].score, "{ranked:?}");
        }
        assert!(ranked.iter().all(|d| d.infringing && d.score >= 0.5));
        assert!(!quote.infringing && quote.score < 0.5);
        // Real copies no longer pile up at 1.0.
        assert!(
            whole_clean.score < 0.97 && borderline.score < 0.6,
            "{ranked:?}"
        );
    }

    #[test]
    fn repeated_passages_count_once_against_the_bar() {
        let config = MatcherConfig::default();
        // 212 distinct characters found three times, then overlapping runs:
        // below the 300-character bar however often the page repeats them.
        let repeated = decide(
            &verification(&[(0, 212), (0, 212), (0, 212)], 0.07),
            3000,
            &config,
        );
        assert_eq!(repeated.copied_chars, 212);
        assert!(!repeated.infringing);
        let overlapping = decide(
            &verification(&[(1000, 1200), (1100, 1230), (1225, 1230)], 0.08),
            3000,
            &config,
        );
        assert_eq!(overlapping.copied_chars, 230);
        assert!(!overlapping.infringing);
        let disjoint = decide(&verification(&[(0, 150), (400, 560)], 0.1), 3000, &config);
        assert_eq!(disjoint.copied_chars, 310);
        assert!(disjoint.infringing, "distinct passages still add up");
    }

    #[test]
    fn a_short_chapter_copied_whole_is_an_infringement() {
        let config = MatcherConfig::default();
        let whole = decide(&verification(&[(0, 240)], 0.95), 250, &config);
        assert!(whole.infringing);
        let sentence = decide(&verification(&[(0, 40)], 0.16), 250, &config);
        assert!(!sentence.infringing);
    }

    #[test]
    fn hosts_are_parsed_from_urls() {
        assert_eq!(
            host_of("http://User@WWW.Example.com:8080/a?b").as_deref(),
            Some("www.example.com")
        );
        assert_eq!(host_of("https://a.b/").as_deref(), Some("a.b"));
        assert_eq!(host_of("nonsense"), None);
    }
}
