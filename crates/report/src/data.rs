//! The computed report: every figure a renderer shows, and nothing it has to
//! compute. It is also the JSON format, so field names are part of the API: add
//! fields, never rename them, and bump [`REPORT_DATA_VERSION`] on a breaking change.

use chrono::NaiveDate;
use copyhound_core::ids::{ChapterId, MatchId, SiteId, WorkId};
use copyhound_core::model::{
    CopiedSpan, EvidenceExcerpt, MatchStatus, PublisherProfile, Reading, Recipients, ReportScope,
    Review, Timestamp,
};
use serde::Serialize;

/// Schema version of [`ReportData`] (the `version` field of the JSON output).
pub const REPORT_DATA_VERSION: u32 = 1;

/// Everything a report shows, computed by [`crate::build_report_data`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportData {
    /// Schema version, [`REPORT_DATA_VERSION`].
    pub version: u32,
    /// Display name of the publisher.
    pub publisher: String,
    /// The rights holder's details (left out when none are set).
    #[serde(skip_serializing_if = "PublisherProfile::is_empty")]
    pub profile: PublisherProfile,
    /// When the report was generated.
    pub generated_at: Timestamp,
    /// What the report covers.
    pub scope: ReportScope,
    /// When the previous report of the same scope was generated, if any.
    pub previous_report_at: Option<Timestamp>,
    /// Headline figures.
    pub summary: Summary,
    /// Infringing sites, most copied characters first.
    pub sites: Vec<SiteSummary>,
    /// Copied works, most copied characters first, with their heat maps.
    pub works: Vec<WorkCoverage>,
    /// Detections per day (UTC) of first sight; days without detections are left out.
    pub timeline: Vec<DayCount>,
    /// What appeared since the previous report.
    pub new_since_last: NewSinceLast,
    /// Matches per review status, every status listed (dismissed ones included).
    pub statuses: Vec<StatusCount>,
    /// One record per match (infringing or not), in site rank order.
    pub evidence: Vec<MatchEvidence>,
}

/// Headline figures. "Infringing" excludes dismissed and licensed matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Matches in scope, any status.
    pub total_matches: u32,
    /// Matches neither dismissed nor licensed.
    pub infringing_matches: u32,
    /// Sites with at least one infringing match.
    pub sites: u32,
    /// Distinct pages carrying infringing copies (duplicates of a page included).
    pub pages: u32,
    /// Distinct works copied.
    pub works: u32,
    /// Distinct chapters copied.
    pub chapters: u32,
    /// Copied characters: the union of copied chapter ranges, summed over matches.
    pub copied_chars: u64,
    /// Infringing matches first seen after the previous report.
    pub new_matches: u32,
}

/// One infringing site and how much it copied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteSummary {
    /// 1-based rank by copied characters.
    pub rank: u32,
    /// The site.
    pub site_id: SiteId,
    /// Display name (the host when the site record is missing).
    pub name: String,
    /// Host of the site's first seed, or of its first matched page.
    pub host: String,
    /// Copied characters over its infringing matches.
    pub copied_chars: u64,
    /// Distinct pages carrying copies (duplicates included).
    pub pages: u32,
    /// Distinct chapters copied.
    pub chapters: u32,
    /// Distinct works copied.
    pub works: u32,
    /// Infringing matches.
    pub matches: u32,
    /// Infringing matches first seen after the previous report.
    pub new_matches: u32,
    /// Confirmed matches (the ones a takedown notice lists by default).
    pub confirmed_matches: u32,
    /// Earliest first sight.
    pub first_seen: Timestamp,
    /// Latest sight.
    pub last_seen: Timestamp,
    /// Who to notify (registrar, hosting network, CDN), when the report
    /// looked them up (takedown formats with `[rdap]` configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipients: Option<Recipients>,
}

