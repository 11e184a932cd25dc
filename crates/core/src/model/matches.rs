use serde::{Deserialize, Serialize};

use super::{Reading, Timestamp};
use crate::ids::{ChapterId, MatchId, PageId, PublisherId, SiteId, WorkId};

/// Review state of a match. New matches await a human; the other states are decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// Found, not reviewed.
    New,
    /// A reviewer confirmed the infringement.
    Confirmed,
    /// A reviewer judged it not an infringement.
    Dismissed,
    /// The site is licensed to carry the work.
    Licensed,
    /// The page was taken down.
    TakenDown,
}

impl MatchStatus {
    /// Every status, in display order.
    pub const ALL: [MatchStatus; 5] = [
        MatchStatus::New,
        MatchStatus::Confirmed,
        MatchStatus::Dismissed,
        MatchStatus::Licensed,
        MatchStatus::TakenDown,
    ];

    /// Parses a status name (`new`, `confirmed`, `dismissed`, `licensed`,
    /// `taken_down`); the error lists the names.
    pub fn parse(raw: &str) -> crate::Result<Self> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == raw)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|status| status.as_str()).collect();
                crate::Error::invalid(format!(
                    "unknown status `{raw}`; use one of {}",
                    names.join(", ")
                ))
            })
    }

    /// Returns the stable name used in the API and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::New => "new",
            MatchStatus::Confirmed => "confirmed",
            MatchStatus::Dismissed => "dismissed",
            MatchStatus::Licensed => "licensed",
            MatchStatus::TakenDown => "taken_down",
        }
    }
}

/// A copied run, defined with the verifier that finds it.
pub use copyhound_fingerprint::CopiedSpan;

/// Side-by-side excerpts of one copied span, for reviewers and takedown notices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EvidenceExcerpt {
    /// The span the excerpts show.
    pub span: CopiedSpan,
    /// Excerpt of the registered chapter.
    pub chapter_excerpt: String,
    /// Excerpt of the page.
    pub page_excerpt: String,
}

/// One review decision, kept as an audit trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The status set.
    pub status: MatchStatus,
    /// Who decided (API key id or user name).
    pub by: String,
    /// When.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: Timestamp,
    /// Free-text note.
    pub note: Option<String>,
}

/// A page found to copy a registered chapter: the unit of evidence and review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// Derived from page + work + chapter + fingerprint version.
    pub id: MatchId,
    /// The publisher owning the work.
    pub publisher_id: PublisherId,
    /// The copying page.
    pub page_id: PageId,
    /// The page's URL, denormalized for listings.
    pub page_url: String,
    /// The page's site.
    pub site_id: SiteId,
    /// The copied work.
    pub work_id: WorkId,
    /// The copied chapter.
    pub chapter_id: ChapterId,
    /// The fingerprint version that found it.
    pub fingerprint_version: u32,
    /// Confidence in [0, 1].
    pub score: f32,
    /// Share of the chapter found on the page.
    pub chapter_coverage: f32,
    /// Share of the page that is copied.
    pub page_coverage: f32,
    /// Copied regions: the verifier's runs, joined where the text between two
    /// runs was rewritten on the page (both sides advance alike).
    pub spans: Vec<CopiedSpan>,
    /// Side-by-side excerpts of the longest runs.
    pub evidence: Vec<EvidenceExcerpt>,
    /// SHA-256 of the page body the evidence was taken from.
    pub page_body_sha256: String,
    /// How the page's text was read from that body, when it was not the
    /// markup as served (rendered, decoded through the site's web fonts):
    /// evidence says so, as a reader of the raw page sees other characters.
    #[serde(default, skip_serializing_if = "Reading::is_plain")]
    pub page_reading: Reading,
    /// Pages of the same site carrying the same copy (other URLs).
    #[serde(default)]
    pub duplicate_page_ids: Vec<PageId>,
    /// Review state.
    pub status: MatchStatus,
    /// Review history, oldest first.
    #[serde(default)]
    pub reviews: Vec<Review>,
    /// First detection.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub first_seen: Timestamp,
    /// Latest detection.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub last_seen: Timestamp,
}

super::persisted::persisted_v1!(Match => "match");
