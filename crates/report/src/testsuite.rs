//! Seeded synthetic report inputs for tests, snapshots and benchmarks: fixed ids
//! and timestamps, so every rendering of them is byte-stable. Enabled by the
//! `testsuite` feature.

use chrono::{Duration, TimeZone, Utc};
use copyhound_core::ids::{MatchId, PageId, PublisherId};
use copyhound_core::model::{
    CopiedSpan, EvidenceExcerpt, ExtractionHints, Language, Match, MatchStatus, PublisherProfile,
    ReportScope, Review, Site, Timestamp, Work, WorkKind,
};

use crate::input::{ChapterInfo, ReportInput};

/// A hostile page text used by the sample: it must come out escaped everywhere.
pub const HOSTILE_TEXT: &str = "<script>alert('x')</script> & \"quoted\"";

/// The fixed instant the samples are generated at: 2024-03-31T12:00:00Z.
pub fn generated_at() -> Timestamp {
    Utc.with_ymd_and_hms(2024, 3, 31, 12, 0, 0)
        .single()
        .expect("a valid fixed date")
}

fn day(offset_days: i64, hour: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2024, 3, 1, hour, 0, 0)
        .single()
        .expect("a valid fixed date")
        + Duration::days(offset_days)
}

fn id<T: std::str::FromStr>(text: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    text.parse().expect("fixture ids are valid")
}

/// Returns the publisher of the samples.
pub fn publisher_id() -> PublisherId {
    id("pub_demo")
}

fn work(work_id: &str, title: &str, author: &str) -> Work {
    Work {
        id: id(work_id),
        publisher_id: publisher_id(),
        title: title.to_string(),
        author: author.to_string(),
        kind: WorkKind::Novel,
        language: Language::Zh,
        licensed_hosts: Vec::new(),
        created_at: day(-60, 0),
        updated_at: day(-30, 0),
        released_at: None,
        release_schedule: None,
    }
}

fn site(site_id: &str, name: &str, host: &str) -> Site {
    Site {
        id: id(site_id),
        publisher_id: publisher_id(),
        name: name.to_string(),
        seeds: vec![format!("https://{host}/")],
        allow_patterns: Vec::new(),
        deny_patterns: Vec::new(),
        max_depth: 3,
        max_pages_per_run: 1000,
        schedule: None,
        rate_limit_per_second: 1.0,
        concurrency: 1,
        charset_override: None,
        extraction: ExtractionHints::default(),
        enabled: true,
        created_at: day(-45, 0),
        audience: None,
        search_url: None,
    }
}

/// One match of the sample: the knobs the tests vary.
struct Spec<'a> {
    number: u32,
    site: &'a str,
    host: &'a str,
    work: &'a str,
    chapter: u32,
    status: MatchStatus,
    first_day: i64,
    spans: &'a [(u32, u32)],
    coverage: f32,
}

fn sample_match(spec: &Spec<'_>) -> Match {
    let spans: Vec<CopiedSpan> = spec
        .spans
        .iter()
        .map(|(start, end)| CopiedSpan {
            chapter_start: *start,
            chapter_end: *end,
            page_start: start + 40,
            page_end: end + 40,
        })
        .collect();
    let chapter_text = "第一章 风起云涌，少年立于山巅，望着远方的城池。";
    let page_text = if spec.number == 3 {
        HOSTILE_TEXT.to_string()
    } else {
        chapter_text.replace('。', "!")
    };
    let evidence = spans
        .first()
        .map(|span| EvidenceExcerpt {
            span: *span,
            chapter_excerpt: chapter_text.to_string(),
            page_excerpt: page_text,
        })
        .into_iter()
        .collect();
    let first_seen = day(spec.first_day, 8);
    let reviews = match spec.status {
        MatchStatus::New => Vec::new(),
        status => vec![Review {
            status,
            by: "reviewer@demo".to_string(),
            at: first_seen + Duration::hours(6),
            note: (status == MatchStatus::Dismissed).then(|| "quotation, fair use".to_string()),
        }],
    };
    Match {
        id: id(&format!("m_{:04}", spec.number)),
        publisher_id: publisher_id(),
        page_id: id(&format!("pg_{:04}", spec.number)),
        page_url: format!(
            "https://{}/book/{}/{}.html",
            spec.host, spec.work, spec.chapter
        ),
        site_id: id(spec.site),
        work_id: id(spec.work),
        chapter_id: id(&format!("c_{}_{}", spec.work, spec.chapter)),
        fingerprint_version: 1,
        score: 0.9,
        chapter_coverage: spec.coverage,
        page_coverage: 0.75,
        spans,
        evidence,
        page_body_sha256: format!("{:064x}", spec.number),
        page_reading: Default::default(),
        duplicate_page_ids: if spec.number == 1 {
            vec![id::<PageId>("pg_0001_dup")]
        } else {
            Vec::new()
        },
        status: spec.status,
        reviews,
        first_seen,
        last_seen: first_seen + Duration::days(2),
    }
}

