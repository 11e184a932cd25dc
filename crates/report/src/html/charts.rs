//! Charts as hand-built inline SVG: a report must open offline and print the same
//! everywhere, and five chart shapes do not justify a plotting library. Every text
//! that comes from data goes through [`xml_escape`]. The admin UI's dashboard
//! draws its daily bars with [`daily_bar_chart`] from here too: one chart module.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use chrono::{Duration, NaiveDate};
use copyhound_core::ids::SiteId;
use copyhound_core::model::{MatchStatus, Timestamp};

use crate::data::{DayCount, SiteSummary, StatusCount, WorkCoverage};

/// Bar colour of established detections.
const INK: &str = "#4f46e5";
/// Colour of what is new since the previous report.
const NEW: &str = "#f97316";
/// Grid lines and empty cells.
const GRID: &str = "#e5e7eb";
/// Secondary text.
const MUTED: &str = "#6b7280";

/// Returns `text` escaped for XML text and attribute values.
pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// Returns `text` cut to `max_chars` characters, with an ellipsis when cut.
pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Returns `value` with thousands separators: `12,345`.
pub(crate) fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|group| std::str::from_utf8(group).expect("decimal digits are ascii"))
        .collect();
    groups.join(",")
}

/// Returns the display colour of a review status.
pub(crate) fn status_colour(status: MatchStatus) -> &'static str {
    match status {
        MatchStatus::New => "#f59e0b",
        MatchStatus::Confirmed => "#dc2626",
        MatchStatus::Dismissed => "#9ca3af",
        MatchStatus::Licensed => "#10b981",
        MatchStatus::TakenDown => "#3b82f6",
    }
}

/// Opens an SVG element; `stretch` charts fill the width of their panel.
fn svg_open(width: u32, height: u32, label: &str, stretch: bool) -> String {
    let class = if stretch { "chart stretch" } else { "chart" };
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="{class}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}">"#,
        xml_escape(label)
    )
}

