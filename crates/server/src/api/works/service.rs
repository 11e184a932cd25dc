//! The HTTP side of registration: request bodies into intake's
//! [`WorkMeta`], intake's answer into the work detail the API serves. What a
//! registration checks and writes is `copyhound_intake::works`.

use copyhound_core::Result;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{Chapter, FingerprintStatus, Work};
use copyhound_intake::works::{self as intake, NewChapter, Registrant};
pub use copyhound_intake::works::{MAX_LICENSED_HOSTS, WorkMeta, normalize_hosts};
use serde::Serialize;
use utoipa::ToSchema;

use super::{ImportQuery, RegisterWork};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::error::{ApiResult, parse_id};

/// Returns the work id a registration asks for, if any.
fn requested_id(raw: Option<&str>) -> Result<Option<WorkId>> {
    raw.map(|raw| parse_id::<WorkId>("id", raw))
        .transpose()
        .map_err(|error| error.0)
}

/// Returns the metadata of a JSON registration.
pub fn meta_of_request(body: &RegisterWork) -> Result<WorkMeta> {
    WorkMeta::new(
        requested_id(body.id.as_deref())?,
        &body.title,
        &body.author,
        body.kind,
        body.language,
        Some(&body.licensed_hosts),
    )
}

/// Returns the metadata of a file import.
pub fn meta_of_query(query: &ImportQuery, title: &str, author: &str) -> Result<WorkMeta> {
    WorkMeta::new(
        requested_id(query.id.as_deref())?,
        title,
        author,
        query.kind.unwrap_or(copyhound_core::model::WorkKind::Novel),
        query.language,
        Some(&[]),
    )
}

/// Fingerprint progress of a work's chapters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct FingerprintProgress {
    /// Waiting for the worker.
    pub pending: u64,
    /// Fingerprinted and indexed.
    pub indexed: u64,
    /// Failed (retried or dead-lettered by the queue).
    pub failed: u64,
}

/// A chapter without its text.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ChapterSummary {
    /// Id.
    pub id: ChapterId,
    /// Reading order.
    pub index: u32,
    /// Title.
    pub title: String,
    /// Length, characters.
    pub chars: u32,
    /// Pipeline state.
    pub fingerprint_status: FingerprintStatus,
}

/// A work with its chapters and fingerprint progress.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct WorkDetail {
    /// The work.
    #[serde(flatten)]
    pub work: Work,
    /// Chapter counts by fingerprint state.
    pub fingerprint: FingerprintProgress,
    /// Chapters in reading order.
    pub chapters: Vec<ChapterSummary>,
    /// Oddities found while parsing an upload.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Encoding a TXT upload was decoded with (TXT imports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub encoding: Option<&'static str>,
}

impl WorkDetail {
    fn new(work: Work, chapters: &[Chapter], warnings: Vec<String>) -> Self {
        let mut fingerprint = FingerprintProgress::default();
        for chapter in chapters {
            match chapter.fingerprint_status {
                FingerprintStatus::Pending => fingerprint.pending += 1,
                FingerprintStatus::Indexed { .. } => fingerprint.indexed += 1,
                FingerprintStatus::Failed { .. } => fingerprint.failed += 1,
            }
        }
        let chapters = chapters
            .iter()
            .map(|chapter| ChapterSummary {
                id: chapter.id.clone(),
                index: chapter.index,
                title: chapter.title.clone(),
                chars: chapter.chars,
                fingerprint_status: chapter.fingerprint_status.clone(),
            })
            .collect();
        Self {
            work,
            fingerprint,
            chapters,
            warnings,
            encoding: None,
        }
    }
}

/// Returns the detail of a work of `publisher_id` (`NotFound` for other tenants).
pub async fn load_work_detail(
    state: &AppState,
    publisher_id: &PublisherId,
    work_id: &WorkId,
) -> Result<WorkDetail> {
    let work = state.ports.works.get_work(publisher_id, work_id).await?;
    let chapters = state.ports.works.list_chapters(work_id).await?;
    Ok(WorkDetail::new(work, &chapters, Vec::new()))
}

/// Returns the registrant a publisher key stands for.
pub fn registrant(caller: &PublisherCaller) -> Registrant<'_> {
    Registrant {
        publisher_id: &caller.publisher_id,
        by: caller.key_id.as_str(),
    }
}

/// Registers a work through intake and answers its detail.
pub async fn register_work(
    state: &AppState,
    caller: &PublisherCaller,
    meta: WorkMeta,
    chapters: Vec<NewChapter>,
    existing: Option<Work>,
    warnings: Vec<String>,
) -> ApiResult<WorkDetail> {
    let registered =
        intake::register_work(&state.ports, registrant(caller), meta, chapters, existing).await?;
    Ok(WorkDetail::new(
        registered.work,
        &registered.chapters,
        warnings,
    ))
}
