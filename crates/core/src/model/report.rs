use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{PublisherId, ReportId, SiteId, WorkId};

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    /// One self-contained HTML file.
    Html,
    /// PDF.
    Pdf,
    /// CSV, one row per match.
    Csv,
    /// JSON.
    Json,
    /// The evidence package: the matched pages' captured responses as one
    /// WARC/1.1 file (`copyhound_report::warc`).
    Warc,
}

impl ReportFormat {
    /// Its name in the API and the file extension of its artifact.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Pdf => "pdf",
            Self::Csv => "csv",
            Self::Json => "json",
            Self::Warc => "warc",
        }
    }
}

/// What a report covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportScope {
    /// The publisher whose matches are reported.
    pub publisher_id: PublisherId,
    /// Only this work.
    pub work_id: Option<WorkId>,
    /// Only this site.
    pub site_id: Option<SiteId>,
    /// Only matches seen since.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub since: Option<Timestamp>,
}

/// Lifecycle of a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ReportStatus {
    /// Enqueued.
    Queued,
    /// Rendered; `artifact` names the stored file.
    Ready {
        /// Where the rendered file is stored.
        artifact: String,
        /// Its size.
        bytes: u64,
    },
    /// Rendering failed.
    Failed {
        /// Why.
        error: String,
    },
}

/// A requested or generated infringement report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Its id.
    pub id: ReportId,
    /// What it covers.
    pub scope: ReportScope,
    /// Output format.
    pub format: ReportFormat,
    /// Lifecycle state.
    pub status: ReportStatus,
    /// When it was requested.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When it was rendered.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_at: Option<Timestamp>,
}

/// Where alerts of one publisher go, and when the last one went: shared by
/// every scheduler process through the store, so each alert is sent once.
///
/// Writes are compare-and-swap on `version` (`ReportStore::swap_alert_state`):
/// a scheduler claims the alert (`claimed_by`, `claimed_until`), sends, then
/// records `last_sent_at`. A claim that outlives `claimed_until` (its
/// scheduler died mid-send) may be taken over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertState {
    /// `{publisher}/{channel digest}`.
    pub id: String,
    /// The publisher alerted.
    pub publisher_id: PublisherId,
    /// The channel, as configured (`webhook <url>` or `email <addresses>`).
    pub channel: String,
    /// Incremented by every write.
    pub version: u64,
    /// When the last alert went out: confirmed matches reviewed after it are new.
    pub last_sent_at: Option<Timestamp>,
    /// The scheduler sending now.
    pub claimed_by: Option<String>,
    /// When that claim lapses.
    pub claimed_until: Option<Timestamp>,
    /// How the last delivery ended (`delivered`, `rejected 400`, `gave up: ...`).
    pub last_outcome: Option<String>,
}

super::persisted::persisted_v1!(Report => "report", AlertState => "alert_state");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formats_name_is_its_serde_name() {
        for format in [
            ReportFormat::Html,
            ReportFormat::Pdf,
            ReportFormat::Csv,
            ReportFormat::Json,
            ReportFormat::Warc,
        ] {
            assert_eq!(serde_json::to_value(format).unwrap(), format.as_str());
        }
    }
}
