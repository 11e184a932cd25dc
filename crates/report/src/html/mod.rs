//! The HTML report: one self-contained file (inline CSS, inline SVG, no scripts,
//! no network) that reads well on screen and prints as a clean document. Layout
//! lives in `templates/report.html` and `templates/report.css`, rendered by
//! minijinja with HTML auto-escaping: data never reaches the page unescaped, and
//! the only values marked safe are the SVG charts built (and escaped) in
//! [`charts`].

mod charts;
mod highlight;
mod view;

use copyhound_core::{Error, ErrorKind, Result};
use minijinja::{Environment, UndefinedBehavior};

use crate::data::ReportData;

pub use charts::{DailyCount, daily_bar_chart};
pub(crate) use charts::{thousands, xml_escape};

/// The built-in page template.
const REPORT_TEMPLATE: &str = include_str!("../../templates/report.html");
/// The built-in stylesheet, inlined into the page.
const REPORT_CSS: &str = include_str!("../../templates/report.css");

/// Limits that keep a very large report readable and printable; the CSV and the
/// JSON always carry everything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtmlOptions {
    /// Sites drawn in the ranked bar chart (the table lists every site).
    pub max_sites_in_chart: usize,
    /// Chapter rows per work heat map.
    pub max_heatmap_rows: usize,
    /// Site columns per work heat map.
    pub max_heatmap_columns: usize,
    /// Works given a heat map, most copied first.
    pub max_works: usize,
    /// Infringing matches shown with full evidence and side-by-side excerpts.
    pub max_detailed_evidence: usize,
    /// Matches listed in the closing index table.
    pub max_listed_matches: usize,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        Self {
            max_sites_in_chart: 15,
            max_heatmap_rows: 60,
            max_heatmap_columns: 20,
            max_works: 20,
            max_detailed_evidence: 300,
            max_listed_matches: 2000,
        }
    }
}

/// Returns the report as one self-contained HTML document.
pub fn render_html(data: &ReportData, options: &HtmlOptions) -> Result<String> {
    let mut environment = Environment::new();
    environment.set_undefined_behavior(UndefinedBehavior::Strict);
    environment
        .add_template("report.html", REPORT_TEMPLATE)
        .map_err(|error| {
            Error::with_source(
                ErrorKind::Internal,
                "built-in report template does not parse",
                error,
            )
        })?;
    let template = environment.get_template("report.html").map_err(|error| {
        Error::with_source(
            ErrorKind::Internal,
            "built-in report template is missing",
            error,
        )
    })?;
    let page = view::build(data, options, REPORT_CSS);
    template
        .render(minijinja::Value::from(minijinja::value::Serde(&page)))
        .map_err(|error| {
            Error::with_source(
                ErrorKind::Internal,
                "failed to render the html report",
                error,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build_report_data;
    use crate::testsuite::sample_input;

    fn sample_html() -> String {
        render_html(&build_report_data(&sample_input()), &HtmlOptions::default()).unwrap()
    }

    #[test]
    fn is_one_self_contained_document() {
        let html = sample_html();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<style>"));
        assert!(html.contains("@media print"));
        assert!(
            !html.contains("<script"),
            "no scripts, and hostile text must be escaped"
        );
        assert!(
            !html.contains("http://") || !html.contains("src=\"http"),
            "no remote resources"
        );
        assert!(!html.contains("<link"), "no external stylesheets");
        assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    }

    #[test]
    fn hostile_page_text_is_escaped() {
        let html = sample_html();
        assert!(
            html.contains("&lt;script&gt;alert("),
            "hostile excerpt appears escaped"
        );
        assert!(
            html.contains("River &amp; &lt;Stone&gt;"),
            "work title escaped"
        );
        assert!(
            html.contains("第二章 &lt;云涌&gt;"),
            "chapter title escaped"
        );
    }

    #[test]
    fn shows_charts_cards_and_highlighted_excerpts() {
        let html = sample_html();
        assert!(
            html.matches("<svg").count() >= 5,
            "status bar, sites chart, timeline, two heat maps"
        );
        assert!(html.contains("<mark>"));
        assert!(html.contains("Alpha 小说网"));
        assert!(
            html.contains(&"0".repeat(63)),
            "evidence hashes are printed"
        );
        assert!(html.contains("class=\"card\""));
    }
}
