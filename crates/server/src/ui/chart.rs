//! An inline SVG bar chart, so the dashboard needs no chart library or script.

use std::fmt::Write;

use serde::Serialize;

/// One bar: a day and its count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DayCount {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Matches first seen that day.
    pub count: u64,
}

const WIDTH: u32 = 720;
const HEIGHT: u32 = 180;
const MARGIN_BOTTOM: u32 = 24;
const MARGIN_TOP: u32 = 16;

/// Returns an SVG bar chart of `days` (oldest first). Labels are dates and
/// numbers only, so the markup needs no escaping.
pub fn bar_chart_svg(days: &[DayCount]) -> String {
    let mut svg = String::new();
    let max = days.iter().map(|day| day.count).max().unwrap_or(0).max(1);
    let slots = u32::try_from(days.len().max(1)).unwrap_or(u32::MAX);
    let slot = (WIDTH / slots).max(1);
    let plot = HEIGHT - MARGIN_BOTTOM - MARGIN_TOP;
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" aria-label="matches per day">"#
    );
    let _ = write!(
        svg,
        r##"<line x1="0" y1="{0}" x2="{WIDTH}" y2="{0}" stroke="#94a3b8"/>"##,
        HEIGHT - MARGIN_BOTTOM
    );
    for (position, day) in days.iter().enumerate() {
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        let height = u32::try_from(day.count.saturating_mul(u64::from(plot)) / max).unwrap_or(plot);
        let x = position * slot + 1;
        let y = HEIGHT - MARGIN_BOTTOM - height;
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
                HEIGHT - MARGIN_BOTTOM + 14
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_highest_day() {
        let days = vec![
            DayCount {
                day: "2026-01-01".into(),
                count: 0,
            },
            DayCount {
                day: "2026-01-02".into(),
                count: 4,
            },
            DayCount {
                day: "2026-01-03".into(),
                count: 2,
            },
        ];
        let svg = bar_chart_svg(&days);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains(r#"height="140""#), "{svg}");
        assert!(svg.contains(r#"height="70""#), "{svg}");
        assert!(bar_chart_svg(&[]).contains("</svg>"));
    }
}
