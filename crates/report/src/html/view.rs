//! The template's view of a report: strings formatted for reading (dates, counts,
//! percentages) and charts drawn, so the template only lays things out.

use std::collections::{BTreeMap, BTreeSet};

use copyhound_core::ids::SiteId;
use copyhound_core::model::{MatchStatus, Reading, Timestamp};
use serde::Serialize;

use super::charts;
use super::highlight::{Segment, highlight};
use super::{HtmlOptions, thousands};
use crate::data::{MatchEvidence, ReportData};

#[derive(Serialize)]
pub(super) struct Page {
    css: &'static str,
    publisher: String,
    generated_at: String,
    previous_report_at: String,
    scope: String,
    cards: Vec<Card>,
    statuses: Vec<StatusView>,
    status_bar_svg: String,
    sites_chart_svg: String,
    sites: Vec<SiteRow>,
    timeline_svg: String,
    new_sites: Vec<String>,
    new_works: Vec<String>,
    new_chapters: u32,
    new_matches: u32,
    works: Vec<WorkView>,
    works_hidden: usize,
    evidence: Vec<EvidenceView>,
    evidence_hidden: usize,
    listing: Vec<ListRow>,
    listing_hidden: usize,
}

#[derive(Serialize)]
struct Card {
    label: &'static str,
    value: String,
    note: String,
    accent: bool,
}

#[derive(Serialize)]
struct StatusView {
    name: &'static str,
    label: &'static str,
    count: u32,
    colour: &'static str,
}

#[derive(Serialize)]
struct SiteRow {
    rank: u32,
    name: String,
    host: String,
    copied_chars: String,
    pages: u32,
    chapters: u32,
    works: u32,
    matches: u32,
    new_matches: u32,
    confirmed: u32,
    first_seen: String,
    last_seen: String,
}

#[derive(Serialize)]
struct WorkView {
    title: String,
    author: String,
    chapters_copied: u32,
    chapters_registered: u32,
    copied_chars: String,
    sites: usize,
    heatmap_svg: String,
    rows_hidden: usize,
    columns_hidden: usize,
}

#[derive(Serialize)]
struct ExcerptView {
    chapter_range: String,
    page_range: String,
    chapter: Vec<Segment>,
    page: Vec<Segment>,
}

#[derive(Serialize)]
struct EvidenceView {
    anchor: String,
    match_id: String,
    status: &'static str,
    status_label: &'static str,
    colour: &'static str,
    is_new: bool,
    site_name: String,
    url: String,
    work_title: String,
    chapter: String,
    score: String,
    chapter_coverage: String,
    page_coverage: String,
    copied_chars: String,
    spans: usize,
    duplicate_pages: u32,
    first_seen: String,
    last_seen: String,
    captured_at: String,
    sha256: String,
    /// How the text was read, when not as served (said beside the hash).
    reading: String,
    review: String,
    excerpts: Vec<ExcerptView>,
}

#[derive(Serialize)]
struct ListRow {
    anchor: Option<String>,
    match_id: String,
    status_label: &'static str,
    colour: &'static str,
    site_name: String,
    url: String,
    chapter: String,
    chapter_coverage: String,
    first_seen: String,
    sha256_short: String,
}

fn time(at: Timestamp) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn percent(share: f32) -> String {
    format!("{:.0}%", (share.clamp(0.0, 1.0) * 100.0).round())
}

fn status_label(status: MatchStatus) -> &'static str {
    match status {
        MatchStatus::New => "New · 待审核",
        MatchStatus::Confirmed => "Confirmed · 已确认",
        MatchStatus::Dismissed => "Dismissed · 已驳回",
        MatchStatus::Licensed => "Licensed · 已授权",
        MatchStatus::TakenDown => "Taken down · 已下架",
    }
}

fn chapter_label(evidence: &MatchEvidence) -> String {
    match evidence.chapter_index {
        Some(index) => format!("#{index} {}", evidence.chapter_title),
        None => evidence.chapter_title.clone(),
    }
}

fn scope_text(data: &ReportData) -> String {
    let mut parts = vec![format!("publisher {}", data.scope.publisher_id)];
    if let Some(work_id) = &data.scope.work_id {
        let title = data
            .works
            .iter()
            .find(|work| work.work_id == *work_id)
            .map_or(work_id.as_str(), |w| &w.title);
        parts.push(format!("work {title}"));
    }
    if let Some(site_id) = &data.scope.site_id {
        let name = data
            .sites
            .iter()
            .find(|site| site.site_id == *site_id)
            .map_or(site_id.as_str(), |s| &s.name);
        parts.push(format!("site {name}"));
    }
    if let Some(since) = data.scope.since {
        parts.push(format!("seen since {}", time(since)));
    }
    parts.join(" · ")
}

