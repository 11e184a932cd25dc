use copyhound_core::model::MatchStatus;

use super::*;
use crate::testsuite::sample_input;

fn span(start: u32, end: u32) -> CopiedSpan {
    CopiedSpan {
        chapter_start: start,
        chapter_end: end,
        page_start: 0,
        page_end: 0,
    }
}

#[test]
fn copied_chars_counts_overlaps_once() {
    assert_eq!(copied_chars(&[]), 0);
    assert_eq!(copied_chars(&[span(0, 1000), span(500, 1500)]), 1500);
    assert_eq!(copied_chars(&[span(10, 20), span(0, 5), span(20, 30)]), 25);
    assert_eq!(
        copied_chars(&[span(5, 5), span(9, 3)]),
        0,
        "empty and inverted spans count nothing"
    );
}

#[test]
fn hosts_are_extracted_from_urls() {
    assert_eq!(
        host_of("https://User:pw@Alpha.Example:8080/a?b#c"),
        "alpha.example"
    );
    assert_eq!(host_of("http://[::1]:80/x"), "[::1]");
    assert_eq!(host_of("not a url"), "not a url");
}

#[test]
fn summary_excludes_dismissed_and_licensed() {
    let data = build_report_data(&sample_input());
    let summary = &data.summary;
    assert_eq!(summary.total_matches, 8);
    assert_eq!(summary.infringing_matches, 6);
    assert_eq!(
        summary.sites, 2,
        "gamma only has dismissed and licensed matches"
    );
    assert_eq!(summary.pages, 7, "six pages plus one duplicate");
    assert_eq!(summary.works, 2);
    assert_eq!(summary.chapters, 5);
    assert_eq!(summary.copied_chars, 1500 + 800 + 600 + 300 + 200);
    assert_eq!(summary.new_matches, 4);
}

#[test]
fn sites_are_ranked_by_copied_volume() {
    let data = build_report_data(&sample_input());
    let ranked: Vec<(&str, u32, u64)> = data
        .sites
        .iter()
        .map(|site| (site.site_id.as_str(), site.rank, site.copied_chars))
        .collect();
    assert_eq!(ranked, [("site_alpha", 1, 2500), ("site_beta", 2, 900)]);
    let alpha = &data.sites[0];
    assert_eq!(
        (alpha.pages, alpha.chapters, alpha.works, alpha.matches),
        (4, 3, 2, 3)
    );
    assert_eq!((alpha.new_matches, alpha.confirmed_matches), (2, 2));
    assert_eq!(alpha.name, "Alpha 小说网");
    assert_eq!(alpha.host, "alpha.example");
    let beta = &data.sites[1];
    assert_eq!(
        (
            beta.pages,
            beta.chapters,
            beta.works,
            beta.matches,
            beta.new_matches
        ),
        (3, 3, 2, 3, 2)
    );
}

#[test]
fn work_heat_maps_hold_the_best_coverage_per_chapter_and_site() {
    let data = build_report_data(&sample_input());
    let dragon = &data.works[0];
    assert_eq!(dragon.work_id.as_str(), "w_dragon");
    assert_eq!(dragon.copied_chars, 2900);
    assert_eq!((dragon.chapters_registered, dragon.chapters_copied), (3, 3));
    assert_eq!(
        dragon
            .sites
            .iter()
            .map(|site| site.as_str())
            .collect::<Vec<_>>(),
        ["site_alpha", "site_beta"]
    );
    let cells: Vec<Vec<Option<f32>>> = dragon
        .chapters
        .iter()
        .map(|row| row.cells.clone())
        .collect();
    assert_eq!(
        cells,
        [
            vec![Some(0.9), Some(0.4)],
            vec![Some(0.6), None],
            vec![None, Some(0.0)]
        ]
    );
    assert_eq!(dragon.chapters[0].index, Some(1));
    assert_eq!(dragon.chapters[0].sites_copying, 2);
    let river = &data.works[1];
    assert_eq!(river.copied_chars, 500);
    assert_eq!(
        river.chapters.len(),
        2,
        "the licensed and dismissed copies are not drawn"
    );
}

#[test]
fn timeline_and_status_breakdown() {
    let data = build_report_data(&sample_input());
    let days: Vec<(String, u32, u32)> = data
        .timeline
        .iter()
        .map(|day| (day.day.to_string(), day.detections, day.new))
        .collect();
    assert_eq!(
        days,
        [
            ("2024-03-01".to_string(), 1, 0),
            ("2024-03-03".to_string(), 1, 0),
            ("2024-03-13".to_string(), 2, 2),
            ("2024-03-14".to_string(), 1, 1),
            ("2024-03-21".to_string(), 1, 1),
        ]
    );
    let statuses: Vec<(MatchStatus, u32)> = data
        .statuses
        .iter()
        .map(|count| (count.status, count.count))
        .collect();
    assert_eq!(
        statuses,
        [
            (MatchStatus::New, 3),
            (MatchStatus::Confirmed, 2),
            (MatchStatus::Dismissed, 1),
            (MatchStatus::Licensed, 1),
            (MatchStatus::TakenDown, 1),
        ]
    );
}

