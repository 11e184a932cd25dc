//! Test data builders.

use chrono::{TimeZone, Utc};
use copyhound_core::ids::PageId;
use copyhound_core::model::{FetchMeta, Page, Timestamp};

/// Returns a fixed timestamp `seconds` after a base instant, with nanoseconds.
pub(crate) fn at(seconds: i64) -> Timestamp {
    Utc.timestamp_opt(1_700_000_000 + seconds, 123_456_789)
        .unwrap()
}

/// Returns a page of `site` at `url` with `text`.
pub(crate) fn page(url: &str, site: &str, text: &str) -> Page {
    let body = format!("<html><body>{text}</body></html>").into_bytes();
    Page {
        id: PageId::for_url(url),
        url: url.to_string(),
        site_id: site.parse().unwrap(),
        title: "title".into(),
        body_sha256: copyhound_core::ids::sha256_hex(&body),
        raw_body: body,
        body_truncated: false,
        charset: "utf-8".into(),
        content_sha256: copyhound_core::ids::sha256_hex(text.as_bytes()),
        text: text.to_string(),
        first_seen: at(0),
        last_seen: at(0),
        fetch: FetchMeta {
            status: 200,
            final_url: url.to_string(),
            ..FetchMeta::default()
        },
        previous_versions: Vec::new(),
    }
}

use copyhound_core::ids::{ChapterId, MatchId, PublisherId, WorkId};
use copyhound_core::model::{
    Chapter, CrawlCounters, CrawlRun, CrawlRunStatus, ExtractionHints, FingerprintOwner,
    FingerprintRecord, Language, Match, MatchStatus, PassageRecord, Publisher, PublisherKind,
    Report, ReportFormat, ReportScope, ReportStatus, Review, ReviewScope, Site, Work, WorkKind,
};

/// Returns a publisher.
pub(crate) fn publisher(id: &str) -> Publisher {
    Publisher {
        id: id.parse().unwrap(),
        name: format!("publisher {id}"),
        kind: PublisherKind::Books,
        created_at: at(0),
        policy: Default::default(),
        alerts: Default::default(),
        report_schedules: Vec::new(),
        profile: Default::default(),
    }
}

/// Returns a work of `publisher`.
pub(crate) fn work(publisher: &str, id: &str) -> Work {
    Work {
        id: id.parse().unwrap(),
        publisher_id: publisher.parse().unwrap(),
        title: format!("work {id}"),
        author: "author".into(),
        kind: WorkKind::Novel,
        language: Language::Zh,
        licensed_hosts: vec!["licensed.example".into()],
        created_at: at(0),
        updated_at: at(1),
        released_at: None,
        release_schedule: None,
    }
}

/// Returns chapter `index` of `work`.
pub(crate) fn chapter(work: &str, index: u32) -> Chapter {
    Chapter::new(
        work.parse().unwrap(),
        format!("c{index}").parse().unwrap(),
        index,
        format!("第{index}章"),
        format!("正文{index}"),
    )
}

/// Returns a site of `publisher`.
pub(crate) fn site(publisher: &str, id: &str) -> Site {
    Site {
        id: id.parse().unwrap(),
        publisher_id: publisher.parse().unwrap(),
        name: "pirate".into(),
        seeds: vec!["http://127.0.0.1:8001/".into()],
        allow_patterns: Vec::new(),
        deny_patterns: vec!["/login".into()],
        max_depth: 3,
        max_pages_per_run: 1000,
        schedule: Some("0 3 * * *".into()),
        rate_limit_per_second: 2.5,
        concurrency: 2,
        charset_override: None,
        extraction: ExtractionHints::default(),
        enabled: true,
        created_at: at(0),
        audience: None,
        search_url: None,
    }
}