fn cards(data: &ReportData) -> Vec<Card> {
    let summary = &data.summary;
    vec![
        Card {
            label: "Infringing matches · 侵权匹配",
            value: thousands(u64::from(summary.infringing_matches)),
            note: format!("of {} found", thousands(u64::from(summary.total_matches))),
            accent: false,
        },
        Card {
            label: "New since last report · 新增",
            value: thousands(u64::from(summary.new_matches)),
            note: data.previous_report_at.map_or_else(
                || "first report".to_string(),
                |at| format!("since {}", time(at)),
            ),
            accent: summary.new_matches > 0,
        },
        Card {
            label: "Sites · 站点",
            value: thousands(u64::from(summary.sites)),
            note: format!("{} pages", thousands(u64::from(summary.pages))),
            accent: false,
        },
        Card {
            label: "Works · 作品",
            value: thousands(u64::from(summary.works)),
            note: format!("{} chapters copied", thousands(u64::from(summary.chapters))),
            accent: false,
        },
        Card {
            label: "Copied characters · 被复制字数",
            value: thousands(summary.copied_chars),
            note: "union of copied chapter ranges".to_string(),
            accent: false,
        },
    ]
}

fn evidence_view(evidence: &MatchEvidence) -> EvidenceView {
    let excerpts = evidence
        .excerpts
        .iter()
        .map(|excerpt| {
            let span = excerpt.span;
            let length = |start: u32, end: u32| {
                usize::try_from(end.saturating_sub(start)).unwrap_or(usize::MAX)
            };
            let (chapter, page) = highlight(
                &excerpt.chapter_excerpt,
                length(span.chapter_start, span.chapter_end),
                &excerpt.page_excerpt,
                length(span.page_start, span.page_end),
            );
            ExcerptView {
                chapter_range: format!("chars {}–{}", span.chapter_start, span.chapter_end),
                page_range: format!("chars {}–{}", span.page_start, span.page_end),
                chapter,
                page,
            }
        })
        .collect();
    EvidenceView {
        anchor: format!("match-{}", evidence.match_id),
        match_id: evidence.match_id.to_string(),
        status: evidence.status.as_str(),
        status_label: status_label(evidence.status),
        colour: charts::status_colour(evidence.status),
        is_new: evidence.new_since_last,
        site_name: evidence.site_name.clone(),
        url: evidence.url.clone(),
        work_title: evidence.work_title.clone(),
        chapter: chapter_label(evidence),
        score: format!("{:.2}", evidence.score),
        chapter_coverage: percent(evidence.chapter_coverage),
        page_coverage: percent(evidence.page_coverage),
        copied_chars: thousands(evidence.copied_chars),
        spans: evidence.spans.len(),
        duplicate_pages: evidence.duplicate_pages,
        first_seen: time(evidence.first_seen),
        last_seen: time(evidence.last_seen),
        captured_at: time(evidence.captured_at),
        sha256: evidence.page_body_sha256.clone(),
        reading: reading_note(&evidence.page_reading),
        review: evidence
            .last_review
            .as_ref()
            .map_or_else(String::new, |review| {
                let note = review
                    .note
                    .as_deref()
                    .map(|note| format!(": {note}"))
                    .unwrap_or_default();
                format!(
                    "{} by {} at {}{note}",
                    review.status.as_str(),
                    review.by,
                    time(review.at)
                )
            }),
        excerpts,
    }
}

/// What a reader of the raw page must know to find the excerpts in it: the
/// text was read after the page's scripts ran, or through the site's web
/// fonts (the body holds other code points than the excerpts show).
pub(crate) fn reading_note(reading: &Reading) -> String {
    let mut said = Vec::new();
    if reading.rendered {
        said.push(
            "read after the page's scripts ran in a browser · 页面脚本运行后读取".to_string(),
        );
    }
    if reading.font_decoded_chars > 0 {
        said.push(format!(
            "{} characters decoded through the site's web font (the body holds the code points the font redraws) · {} 个字符经网站字体解码",
            reading.font_decoded_chars, reading.font_decoded_chars
        ));
    }
    said.join("; ")
}

