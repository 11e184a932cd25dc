use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{ChapterId, PublisherId, WorkId};

/// Whether a work is a novel (chapters in reading order) or news (one article per chapter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WorkKind {
    /// A novel or story collection split into chapters.
    Novel,
    /// News articles; each chapter is one article.
    News,
}

/// The main language of a work; it picks the segmentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// Chinese (simplified or traditional).
    Zh,
    /// English or other Latin-script text.
    En,
}

/// A registered work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Work {
    /// Its id.
    pub id: WorkId,
    /// The owning publisher.
    pub publisher_id: PublisherId,
    /// Title as registered.
    pub title: String,
    /// Author as registered.
    pub author: String,
    /// Novel or news.
    pub kind: WorkKind,
    /// Main language.
    pub language: Language,
    /// Hosts licensed to carry the work: their copies are recorded as licensed.
    #[serde(default)]
    pub licensed_hosts: Vec<String>,
    /// When it was registered.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When its chapters last changed.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: Timestamp,
    /// When chapters were last added (a release): it starts a burst of
    /// revisits of the sites that carry the work (`crawler::watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub released_at: Option<Timestamp>,
    /// When the publisher releases chapters (5-field cron, UTC), if on a
    /// timetable: each slot starts a burst as a release does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_schedule: Option<String>,
}

/// Where a chapter is in the fingerprint pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum FingerprintStatus {
    /// Waiting for the fingerprint task.
    Pending,
    /// Fingerprinted and indexed under `version`.
    Indexed {
        /// The fingerprint version.
        version: u32,
    },
    /// Fingerprinting failed; the task will be retried or dead-lettered.
    Failed {
        /// Why.
        error: String,
    },
}

/// One chapter of a work (one article of a news work).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Chapter {
    /// The work it belongs to.
    pub work_id: WorkId,
    /// Its id, unique within the work.
    pub id: ChapterId,
    /// 1-based reading order.
    pub index: u32,
    /// Title as registered.
    pub title: String,
    /// The body text, paragraphs separated by newlines.
    pub text: String,
    /// Length of `text` in characters.
    pub chars: u32,
    /// SHA-256 of `text`; a changed hash means re-fingerprinting.
    pub content_sha256: String,
    /// Fingerprint pipeline state.
    pub fingerprint_status: FingerprintStatus,
}

impl Chapter {
    /// Returns a pending chapter with `chars` and `content_sha256` computed from `text`.
    pub fn new(work_id: WorkId, id: ChapterId, index: u32, title: String, text: String) -> Self {
        let chars = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
        let content_sha256 = crate::ids::sha256_hex(text.as_bytes());
        Self {
            work_id,
            id,
            index,
            title,
            text,
            chars,
            content_sha256,
            fingerprint_status: FingerprintStatus::Pending,
        }
    }
}

super::persisted::persisted_v1!(Work => "work", Chapter => "chapter");
