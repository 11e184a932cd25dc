use serde::{Deserialize, Serialize};

use super::{MatchStatus, Timestamp};
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
    /// Takedown notices, one per infringing site, each in Chinese and in
    /// English, as one plain-text document.
    Takedown,
    /// The same notices as e-mail drafts: one RFC 5322 message per site, in
    /// one mbox file (each message is what an `.eml` file holds).
    TakedownEmail,
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
            Self::Takedown => "takedown",
            Self::TakedownEmail => "takedown_email",
        }
    }

    /// The file extension of its artifact.
    pub fn file_extension(self) -> &'static str {
        match self {
            Self::Takedown => "txt",
            Self::TakedownEmail => "mbox",
            other => other.as_str(),
        }
    }

    /// The media type of its artifact, as served and as mailed.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Html => "text/html; charset=utf-8",
            Self::Pdf => "application/pdf",
            Self::Csv => "text/csv; charset=utf-8",
            Self::Json => "application/json",
            Self::Warc => "application/warc",
            Self::Takedown => "text/plain; charset=utf-8",
            Self::TakedownEmail => "application/mbox",
        }
    }

    /// Whether it is a takedown notice (confirmed matches only by default).
    pub fn is_notice(self) -> bool {
        matches!(self, Self::Takedown | Self::TakedownEmail)
    }
}

/// Which review statuses a report lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReviewScope {
    /// Confirmed by a reviewer (the default of takedown notices).
    Confirmed,
    /// Confirmed, and found but not reviewed yet (`new`).
    ConfirmedAndUnreviewed,
    /// Every status, dismissed and licensed included (the default of the
    /// other formats, and what reports stored before the field had).
    All,
}

impl ReviewScope {
    /// Its name in the API and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::ConfirmedAndUnreviewed => "confirmed_and_unreviewed",
            Self::All => "all",
        }
    }

    /// The statuses it lists; empty: all of them.
    pub fn statuses(self) -> Vec<MatchStatus> {
        match self {
            Self::Confirmed => vec![MatchStatus::Confirmed],
            Self::ConfirmedAndUnreviewed => vec![MatchStatus::Confirmed, MatchStatus::New],
            Self::All => Vec::new(),
        }
    }

    /// Whether a match in `status` is listed.
    pub fn includes(self, status: MatchStatus) -> bool {
        let statuses = self.statuses();
        statuses.is_empty() || statuses.contains(&status)
    }

    /// The scope a report of `format` gets when none is asked for.
    pub fn default_for(format: ReportFormat) -> Self {
        if format.is_notice() {
            Self::Confirmed
        } else {
            Self::All
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
    /// Only matches seen since (last seen at or after).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub since: Option<Timestamp>,
    /// Only matches seen before (first seen before): with `since`, the
    /// matches seen during a period. Absent in reports stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub until: Option<Timestamp>,
    /// Which review statuses are listed; absent: the format's default
    /// ([`ReviewScope::default_for`]), which is also what reports stored
    /// before the field decode to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewScope>,
}

impl ReportScope {
    /// Returns the scope of every match of `publisher_id`.
    pub fn of_publisher(publisher_id: PublisherId) -> Self {
        Self {
            publisher_id,
            work_id: None,
            site_id: None,
            since: None,
            until: None,
            review: None,
        }
    }

    /// The review scope of a report in `format`: the one asked for, or the
    /// format's default.
    pub fn review_for(&self, format: ReportFormat) -> ReviewScope {
        self.review.unwrap_or(ReviewScope::default_for(format))
    }
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
            ReportFormat::Takedown,
            ReportFormat::TakedownEmail,
        ] {
            assert_eq!(serde_json::to_value(format).unwrap(), format.as_str());
        }
        for review in [
            ReviewScope::Confirmed,
            ReviewScope::ConfirmedAndUnreviewed,
            ReviewScope::All,
        ] {
            assert_eq!(serde_json::to_value(review).unwrap(), review.as_str());
        }
    }

    /// A report stored before the review and period fields decodes, and
    /// keeps listing every status; a notice lists confirmed matches only.
    #[test]
    fn reports_stored_before_the_scope_fields_still_decode() {
        use crate::model::Persisted;
        let stored = serde_json::json!({
            "id": "r_0001",
            "scope": {"publisher_id": "P01", "work_id": null, "site_id": null, "since": null},
            "format": "csv",
            "status": {"state": "queued"},
            "created_at": "2026-01-05T06:00:00Z",
            "finished_at": null,
            "schema_version": 1,
        });
        let report = Report::from_document(stored).unwrap();
        assert_eq!(report.scope.review, None);
        assert_eq!(report.scope.until, None);
        assert_eq!(report.scope.review_for(report.format), ReviewScope::All);
        assert_eq!(
            report.scope.review_for(ReportFormat::Takedown),
            ReviewScope::Confirmed
        );
        let written = report.to_document().unwrap();
        assert!(written["scope"].get("review").is_none(), "{written}");
        assert!(ReviewScope::ConfirmedAndUnreviewed.includes(MatchStatus::New));
        assert!(!ReviewScope::Confirmed.includes(MatchStatus::New));
        assert!(ReviewScope::All.includes(MatchStatus::Dismissed));
    }
}