/// Returns a small hand-made input: 3 sites, 2 works, 8 matches of every status,
/// a hostile page text, a previous report on 2024-03-10. The numbers the tests
/// assert follow from the table in this function.
pub fn sample_input() -> ReportInput {
    use MatchStatus::{Confirmed, Dismissed, Licensed, New, TakenDown};
    let (a, b, c) = ("site_alpha", "site_beta", "site_gamma");
    let (ha, hb, hc) = ("alpha.example", "beta.example", "gamma.example");
    let (w1, w2) = ("w_dragon", "w_river");
    #[rustfmt::skip]
    let specs = [
        Spec { number: 1, site: a, host: ha, work: w1, chapter: 1, status: Confirmed, first_day: 0, spans: &[(0, 1000), (500, 1500)], coverage: 0.9 },
        Spec { number: 2, site: a, host: ha, work: w1, chapter: 2, status: New, first_day: 12, spans: &[(0, 800)], coverage: 0.6 },
        Spec { number: 3, site: b, host: hb, work: w1, chapter: 1, status: New, first_day: 13, spans: &[(100, 700)], coverage: 0.4 },
        Spec { number: 4, site: b, host: hb, work: w2, chapter: 1, status: TakenDown, first_day: 2, spans: &[(0, 300)], coverage: 0.3 },
        Spec { number: 5, site: c, host: hc, work: w2, chapter: 2, status: Dismissed, first_day: 14, spans: &[(0, 5000)], coverage: 1.0 },
        Spec { number: 6, site: c, host: hc, work: w2, chapter: 1, status: Licensed, first_day: 3, spans: &[(0, 4000)], coverage: 1.0 },
        Spec { number: 7, site: a, host: ha, work: w2, chapter: 2, status: Confirmed, first_day: 12, spans: &[(10, 210)], coverage: 0.2 },
        Spec { number: 8, site: b, host: "mirror.beta.example", work: w1, chapter: 3, status: New, first_day: 20, spans: &[], coverage: 0.0 },
    ];
    let chapter_titles = ["第一章 风起", "第二章 <云涌>", "第三章 山巅"];
    let mut chapters = Vec::new();
    for work_id in [w1, w2] {
        for (position, title) in chapter_titles.iter().enumerate() {
            let index = u32::try_from(position + 1).expect("three chapters");
            chapters.push(ChapterInfo {
                work_id: id(work_id),
                chapter_id: id(&format!("c_{work_id}_{index}")),
                title: (*title).to_string(),
                index,
            });
        }
    }
    ReportInput {
        publisher: "示例出版社 Demo Press".to_string(),
        profile: PublisherProfile::default(),
        generated_at: generated_at(),
        scope: ReportScope {
            publisher_id: publisher_id(),
            work_id: None,
            site_id: None,
            since: None,
            until: None,
            review: None,
        },
        works: vec![
            work(w1, "龙城传说", "李白"),
            work(w2, "River & <Stone>", "Jane Doe"),
        ],
        chapters,
        sites: vec![
            site(a, "Alpha 小说网", ha),
            site(b, "Beta Reader", hb),
            site(c, HOSTILE_TEXT, hc),
        ],
        matches: specs.iter().map(sample_match).collect(),
        previous_report_at: Some(day(10, 0)),
    }
}

/// Returns a seeded input of `matches` matches over 40 sites and 25 works of 200
/// chapters, first seen over 60 days, every status represented. Equal seeds give
/// equal inputs.
pub fn synthetic_input(matches: usize, seed: u64) -> ReportInput {
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: u64| {
        // xorshift64*: tiny, deterministic, good enough to spread fixtures.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound.max(1)
    };
    let sites: Vec<Site> = (0..40)
        .map(|n| {
            site(
                &format!("site_{n:02}"),
                &format!("盗版站 {n:02}"),
                &format!("s{n:02}.example"),
            )
        })
        .collect();
    let works: Vec<Work> = (0..25)
        .map(|n| work(&format!("w_{n:02}"), &format!("长篇小说 第{n}部"), "作者"))
        .collect();
    let chapters: Vec<ChapterInfo> = works
        .iter()
        .flat_map(|work| {
            (1..=200u32).map(move |index| ChapterInfo {
                work_id: work.id.clone(),
                chapter_id: id(&format!("c_{}_{index}", work.id)),
                title: format!("第{index}章"),
                index,
            })
        })
        .collect();
    let statuses = [
        MatchStatus::New,
        MatchStatus::New,
        MatchStatus::Confirmed,
        MatchStatus::Confirmed,
        MatchStatus::Dismissed,
        MatchStatus::TakenDown,
        MatchStatus::Licensed,
    ];
    let found = (0..matches)
        .map(|number| {
            // Skewed towards low site numbers, like real piracy rankings.
            let site_number = next(40).min(next(40));
            let work_number = next(25).min(next(25));
            let chapter = 1 + next(200);
            let start = u32::try_from(next(2000)).expect("bounded");
            let length = 200 + u32::try_from(next(3000)).expect("bounded");
            let number = u32::try_from(number).expect("fewer than 4 billion matches");
            let status = statuses[usize::try_from(next(7)).expect("bounded")];
            let mut one = sample_match(&Spec {
                number,
                site: &format!("site_{site_number:02}"),
                host: &format!("s{site_number:02}.example"),
                work: &format!("w_{work_number:02}"),
                chapter: u32::try_from(chapter).expect("bounded"),
                status,
                first_day: i64::try_from(next(60)).expect("bounded"),
                spans: &[
                    (start, start + length),
                    (start + length + 50, start + length + 250),
                ],
                coverage: 0.05 + f32::from(u16::try_from(next(95)).expect("bounded")) / 100.0,
            });
            one.id = MatchId::derive_from(&format!("synthetic-{seed}-{number}"));
            one
        })
        .collect();
    ReportInput {
        publisher: "示例出版社".to_string(),
        profile: PublisherProfile::default(),
        generated_at: generated_at() + Duration::days(30),
        scope: ReportScope {
            publisher_id: publisher_id(),
            work_id: None,
            site_id: None,
            since: None,
            until: None,
            review: None,
        },
        works,
        chapters,
        sites,
        matches: found,
        previous_report_at: Some(day(45, 0)),
    }
}