#[test]
fn new_since_last_report() {
    let data = build_report_data(&sample_input());
    let new = &data.new_since_last;
    assert_eq!(new.matches, 4);
    let ids: Vec<&str> = new.match_ids.iter().map(|id| id.as_str()).collect();
    assert_eq!(ids, ["m_0007", "m_0002", "m_0003", "m_0008"]);
    assert!(new.new_sites.is_empty());
    assert!(new.new_works.is_empty());
    assert_eq!(new.new_chapters, 3);

    let mut first = sample_input();
    first.previous_report_at = None;
    let everything = build_report_data(&first);
    assert_eq!(everything.new_since_last.matches, 6);
    assert_eq!(everything.new_since_last.new_sites.len(), 2);
}

#[test]
fn evidence_follows_site_rank_and_keeps_every_status() {
    let data = build_report_data(&sample_input());
    let order: Vec<&str> = data
        .evidence
        .iter()
        .map(|one| one.match_id.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "m_0007", "m_0001", "m_0002", "m_0004", "m_0003", "m_0008", "m_0006", "m_0005"
        ]
    );
    let first = data
        .evidence
        .iter()
        .find(|one| one.match_id.as_str() == "m_0001")
        .unwrap();
    assert_eq!(first.copied_chars, 1500);
    assert_eq!(first.captured_at, first.last_seen);
    assert_eq!(first.duplicate_pages, 1);
    assert_eq!(first.chapter_title, "第一章 风起");
    let dismissed = data
        .evidence
        .iter()
        .find(|one| one.status == MatchStatus::Dismissed)
        .unwrap();
    assert!(!dismissed.infringing && !dismissed.new_since_last);
}

#[test]
fn scope_filters_a_superset_input() {
    let mut input = sample_input();
    input.scope.site_id = Some("site_beta".parse().unwrap());
    let data = build_report_data(&input);
    assert_eq!(data.summary.total_matches, 3);
    assert_eq!(data.sites.len(), 1);

    let mut input = sample_input();
    input.scope.work_id = Some("w_river".parse().unwrap());
    input.matches[0].publisher_id = "pub_other".parse().unwrap();
    assert_eq!(build_report_data(&input).summary.total_matches, 4);
}

#[test]
fn missing_records_fall_back_to_ids_and_hosts() {
    let mut input = sample_input();
    input.sites.clear();
    input.works.clear();
    input.chapters.clear();
    let data = build_report_data(&input);
    assert_eq!(data.sites[0].name, "alpha.example");
    assert_eq!(data.works[0].title, "w_dragon");
    assert_eq!(data.evidence[0].chapter_title, "c_w_dragon_1");
    assert_eq!(data.evidence[0].chapter_index, None);
}

/// A legal desk's scope: confirmed matches only, or confirmed and unreviewed,
/// of one work on one site during one period.
#[test]
fn review_status_work_site_and_period_limit_the_evidence() {
    use copyhound_core::model::ReviewScope;
    let ids = |data: &ReportData| -> Vec<String> {
        let mut ids: Vec<String> = data
            .evidence
            .iter()
            .map(|one| one.match_id.to_string())
            .collect();
        ids.sort();
        ids
    };
    let mut input = sample_input();
    input.scope.review = Some(ReviewScope::Confirmed);
    let confirmed = build_report_data(&input);
    assert_eq!(ids(&confirmed), ["m_0001", "m_0007"]);
    assert_eq!(confirmed.summary.total_matches, 2);
    assert_eq!(confirmed.summary.infringing_matches, 2);

    input.scope.review = Some(ReviewScope::ConfirmedAndUnreviewed);
    assert_eq!(
        ids(&build_report_data(&input)),
        ["m_0001", "m_0002", "m_0003", "m_0007", "m_0008"]
    );

    input.scope.review = Some(ReviewScope::All);
    assert_eq!(build_report_data(&input).summary.total_matches, 8);

    // First seen on days 0, 12, 13, 2, 14, 3, 12, 20 (last seen two days later):
    // the matches seen during days 10..=13 are those first seen before day 14
    // and last seen on day 10 or later.
    let start = input.matches[0].first_seen;
    input.scope.since = Some(start + chrono::Duration::days(10));
    input.scope.until = Some(start + chrono::Duration::days(14));
    assert_eq!(
        ids(&build_report_data(&input)),
        ["m_0002", "m_0003", "m_0007"]
    );

    input.scope.review = Some(ReviewScope::Confirmed);
    input.scope.work_id = Some(input.matches[6].work_id.clone());
    input.scope.site_id = Some(input.matches[6].site_id.clone());
    assert_eq!(ids(&build_report_data(&input)), ["m_0007"]);
}