/// Returns a horizontal bar chart of the top `max_bars` sites by copied characters.
pub(crate) fn sites_bar_chart(sites: &[SiteSummary], max_bars: usize) -> String {
    let shown = &sites[..sites.len().min(max_bars)];
    let (width, label_width, value_width, row_height) = (1000u32, 220u32, 190u32, 28u32);
    let bar_space = f64::from(width - label_width - value_width - 10);
    let height = 12 + row_height * u32::try_from(shown.len().max(1)).unwrap_or(1);
    let max_chars = shown
        .iter()
        .map(|site| site.copied_chars)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut svg = svg_open(
        width,
        height,
        "infringing sites ranked by copied characters",
        true,
    );
    for (position, site) in shown.iter().enumerate() {
        let y = 6 + row_height * u32::try_from(position).unwrap_or(0);
        let bar = (bar_space * site.copied_chars as f64 / max_chars as f64).max(2.0);
        let new_share = if site.matches == 0 {
            0.0
        } else {
            f64::from(site.new_matches) / f64::from(site.matches)
        };
        svg.push_str(&format!(
            r#"<g><title>{title}</title><text x="{lx}" y="{ty}" text-anchor="end" class="label">#{rank} {name}</text><rect x="{label_width}" y="{by}" width="{bar:.1}" height="18" rx="3" fill="{INK}"/><rect x="{label_width}" y="{by}" width="{new_bar:.1}" height="18" rx="3" fill="{NEW}" opacity="0.85"/><text x="{vx:.1}" y="{ty}" class="value">{chars} chars · {pages} pages</text></g>"#,
            title = xml_escape(&format!(
                "{}: {} copied characters, {} pages, {} chapters, {} works, {} new matches",
                site.name, site.copied_chars, site.pages, site.chapters, site.works, site.new_matches
            )),
            lx = label_width - 8,
            ty = y + 14,
            rank = site.rank,
            name = xml_escape(&truncate(&site.name, 22)),
            by = y + 1,
            new_bar = bar * new_share,
            vx = f64::from(label_width) + bar + 8.0,
            chars = thousands(site.copied_chars),
            pages = thousands(u64::from(site.pages)),
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// Returns a round upper bound for an axis and its tick step.
fn nice_axis(max_value: u32) -> (u32, u32) {
    let max_value = max_value.max(1);
    let raw_step = f64::from(max_value) / 4.0;
    let magnitude = 10f64.powf(raw_step.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|factor| factor * magnitude)
        .find(|step| *step >= raw_step)
        .unwrap_or(10.0 * magnitude)
        .max(1.0)
        .round();
    let step_u32 = step as u32;
    (max_value.div_ceil(step_u32) * step_u32, step_u32)
}

/// Returns a daily bar chart of first detections, new ones stacked in orange,
/// with a marker at the previous report.
pub(crate) fn timeline_chart(days: &[DayCount], previous_report_at: Option<Timestamp>) -> String {
    let (width, height, left, right, top, bottom) = (1000u32, 240u32, 48.0, 16.0, 30.0, 34.0);
    let mut svg = svg_open(width, height, "detections per day", true);
    let (Some(first), Some(last)) = (days.first(), days.last()) else {
        svg.push_str(r#"<text x="500" y="120" text-anchor="middle" class="label">no detections</text></svg>"#);
        return svg;
    };
    let end = last.day;
    let start = first.day.min(end - Duration::days(13));
    let span_days = (end - start).num_days() + 1;
    let plot_width = f64::from(width) - left - right;
    let plot_height = f64::from(height) - top - bottom;
    let slot = plot_width / span_days as f64;
    let (axis_max, step) = nice_axis(days.iter().map(|day| day.detections).max().unwrap_or(1));
    let y_of = |value: f64| top + plot_height * (1.0 - value / f64::from(axis_max));
    let x_of = |day: NaiveDate| left + slot * (day - start).num_days() as f64;
    let mut tick = 0;
    while tick <= axis_max {
        let y = y_of(f64::from(tick));
        svg.push_str(&format!(
            r#"<line x1="{left}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="{GRID}"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="tick">{tick}</text>"#,
            x2 = f64::from(width) - right,
            tx = left - 6.0,
            ty = y + 4.0,
        ));
        tick += step;
    }
    let bar_width = (slot * 0.8).max(1.0);
    for day in days {
        let x = x_of(day.day) + (slot - bar_width) / 2.0;
        let old = f64::from(day.detections - day.new);
        let total = f64::from(day.detections);
        svg.push_str(&format!(
            r#"<g><title>{date}: {total} detections, {new} new</title><rect x="{x:.1}" y="{y_old:.1}" width="{bar_width:.1}" height="{h_old:.1}" fill="{INK}"/><rect x="{x:.1}" y="{y_new:.1}" width="{bar_width:.1}" height="{h_new:.1}" fill="{NEW}"/></g>"#,
            date = day.day,
            new = day.new,
            y_old = y_of(old),
            h_old = y_of(0.0) - y_of(old),
            y_new = y_of(total),
            h_new = y_of(old) - y_of(total),
        ));
    }
    let label_every = (span_days / 7).max(1);
    let mut offset = 0;
    while offset < span_days {
        let day = start + Duration::days(offset);
        svg.push_str(&format!(
            r#"<text x="{x:.1}" y="{y}" text-anchor="middle" class="tick">{label}</text>"#,
            x = x_of(day) + slot / 2.0,
            y = f64::from(height) - bottom + 16.0,
            label = day.format("%m-%d"),
        ));
        offset += label_every;
    }
    if let Some(previous) = previous_report_at
        .map(|at| at.date_naive())
        .filter(|day| *day >= start && *day <= end)
    {
        let x = x_of(previous) + slot / 2.0;
        svg.push_str(&format!(
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{y2:.1}" stroke="{MUTED}" stroke-dasharray="4 3"/><text x="{tx:.1}" y="{ty}" class="tick">previous report</text>"#,
            y2 = y_of(0.0),
            tx = x + 4.0,
            ty = top - 4.0,
        ));
    }
    svg.push_str(&format!(
        r#"<rect x="{lx}" y="4" width="10" height="10" fill="{INK}"/><text x="{tx}" y="13" class="tick">earlier</text><rect x="{lx2}" y="4" width="10" height="10" fill="{NEW}"/><text x="{tx2}" y="13" class="tick">new since previous report</text></svg>"#,
        lx = left,
        tx = left + 14.0,
        lx2 = left + 70.0,
        tx2 = left + 84.0,
    ));
    svg
}

/// Returns the fill of a heat map cell: light rose to deep red as coverage grows.
pub(crate) fn heat_colour(coverage: f32) -> String {
    let share = f64::from(coverage.clamp(0.0, 1.0));
    let (from, to) = ([254.0, 226.0, 226.0], [153.0, 27.0, 27.0]);
    let channel = |index: usize| (from[index] + (to[index] - from[index]) * share).round() as u8;
    format!("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2))
}

/// Returns a work's chapters × sites heat map of chapter coverage.
pub(crate) fn heat_map(
    work: &WorkCoverage,
    site_names: &BTreeMap<&SiteId, &str>,
    max_rows: usize,
    max_columns: usize,
) -> String {
    let rows = &work.chapters[..work.chapters.len().min(max_rows)];
    let columns = &work.sites[..work.sites.len().min(max_columns)];
    let (label_width, cell_width, cell_height) = (220u32, 40u32, 22u32);
    let longest_name = columns
        .iter()
        .map(|site_id| site_names.get(site_id).copied().unwrap_or(site_id.as_str()))
        .map(|name| u32::try_from(truncate(name, 16).chars().count()).unwrap_or(16))
        .max()
        .unwrap_or(0);
    // Rotated 45°: a label of n characters rises about 6n px.
    let header_height = (longest_name * 6 + 24).clamp(40, 124);
    let column_count = u32::try_from(columns.len()).unwrap_or(0);
    let row_count = u32::try_from(rows.len()).unwrap_or(0);
    let width = (label_width + cell_width * column_count + 130).max(420);
    let height = header_height + cell_height * row_count + 44;
    let mut svg = svg_open(
        width,
        height,
        &format!("chapter coverage of {} by site", work.title),
        false,
    );
    for (column, site_id) in columns.iter().enumerate() {
        let x = label_width + cell_width * u32::try_from(column).unwrap_or(0) + cell_width / 2;
        let name = site_names.get(site_id).copied().unwrap_or(site_id.as_str());
        svg.push_str(&format!(
            r#"<text transform="translate({x},{y}) rotate(-45)" class="label">{name}</text>"#,
            y = header_height - 8,
            name = xml_escape(&truncate(name, 16)),
        ));
    }
    for (row_number, row) in rows.iter().enumerate() {
        let y = header_height + cell_height * u32::try_from(row_number).unwrap_or(0);
        let label = match row.index {
            Some(index) => format!("{index} · {}", row.title),
            None => row.title.clone(),
        };
        svg.push_str(&format!(
            r#"<text x="{x}" y="{ty}" text-anchor="end" class="label">{label}</text>"#,
            x = label_width - 8,
            ty = y + 14,
            label = xml_escape(&truncate(&label, 20)),
        ));
        for (column, cell) in row.cells.iter().take(columns.len()).enumerate() {
            let x = label_width + cell_width * u32::try_from(column).unwrap_or(0);
            let Some(coverage) = cell else {
                svg.push_str(&format!(
                    r##"<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{GRID}" opacity="0.45" stroke="#fff"/>"##,
                    w = cell_width,
                    h = cell_height,
                ));
                continue;
            };
            let percent = (coverage.clamp(0.0, 1.0) * 100.0).round();
            let site = columns
                .get(column)
                .and_then(|site_id| site_names.get(site_id))
                .copied()
                .unwrap_or("");
            svg.push_str(&format!(
                r##"<g><title>{title}</title><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="#fff"/><text x="{tx}" y="{ty}" text-anchor="middle" class="cell" fill="{ink}">{percent}</text></g>"##,
                title = xml_escape(&format!("{label} on {site}: {percent}% of the chapter copied")),
                w = cell_width,
                h = cell_height,
                fill = heat_colour(*coverage),
                tx = x + cell_width / 2,
                ty = y + 15,
                ink = if *coverage > 0.55 { "#ffffff" } else { "#7f1d1d" },
            ));
        }
    }
    let legend_y = header_height + cell_height * row_count + 16;
    svg.push_str(&format!(
        r##"<defs><linearGradient id="heat-{id}"><stop offset="0" stop-color="{low}"/><stop offset="1" stop-color="{high}"/></linearGradient></defs><text x="{lx}" y="{ty}" text-anchor="end" class="tick">chapter coverage</text><rect x="{label_width}" y="{legend_y}" width="160" height="10" fill="url(#heat-{id})"/><text x="{label_width}" y="{ny}" class="tick">0%</text><text x="{rx}" y="{ny}" text-anchor="end" class="tick">100%</text>"##,
        id = xml_escape(work.work_id.as_str()),
        low = heat_colour(0.0),
        high = heat_colour(1.0),
        lx = label_width - 8,
        ty = legend_y + 9,
        ny = legend_y + 24,
        rx = label_width + 160,
    ));
    svg.push_str("</svg>");
    svg
}

/// Returns a stacked bar of matches per review status.
pub(crate) fn status_bar(statuses: &[StatusCount]) -> String {
    let width = 1000u32;
    let total: u32 = statuses.iter().map(|status| status.count).sum();
    let mut svg = svg_open(width, 26, "matches per review status", true);
    if total == 0 {
        svg.push_str(&format!(
            r#"<rect x="0" y="0" width="{width}" height="26" rx="6" fill="{GRID}"/></svg>"#
        ));
        return svg;
    }
    let mut x = 0.0;
    for status in statuses.iter().filter(|status| status.count > 0) {
        let segment = f64::from(width) * f64::from(status.count) / f64::from(total);
        svg.push_str(&format!(
            r#"<rect x="{x:.1}" y="0" width="{segment:.1}" height="26" fill="{fill}"><title>{name}: {count}</title></rect>"#,
            fill = status_colour(status.status),
            name = status.status.as_str(),
            count = status.count,
        ));
        x += segment;
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            xml_escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn formats_thousands_and_truncates_by_characters() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(truncate("龙城传说第一部", 4), "龙城传…");
        assert_eq!(truncate("short", 10), "short");
    }

    #[test]
    fn axis_bounds_are_round() {
        assert_eq!(nice_axis(7), (8, 2));
        assert_eq!(nice_axis(1), (1, 1));
        assert_eq!(nice_axis(230), (300, 100));
    }

    #[test]
    fn heat_runs_from_light_to_dark() {
        assert_eq!(heat_colour(0.0), "#fee2e2");
        assert_eq!(heat_colour(1.0), "#991b1b");
        assert_eq!(heat_colour(7.0), "#991b1b");
    }
}

const DAILY_WIDTH: u32 = 720;
const DAILY_HEIGHT: u32 = 180;
const DAILY_MARGIN_BOTTOM: u32 = 24;
const DAILY_MARGIN_TOP: u32 = 16;

/// One bar: a day and its count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DailyCount {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Matches first seen that day.
    pub count: u64,
}

/// Returns an SVG bar chart of `days` (oldest first). Labels are dates and
/// numbers only, so the markup needs no escaping.
pub fn daily_bar_chart(days: &[DailyCount]) -> String {
    let mut svg = String::new();
    let max = days.iter().map(|day| day.count).max().unwrap_or(0).max(1);
    let slots = u32::try_from(days.len().max(1)).unwrap_or(u32::MAX);
    let slot = (DAILY_WIDTH / slots).max(1);
    let plot = DAILY_HEIGHT - DAILY_MARGIN_BOTTOM - DAILY_MARGIN_TOP;
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {DAILY_WIDTH} {DAILY_HEIGHT}" width="100%" role="img" aria-label="matches per day">"#
    );
    let _ = write!(
        svg,
        r##"<line x1="0" y1="{0}" x2="{DAILY_WIDTH}" y2="{0}" stroke="#94a3b8"/>"##,
        DAILY_HEIGHT - DAILY_MARGIN_BOTTOM
    );
    for (position, day) in days.iter().enumerate() {
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        let height = u32::try_from(day.count.saturating_mul(u64::from(plot)) / max).unwrap_or(plot);
        let x = position * slot + 1;
        let y = DAILY_HEIGHT - DAILY_MARGIN_BOTTOM - height;
        let width = slot.saturating_sub(2).max(1);
        let _ = write!(
            svg,
            r##"<rect x="{x}" y="{y}" width="{width}" height="{height}" fill="#dc2626"><title>{}: {}</title></rect>"##,
            day.day, day.count
        );
        if day.count > 0 {
            let _ = write!(
                svg,
                r##"<text x="{}" y="{}" font-size="10" text-anchor="middle" fill="#334155">{}</text>"##,
                x + width / 2,
                y.saturating_sub(3),
                day.count
            );
        }
        if position % 7 == 0 {
            let label = day.day.get(5..).unwrap_or(&day.day);
            let _ = write!(
                svg,
                r##"<text x="{x}" y="{}" font-size="10" fill="#64748b">{label}</text>"##,
                DAILY_HEIGHT - DAILY_MARGIN_BOTTOM + 14
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod daily_tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_highest_day() {
        let days = vec![
            DailyCount {
                day: "2026-01-01".into(),
                count: 0,
            },
            DailyCount {
                day: "2026-01-02".into(),
                count: 4,
            },
            DailyCount {
                day: "2026-01-03".into(),
                count: 2,
            },
        ];
        let svg = daily_bar_chart(&days);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains(r#"height="140""#), "{svg}");
        assert!(svg.contains(r#"height="70""#), "{svg}");
        assert!(daily_bar_chart(&[]).contains("</svg>"));
    }
}