/// Returns the view of `data` under `options`, with `css` inlined.
pub(super) fn build(data: &ReportData, options: &HtmlOptions, css: &'static str) -> Page {
    let site_names: BTreeMap<&SiteId, &str> = data
        .sites
        .iter()
        .map(|site| (&site.site_id, site.name.as_str()))
        .chain(
            data.evidence
                .iter()
                .map(|one| (&one.site_id, one.site_name.as_str())),
        )
        .collect();
    let works = data
        .works
        .iter()
        .take(options.max_works)
        .map(|work| WorkView {
            title: work.title.clone(),
            author: work.author.clone(),
            chapters_copied: work.chapters_copied,
            chapters_registered: work.chapters_registered,
            copied_chars: thousands(work.copied_chars),
            sites: work.sites.len(),
            heatmap_svg: charts::heat_map(
                work,
                &site_names,
                options.max_heatmap_rows,
                options.max_heatmap_columns,
            ),
            rows_hidden: work.chapters.len().saturating_sub(options.max_heatmap_rows),
            columns_hidden: work.sites.len().saturating_sub(options.max_heatmap_columns),
        })
        .collect();
    let infringing: Vec<&MatchEvidence> =
        data.evidence.iter().filter(|one| one.infringing).collect();
    let detailed: Vec<EvidenceView> = infringing
        .iter()
        .take(options.max_detailed_evidence)
        .map(|one| evidence_view(one))
        .collect();
    let detailed_ids: BTreeSet<&str> = detailed
        .iter()
        .map(|shown| shown.match_id.as_str())
        .collect();
    let listing = data
        .evidence
        .iter()
        .take(options.max_listed_matches)
        .map(|one| ListRow {
            anchor: detailed_ids
                .contains(one.match_id.as_str())
                .then(|| format!("match-{}", one.match_id)),
            match_id: one.match_id.to_string(),
            status_label: status_label(one.status),
            colour: charts::status_colour(one.status),
            site_name: one.site_name.clone(),
            url: one.url.clone(),
            chapter: format!("{} · {}", one.work_title, chapter_label(one)),
            chapter_coverage: percent(one.chapter_coverage),
            first_seen: one.first_seen.format("%Y-%m-%d").to_string(),
            sha256_short: one.page_body_sha256.chars().take(12).collect(),
        })
        .collect();
    Page {
        css,
        publisher: data.publisher.clone(),
        generated_at: time(data.generated_at),
        previous_report_at: data
            .previous_report_at
            .map_or_else(|| "none".to_string(), time),
        scope: scope_text(data),
        cards: cards(data),
        statuses: data
            .statuses
            .iter()
            .map(|count| StatusView {
                name: count.status.as_str(),
                label: status_label(count.status),
                count: count.count,
                colour: charts::status_colour(count.status),
            })
            .collect(),
        status_bar_svg: charts::status_bar(&data.statuses),
        sites_chart_svg: charts::sites_bar_chart(&data.sites, options.max_sites_in_chart),
        sites: data
            .sites
            .iter()
            .map(|site| SiteRow {
                rank: site.rank,
                name: site.name.clone(),
                host: site.host.clone(),
                copied_chars: thousands(site.copied_chars),
                pages: site.pages,
                chapters: site.chapters,
                works: site.works,
                matches: site.matches,
                new_matches: site.new_matches,
                confirmed: site.confirmed_matches,
                first_seen: site.first_seen.format("%Y-%m-%d").to_string(),
                last_seen: site.last_seen.format("%Y-%m-%d").to_string(),
            })
            .collect(),
        timeline_svg: charts::timeline_chart(&data.timeline, data.previous_report_at),
        new_sites: data
            .new_since_last
            .new_sites
            .iter()
            .map(|site_id| {
                site_names
                    .get(site_id)
                    .map_or_else(|| site_id.to_string(), |name| (*name).to_string())
            })
            .collect(),
        new_works: data
            .new_since_last
            .new_works
            .iter()
            .map(|work_id| {
                data.works
                    .iter()
                    .find(|work| work.work_id == *work_id)
                    .map_or(work_id.to_string(), |w| w.title.clone())
            })
            .collect(),
        new_chapters: data.new_since_last.new_chapters,
        new_matches: data.new_since_last.matches,
        works,
        works_hidden: data.works.len().saturating_sub(options.max_works),
        evidence_hidden: infringing
            .len()
            .saturating_sub(options.max_detailed_evidence),
        evidence: detailed,
        listing,
        listing_hidden: data
            .evidence
            .len()
            .saturating_sub(options.max_listed_matches),
    }
}