/// One copied work: its chapters × sites coverage matrix (the heat map).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkCoverage {
    /// The work.
    pub work_id: WorkId,
    /// Title (the id when the work record is missing).
    pub title: String,
    /// Author as registered.
    pub author: String,
    /// Chapters registered for the work (as known to the input).
    pub chapters_registered: u32,
    /// Chapters with at least one infringing copy.
    pub chapters_copied: u32,
    /// Copied characters over the work's infringing matches.
    pub copied_chars: u64,
    /// Columns of the matrix: sites that copied the work, most copied first.
    pub sites: Vec<SiteId>,
    /// Rows of the matrix: copied chapters in reading order.
    pub chapters: Vec<ChapterCoverage>,
}

/// One row of a work's heat map.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChapterCoverage {
    /// The chapter.
    pub chapter_id: ChapterId,
    /// 1-based reading order (`None` when the chapter record is missing).
    pub index: Option<u32>,
    /// Title (the id when the chapter record is missing).
    pub title: String,
    /// Highest chapter coverage over all sites.
    pub max_coverage: f32,
    /// Sites carrying a copy.
    pub sites_copying: u32,
    /// Highest chapter coverage per site, aligned with [`WorkCoverage::sites`].
    pub cells: Vec<Option<f32>>,
}

/// Detections first seen on one day (UTC).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DayCount {
    /// The day.
    pub day: NaiveDate,
    /// Infringing matches first seen that day.
    pub detections: u32,
    /// Of those, the ones first seen after the previous report.
    pub new: u32,
}

/// What appeared since the previous report (everything when there was none).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NewSinceLast {
    /// The previous report's time.
    pub since: Option<Timestamp>,
    /// Infringing matches first seen after it.
    pub matches: u32,
    /// Their ids, in evidence order.
    pub match_ids: Vec<MatchId>,
    /// Sites whose first infringing match came after it.
    pub new_sites: Vec<SiteId>,
    /// Works first copied after it.
    pub new_works: Vec<WorkId>,
    /// Chapters first copied after it.
    pub new_chapters: u32,
}

/// Matches in one review status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatusCount {
    /// The status.
    pub status: MatchStatus,
    /// Matches in it.
    pub count: u32,
}

/// The evidence of one match: what a takedown notice or a court exhibit cites.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchEvidence {
    /// The match.
    pub match_id: MatchId,
    /// Review status.
    pub status: MatchStatus,
    /// Neither dismissed nor licensed.
    pub infringing: bool,
    /// Infringing and first seen after the previous report.
    pub new_since_last: bool,
    /// The copying site.
    pub site_id: SiteId,
    /// Its display name.
    pub site_name: String,
    /// The copying page's URL.
    pub url: String,
    /// Host of the URL.
    pub host: String,
    /// Other pages of the site carrying the same copy.
    pub duplicate_pages: u32,
    /// The copied work.
    pub work_id: WorkId,
    /// Its title.
    pub work_title: String,
    /// The copied chapter.
    pub chapter_id: ChapterId,
    /// Its reading order, when known.
    pub chapter_index: Option<u32>,
    /// Its title.
    pub chapter_title: String,
    /// Confidence in [0, 1].
    pub score: f32,
    /// Share of the chapter found on the page.
    pub chapter_coverage: f32,
    /// Share of the page that is copied.
    pub page_coverage: f32,
    /// Copied characters of the chapter (union of the spans' chapter ranges).
    pub copied_chars: u64,
    /// First detection.
    pub first_seen: Timestamp,
    /// Latest detection.
    pub last_seen: Timestamp,
    /// When the page body that `page_body_sha256` hashes was captured. The match
    /// store refreshes evidence, hash and `last_seen` together, so this is the
    /// latest detection.
    pub captured_at: Timestamp,
    /// SHA-256 (hex) of the stored page body the evidence was taken from.
    pub page_body_sha256: String,
    /// How the page's text was read from that body (rendered, decoded
    /// through the site's web fonts); plain when read as served.
    #[serde(skip_serializing_if = "Reading::is_plain")]
    pub page_reading: Reading,
    /// Copied runs, in chapter order.
    pub spans: Vec<CopiedSpan>,
    /// Side-by-side excerpts of the longest runs.
    pub excerpts: Vec<EvidenceExcerpt>,
    /// The latest review decision, if any.
    pub last_review: Option<Review>,
}
