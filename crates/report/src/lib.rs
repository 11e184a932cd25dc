//! Infringement reports: what a publisher reads to decide where to send takedown
//! notices, and what it attaches to them as evidence.
//!
//! The crate is split so that the numbers can be trusted and tested apart from the
//! looks: [`build_report_data`] is a pure function from a [`ReportInput`] (matches,
//! works, chapters, sites) to a [`ReportData`]; renderers only format a
//! `ReportData` (HTML with inline SVG charts, CSV, JSON, and PDF printed from the
//! HTML by headless Chromium). IO is confined to [`load_report_input`], which pages
//! through the store ports, to [`render_pdf_with_chromium`], which runs a browser,
//! and to [`deliver_webhook`], which goes through a [`WebhookTransport`] the binary
//! provides, so this crate pulls in no HTTP client and no async runtime.
//!
//! Not here: the SMTP client (the binary implements [`MailTransport`]) and
//! storage of artifacts (the `ReportStore` port).
#![warn(missing_docs)]

mod alert;
mod analytics;
mod coverage;
mod csv_export;
mod data;
pub mod evidence;
mod handler;
mod html;
mod input;
mod mail;
mod pdf;
mod report_mail;
mod scheduler;
mod takedown;
#[cfg(any(test, feature = "testsuite"))]
pub mod testsuite;
mod titles;
pub mod warc;
mod webhook;

use copyhound_core::Result;
pub use copyhound_core::model::ReportFormat;

pub use alert::{AlertDecision, AlertPolicy, evaluate_alert};
pub use analytics::{build_report_data, copied_chars, is_infringing};
pub use csv_export::{CSV_COLUMNS, UTF8_BOM, render_csv};
pub use data::{
    ChapterCoverage, DayCount, MatchEvidence, NewSinceLast, REPORT_DATA_VERSION, ReportData,
    SiteSummary, StatusCount, Summary, WorkCoverage,
};
pub use handler::{ReportHandler, pending_report_mail, report_mail_state_id};
pub use html::{DailyCount, HtmlOptions, daily_bar_chart, render_html};
pub use input::{ChapterInfo, ReportInput, load_report_input};
pub use mail::{AlertContext, AlertEmail, MailAttachment, MailTransport, build_alert_email};
pub use pdf::{render_pdf, render_pdf_with_chromium};
pub use report_mail::{
    MAX_REPORT_ATTACHMENT_BYTES, ReportMailContext, build_report_email, build_test_email,
};
pub use scheduler::ReportScheduler;
pub use takedown::{
    TakedownNotice, TakedownOptions, TakedownTemplates, render_takedown_document,
    render_takedown_mbox, render_takedown_notices,
};
pub use titles::{CHAPTER_LOOKUPS_PER_WORK, Titles};
pub use webhook::{
    AlertMatch, DeliveryAttempt, DeliveryLog, DeliveryOutcome, RetryPolicy, SIGNATURE_HEADER,
    WebhookPayload, WebhookRequest, WebhookTransport, build_alert_payload, deliver_webhook,
    sign_webhook, signature_header_value, verify_signature,
};

/// Returns `data` rendered in `format` with default options.
///
/// HTML, CSV and JSON are pure formatting. PDF prints the HTML with the `chromium`
/// found on `PATH` (see [`render_pdf_with_chromium`]); it fails with
/// [`copyhound_core::ErrorKind::Config`] when no browser can be started.
pub fn render(data: &ReportData, format: ReportFormat) -> Result<Vec<u8>> {
    match format {
        ReportFormat::Html => Ok(render_html(data, &HtmlOptions::default())?.into_bytes()),
        ReportFormat::Csv => render_csv(data),
        ReportFormat::Json => render_json(data),
        ReportFormat::Pdf => render_pdf(
            data,
            &HtmlOptions::default(),
            std::path::Path::new("chromium"),
        ),
        ReportFormat::Warc => Err(copyhound_core::Error::invalid(
            "a WARC evidence package is built from the stored pages (warc::evidence_for), not from report data",
        )),
        ReportFormat::Takedown => render_takedown_document(data, &TakedownTemplates::builtin()?),
        ReportFormat::TakedownEmail => render_takedown_mbox(data, &TakedownTemplates::builtin()?),
    }
}

/// Returns `data` as pretty-printed JSON (the schema of [`ReportData`]).
pub fn render_json(data: &ReportData) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(data).map_err(|error| {
        copyhound_core::Error::with_source(
            copyhound_core::ErrorKind::Internal,
            "failed to serialize report",
            error,
        )
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}