/// Returns a crawl run of `site` created `seconds` after the base instant.
pub(crate) fn crawl_run(site: &str, id: &str, seconds: i64) -> CrawlRun {
    CrawlRun {
        id: id.parse().unwrap(),
        site_id: site.parse().unwrap(),
        status: CrawlRunStatus::Succeeded,
        created_at: at(seconds),
        started_at: Some(at(seconds + 1)),
        finished_at: None,
        counters: CrawlCounters {
            fetched: 3,
            skipped: [("robots".to_string(), 1)].into(),
            ..CrawlCounters::default()
        },
        recent_errors: vec!["http://a/: timeout".into()],
        // A targeted run's scope round-trips through every backend.
        scope: Some(copyhound_core::model::RunScope {
            reason: "release burst of w1, visit 2".into(),
            seeds: vec!["http://a/list".into()],
            max_depth: 1,
            new_links_only: true,
            rate_limit_per_second: Some(1.0 / 60.0),
        }),
    }
}

/// Returns a fingerprint record with extreme u64 values.
pub(crate) fn fingerprint(owner: FingerprintOwner, version: u32) -> FingerprintRecord {
    FingerprintRecord {
        owner,
        version,
        content_sha256: "ab".repeat(32),
        simhash: u64::MAX,
        shingle_simhash: 1 << 63,
        dna: vec![0, u64::MAX, (1 << 63) + 1, 42],
        passages: vec![PassageRecord {
            ordinal: 0,
            start: 0,
            end: 300,
            simhash: u64::MAX - 1,
            dna: vec![u64::MAX],
        }],
        anchors: vec![u64::MAX, 42],
        normalized_chars: 300,
        created_at: at(0),
    }
}

/// Returns the owner of chapter `chapter` of `work`.
pub(crate) fn chapter_owner(work: &str, chapter: &str) -> FingerprintOwner {
    FingerprintOwner::Chapter {
        work_id: work.parse().unwrap(),
        chapter_id: chapter.parse().unwrap(),
    }
}

/// Returns a new match of `page_url` against `work`/`chapter`, last seen at `seconds`.
pub(crate) fn found_match(
    publisher: &str,
    page_url: &str,
    work: &str,
    chapter: &str,
    seconds: i64,
) -> Match {
    let page_id = PageId::for_url(page_url);
    let work_id: WorkId = work.parse().unwrap();
    let chapter_id: ChapterId = chapter.parse().unwrap();
    let publisher_id: PublisherId = publisher.parse().unwrap();
    Match {
        id: MatchId::for_pair(&publisher_id, &page_id, &work_id, &chapter_id, 1),
        publisher_id,
        page_id,
        page_url: page_url.to_string(),
        site_id: "site_a".parse().unwrap(),
        work_id,
        chapter_id,
        fingerprint_version: 1,
        score: 0.8125,
        chapter_coverage: 0.5,
        page_coverage: 0.25,
        spans: Vec::new(),
        evidence: Vec::new(),
        page_body_sha256: "cd".repeat(32),
        page_reading: Default::default(),
        duplicate_page_ids: Vec::new(),
        status: MatchStatus::New,
        reviews: Vec::new(),
        first_seen: at(seconds),
        last_seen: at(seconds),
    }
}

/// Returns a review setting `status`.
pub(crate) fn review(status: MatchStatus) -> Review {
    Review {
        status,
        by: "key_reviewer".into(),
        at: at(100),
        note: Some("checked".into()),
    }
}

/// Returns a queued report of `publisher` created at `seconds`.
pub(crate) fn report(publisher: &str, id: &str, seconds: i64) -> Report {
    Report {
        id: id.parse().unwrap(),
        scope: ReportScope {
            publisher_id: publisher.parse().unwrap(),
            work_id: None,
            site_id: None,
            since: Some(at(0)),
            until: Some(at(100)),
            review: Some(ReviewScope::Confirmed),
        },
        format: ReportFormat::Html,
        status: ReportStatus::Ready {
            artifact: "a.html".into(),
            bytes: 10,
        },
        created_at: at(seconds),
        finished_at: None,
    }
}
