//! The CSV export: one row per match (every status), for spreadsheets and for
//! lawyers' exhibit lists. Columns are fixed and documented in [`CSV_COLUMNS`];
//! new columns are only ever appended.
//!
//! Quoting is RFC 4180 (the `csv` crate). Page URLs, titles and review notes come
//! from people we do not trust, so a text cell that a spreadsheet would run as a
//! formula (leading `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with
//! `'`.

use copyhound_core::{Error, ErrorKind, Result};

use crate::data::{MatchEvidence, ReportData};

/// The columns of the CSV export, in order, with what each holds.
pub const CSV_COLUMNS: [(&str, &str); 27] = [
    ("match_id", "match id"),
    (
        "status",
        "review status: new, confirmed, dismissed, licensed, taken_down",
    ),
    ("infringing", "true unless dismissed or licensed"),
    (
        "new_since_last_report",
        "infringing and first seen after the previous report",
    ),
    ("site_id", "site id"),
    ("site_name", "site display name"),
    ("host", "host of the page URL"),
    ("url", "URL of the copying page"),
    (
        "duplicate_pages",
        "other pages of the site with the same copy",
    ),
    ("work_id", "work id"),
    ("work_title", "work title"),
    ("chapter_id", "chapter id"),
    ("chapter_index", "1-based reading order (empty if unknown)"),
    ("chapter_title", "chapter title"),
    ("score", "confidence in [0, 1]"),
    (
        "chapter_coverage",
        "share of the chapter found on the page, [0, 1]",
    ),
    ("page_coverage", "share of the page that is copied, [0, 1]"),
    (
        "copied_chars",
        "copied characters (union of the spans' chapter ranges)",
    ),
    ("spans", "number of copied runs"),
    ("first_seen", "first detection, RFC 3339 UTC"),
    ("last_seen", "latest detection, RFC 3339 UTC"),
    (
        "captured_at",
        "capture time of the hashed page body, RFC 3339 UTC",
    ),
    ("page_body_sha256", "SHA-256 (hex) of the stored page body"),
    (
        "last_review_status",
        "status set by the latest review (empty if none)",
    ),
    ("last_review_by", "who made the latest review"),
    ("last_review_at", "when, RFC 3339 UTC"),
    ("last_review_note", "the reviewer's note"),
];

/// The UTF-8 byte-order mark every CSV export starts with.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Returns `text` safe to open in a spreadsheet: formula triggers are neutralized.
fn cell(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

fn timestamp(at: copyhound_core::model::Timestamp) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn row(evidence: &MatchEvidence) -> Vec<String> {
    let review = evidence.last_review.as_ref();
    vec![
        evidence.match_id.to_string(),
        evidence.status.as_str().to_string(),
        evidence.infringing.to_string(),
        evidence.new_since_last.to_string(),
        evidence.site_id.to_string(),
        cell(&evidence.site_name),
        cell(&evidence.host),
        cell(&evidence.url),
        evidence.duplicate_pages.to_string(),
        evidence.work_id.to_string(),
        cell(&evidence.work_title),
        evidence.chapter_id.to_string(),
        evidence
            .chapter_index
            .map(|index| index.to_string())
            .unwrap_or_default(),
        cell(&evidence.chapter_title),
        format!("{:.3}", evidence.score),
        format!("{:.3}", evidence.chapter_coverage),
        format!("{:.3}", evidence.page_coverage),
        evidence.copied_chars.to_string(),
        evidence.spans.len().to_string(),
        timestamp(evidence.first_seen),
        timestamp(evidence.last_seen),
        timestamp(evidence.captured_at),
        evidence.page_body_sha256.clone(),
        review
            .map(|review| review.status.as_str().to_string())
            .unwrap_or_default(),
        review.map(|review| cell(&review.by)).unwrap_or_default(),
        review
            .map(|review| timestamp(review.at))
            .unwrap_or_default(),
        review
            .and_then(|review| review.note.as_deref())
            .map(cell)
            .unwrap_or_default(),
    ]
}

fn csv_error(error: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::with_source(ErrorKind::Internal, "failed to write csv", error)
}

/// Returns the CSV export of `data`: a header row of [`CSV_COLUMNS`] names, then
/// one row per match in evidence order. UTF-8 with a byte-order mark
/// ([`UTF8_BOM`]): without it Excel reads the file in the system's code page
/// and shows Chinese titles as mojibake; other CSV readers skip it.
pub fn render_csv(data: &ReportData) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(256 * (data.evidence.len() + 1));
    bytes.extend_from_slice(UTF8_BOM);
    let mut writer = csv::Writer::from_writer(bytes);
    writer
        .write_record(CSV_COLUMNS.iter().map(|(name, _)| *name))
        .map_err(csv_error)?;
    for evidence in &data.evidence {
        let fields = row(evidence);
        debug_assert_eq!(fields.len(), CSV_COLUMNS.len());
        writer.write_record(&fields).map_err(csv_error)?;
    }
    writer
        .into_inner()
        .map_err(|error| csv_error(error.into_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_starts_with_a_utf8_byte_order_mark_once() {
        let data = crate::build_report_data(&crate::testsuite::sample_input());
        let bytes = render_csv(&data).unwrap();
        assert!(bytes.starts_with(b"\xEF\xBB\xBFmatch_id,status,"));
        assert!(!bytes[3..].starts_with(UTF8_BOM));
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.matches('\u{feff}').count(), 1);
    }

    #[test]
    fn formula_triggers_are_neutralized() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(cell("-1"), "'-1");
        assert_eq!(cell("https://a.example/"), "https://a.example/");
        assert_eq!(cell("龙城"), "龙城");
    }
}
