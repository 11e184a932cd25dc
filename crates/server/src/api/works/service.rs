//! The registration steps shared by every upload format: validate, store the work
//! and chapters, enqueue fingerprinting, answer with the work detail.

use std::collections::BTreeSet;

use chrono::Utc;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{Chapter, FingerprintStatus, Language, Task, TaskKind, Work, WorkKind};
use copyhound_core::{Error, ErrorKind, Result};
use serde::Serialize;
use utoipa::ToSchema;

use super::{ArticleInput, ArticlesAdded, ImportQuery, RegisterWork, owner_key};
use crate::AppState;
use crate::api::required_text;
use crate::auth::PublisherCaller;
use crate::error::{ApiResult, parse_id};
use crate::register::limits::{
    MAX_AUTHOR_CHARS, MAX_CHAPTER_CHARS, MAX_CHAPTER_TITLE_CHARS, MAX_HOST_INPUT_BYTES,
    MAX_TEXT_CHARS, MAX_TITLE_CHARS,
};
use crate::register::{ChapterDraft, normalize_paragraphs};

/// Most chapters of one work.
pub const MAX_CHAPTERS: usize = crate::register::limits::MAX_CHAPTERS;
/// Most licensed hosts of one work.
pub const MAX_LICENSED_HOSTS: usize = 500;

/// Validated work metadata of a registration.
#[derive(Clone, Debug)]
pub struct WorkMeta {
    /// Requested id.
    pub id: Option<WorkId>,
    /// Title.
    pub title: String,
    /// Author.
    pub author: String,
    /// Novel or news.
    pub kind: WorkKind,
    /// Language; guessed from the chapters when `None`.
    pub language: Option<Language>,
    /// Licensed hosts, normalized.
    pub licensed_hosts: Vec<String>,
}

impl WorkMeta {
    /// Returns the metadata of a JSON registration.
    pub fn from_request(body: &RegisterWork) -> Result<Self> {
        let id = body
            .id
            .as_deref()
            .map(|raw| parse_id::<WorkId>("id", raw))
            .transpose()
            .map_err(|error| error.0)?;
        Ok(Self {
            id,
            title: required_text("title", &body.title, MAX_TITLE_CHARS)?,
            author: optional_text("author", &body.author, MAX_AUTHOR_CHARS)?,
            kind: body.kind,
            language: body.language,
            licensed_hosts: normalize_hosts(&body.licensed_hosts)?,
        })
    }

    /// Returns the metadata of a file import.
    pub fn from_query(query: &ImportQuery, title: String, author: String) -> Result<Self> {
        let id = query
            .id
            .as_deref()
            .map(|raw| parse_id::<WorkId>("id", raw))
            .transpose()
            .map_err(|error| error.0)?;
        Ok(Self {
            id,
            title: required_text("title", &title, MAX_TITLE_CHARS)?,
            author: optional_text("author", &author, MAX_AUTHOR_CHARS)?,
            kind: query.kind.unwrap_or(WorkKind::Novel),
            language: query.language,
            licensed_hosts: Vec::new(),
        })
    }
}

/// Returns `text` trimmed (possibly empty), refusing more than `max_chars` characters.
fn optional_text(field: &str, text: &str, max_chars: usize) -> Result<String> {
    let trimmed = text.trim();
    if text.chars().count() > max_chars {
        return Err(Error::invalid(format!(
            "`{field}` is longer than {max_chars} characters"
        )));
    }
    Ok(trimmed.to_string())
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
    let work = state.works.get_work(publisher_id, work_id).await?;
    let chapters = state.works.list_chapters(work_id).await?;
    Ok(WorkDetail::new(work, &chapters, Vec::new()))
}

/// Returns hosts lowercased, URLs reduced to their host, duplicates removed; refuses non-hosts.
pub fn normalize_hosts(hosts: &[String]) -> Result<Vec<String>> {
    if hosts.len() > MAX_LICENSED_HOSTS {
        return Err(Error::invalid(format!(
            "more than {MAX_LICENSED_HOSTS} licensed hosts"
        )));
    }
    let mut out = BTreeSet::new();
    for (position, raw) in hosts.iter().enumerate() {
        if raw.len() > MAX_HOST_INPUT_BYTES {
            return Err(Error::invalid(format!(
                "licensed host #{} is longer than {MAX_HOST_INPUT_BYTES} bytes",
                position + 1
            )));
        }
        let text = raw.trim().to_lowercase();
        let candidate = if text.contains("://") {
            text.clone()
        } else {
            format!("http://{text}/")
        };
        let host = url::Url::parse(&candidate)
            .ok()
            .and_then(|url| url.host_str().map(str::to_string));
        match host {
            Some(host) if !text.is_empty() && (text.contains("://") || host == text) => {
                out.insert(host);
            }
            _ => {
                return Err(Error::invalid(format!(
                    "licensed host `{raw}` is not a host name"
                )));
            }
        }
    }
    Ok(out.into_iter().collect())
}

fn guess_language(chapters: &[Chapter]) -> Language {
    let sample: String = chapters
        .iter()
        .take(3)
        .flat_map(|chapter| chapter.text.chars().take(2000))
        .collect();
    let total = sample.chars().filter(|c| !c.is_whitespace()).count().max(1);
    let cjk = sample
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    if cjk * 10 >= total {
        Language::Zh
    } else {
        Language::En
    }
}

/// Returns the chapter id of position `index` (1-based) when the upload names none.
pub fn positional_chapter_id(index: u32) -> ChapterId {
    format!("c_{index:04}")
        .parse()
        .expect("c_ and digits form a valid id")
}

fn build_chapters(
    work_id: &WorkId,
    drafts: Vec<(Option<ChapterId>, ChapterDraft)>,
    first_index: u32,
) -> Result<Vec<Chapter>> {
    if drafts.len() > MAX_CHAPTERS {
        return Err(Error::invalid(format!("more than {MAX_CHAPTERS} chapters")));
    }
    let mut seen = BTreeSet::new();
    let mut chapters = Vec::with_capacity(drafts.len());
    let mut total_chars = 0usize;
    for (offset, (id, draft)) in drafts.into_iter().enumerate() {
        let index = first_index + u32::try_from(offset).expect("chapter count is capped");
        let id = id.unwrap_or_else(|| positional_chapter_id(index));
        if !seen.insert(id.clone()) {
            return Err(Error::invalid(format!("chapter id {id} appears twice")));
        }
        let text = normalize_paragraphs(&draft.text);
        if text.is_empty() {
            return Err(Error::invalid(format!(
                "chapter {index} ({id}) has no text"
            )));
        }
        let chars = text.chars().count();
        if chars > MAX_CHAPTER_CHARS {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "chapter {index} ({id}) has more than {MAX_CHAPTER_CHARS} characters (limit per chapter)"
                ),
            ));
        }
        total_chars += chars;
        if total_chars > MAX_TEXT_CHARS {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("the chapters have more than {MAX_TEXT_CHARS} characters (limit per work)"),
            ));
        }
        let title = match draft.title.trim() {
            "" => format!("Chapter {index}"),
            title if title.chars().count() > MAX_CHAPTER_TITLE_CHARS => {
                return Err(Error::invalid(format!(
                    "chapter {index} title is longer than {MAX_CHAPTER_TITLE_CHARS} characters"
                )));
            }
            title => title.to_string(),
        };
        chapters.push(Chapter::new(work_id.clone(), id, index, title, text));
    }
    Ok(chapters)
}

async fn enqueue_fingerprinting(state: &AppState, work_id: &WorkId) -> Result<()> {
    let task = Task::new(
        TaskKind::FingerprintWork {
            work_id: work_id.clone(),
        },
        Utc::now(),
    );
    state.queue.enqueue(vec![task]).await
}

/// Removes chapters' entries from the index, when this node has one; failures are logged.
pub async fn unindex_chapters(
    state: &AppState,
    work_id: &WorkId,
    chapter_ids: impl Iterator<Item = ChapterId>,
) {
    let Some(index) = &state.index else { return };
    let owners: Vec<String> = chapter_ids
        .map(|chapter_id| owner_key(work_id, &chapter_id))
        .collect();
    if owners.is_empty() {
        return;
    }
    if let Err(error) = index.remove_owners(&owners).await {
        tracing::warn!(work_id = %work_id, error = %error, "failed to drop chapters from the index; the next rebuild drops them");
    }
}

/// Stores a new work (`existing` is `None`) or re-registers one, and enqueues fingerprinting.
///
/// Chapters are written before the work record, so the record commits the
/// registration: a work that exists has all its chapters, and a chapter still
/// `Pending` is an outbox entry a node start re-enqueues if the process died
/// before the enqueue (`copyhound_matcher::requeue_pending_works`). A new
/// registration under a taken id is a retry when the same publisher sends the
/// same work: it answers the stored work (enqueueing again if it is pending)
/// instead of `Conflict`.
pub async fn register_work(
    state: &AppState,
    caller: &PublisherCaller,
    meta: WorkMeta,
    drafts: Vec<(Option<ChapterId>, ChapterDraft)>,
    existing: Option<Work>,
    warnings: Vec<String>,
) -> ApiResult<WorkDetail> {
    if drafts.is_empty() && meta.kind == WorkKind::Novel {
        return Err(Error::invalid("a novel needs at least one chapter").into());
    }
    let (work_id, taken) = match (&existing, meta.id.clone()) {
        (Some(work), _) => (work.id.clone(), None),
        (None, Some(id)) => match state.works.get_work_any(&id).await {
            Ok(stored) => (id, Some(stored)),
            Err(error) if error.kind() == ErrorKind::NotFound => (id, None),
            Err(error) => return Err(error.into()),
        },
        (None, None) => (WorkId::generate(), None),
    };
    let chapters = build_chapters(&work_id, drafts, 1)?;
    let now = Utc::now();
    let work = Work {
        id: work_id.clone(),
        publisher_id: caller.publisher_id.clone(),
        title: meta.title,
        author: meta.author,
        kind: meta.kind,
        language: meta.language.unwrap_or_else(|| guess_language(&chapters)),
        licensed_hosts: meta.licensed_hosts,
        created_at: existing.as_ref().map_or(now, |work| work.created_at),
        updated_at: now,
    };
    if let Some(stored) = taken {
        return answer_repeated_registration(state, caller, stored, &work, &chapters, warnings)
            .await;
    }
    match &existing {
        Some(_) => replace_chapters(state, &work, &chapters).await?,
        None => {
            drop_uncommitted_chapters(state, &work, &chapters).await?;
            state.works.put_chapters(&chapters).await?;
            state.works.put_work(&work).await?;
        }
    }
    if !chapters.is_empty() {
        enqueue_fingerprinting(state, &work_id).await?;
    }
    tracing::info!(work_id = %work_id, chapters = chapters.len(), by = %caller.key_id, replaced = existing.is_some(), "work registered");
    Ok(WorkDetail::new(work, &chapters, warnings))
}

/// Answers a new registration whose id is taken. The same publisher sending
/// the same work again (a retry after a lost answer or a crash) gets the stored
/// work, and its fingerprinting is enqueued again while chapters are pending;
/// anything else is a `Conflict` (`PUT` replaces a work).
async fn answer_repeated_registration(
    state: &AppState,
    caller: &PublisherCaller,
    stored: Work,
    requested: &Work,
    chapters: &[Chapter],
    warnings: Vec<String>,
) -> ApiResult<WorkDetail> {
    let conflict = || {
        Error::new(
            ErrorKind::Conflict,
            format!("work id {} is already in use", requested.id),
        )
    };
    if stored.publisher_id != caller.publisher_id || !same_metadata(&stored, requested) {
        return Err(conflict().into());
    }
    let stored_chapters = state.works.list_chapters(&stored.id).await?;
    if !same_chapters(&stored_chapters, chapters) {
        return Err(conflict().into());
    }
    let pending = stored_chapters
        .iter()
        .any(|chapter| chapter.fingerprint_status == FingerprintStatus::Pending);
    if pending {
        enqueue_fingerprinting(state, &stored.id).await?;
    }
    tracing::info!(work_id = %stored.id, by = %caller.key_id, pending, "registration repeated; answering the stored work");
    Ok(WorkDetail::new(stored, &stored_chapters, warnings))
}

fn same_metadata(stored: &Work, requested: &Work) -> bool {
    stored.title == requested.title
        && stored.author == requested.author
        && stored.kind == requested.kind
        && stored.language == requested.language
        && stored.licensed_hosts == requested.licensed_hosts
}

fn same_chapters(stored: &[Chapter], requested: &[Chapter]) -> bool {
    let key = |chapter: &Chapter| {
        (
            chapter.id.clone(),
            chapter.index,
            chapter.title.clone(),
            chapter.content_sha256.clone(),
        )
    };
    let stored: BTreeSet<_> = stored.iter().map(key).collect();
    let requested: BTreeSet<_> = requested.iter().map(key).collect();
    stored == requested
}

/// A re-registration: the work and its new chapters replace the old ones in
/// one store write (never a moment without the work, so a crash leaves the old
/// version or the new one), then the chapters that went away leave the index.
async fn replace_chapters(state: &AppState, work: &Work, chapters: &[Chapter]) -> Result<()> {
    let kept: BTreeSet<&ChapterId> = chapters.iter().map(|chapter| &chapter.id).collect();
    let removed: Vec<ChapterId> = state
        .works
        .list_chapters(&work.id)
        .await?
        .into_iter()
        .map(|chapter| chapter.id)
        .filter(|id| !kept.contains(id))
        .collect();
    state.works.replace_work(work, chapters).await?;
    unindex_chapters(state, &work.id, removed.into_iter()).await;
    Ok(())
}

/// Before a new registration: drops chapters stored under this id without a
/// work record (a registration killed before its record, or a delete cut
/// short), so they cannot join this work. The record is written first because
/// deleting a work is what deletes its chapters.
async fn drop_uncommitted_chapters(
    state: &AppState,
    work: &Work,
    chapters: &[Chapter],
) -> Result<()> {
    let kept: BTreeSet<&ChapterId> = chapters.iter().map(|chapter| &chapter.id).collect();
    let leftovers = state.works.list_chapters(&work.id).await?;
    if leftovers.iter().all(|chapter| kept.contains(&chapter.id)) {
        return Ok(()); // none, or all overwritten below
    }
    tracing::warn!(work_id = %work.id, leftovers = leftovers.len(), "dropping chapters of an unfinished registration");
    state.works.put_work(work).await?;
    state.works.delete_work(&work.publisher_id, &work.id).await
}

/// Appends articles to a news work and enqueues fingerprinting.
pub async fn add_articles(
    state: &AppState,
    caller: &PublisherCaller,
    work_id: &WorkId,
    articles: Vec<ArticleInput>,
) -> ApiResult<ArticlesAdded> {
    let mut work = state.works.get_work(&caller.publisher_id, work_id).await?;
    if work.kind != WorkKind::News {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("work {work_id} is a novel; articles are added to news works"),
        )
        .into());
    }
    let existing = state.works.list_chapters(work_id).await?;
    let taken: BTreeSet<ChapterId> = existing.iter().map(|chapter| chapter.id.clone()).collect();
    let next_index = existing
        .iter()
        .map(|chapter| chapter.index)
        .max()
        .unwrap_or(0)
        + 1;
    let mut drafts = Vec::with_capacity(articles.len());
    for (position, article) in articles.into_iter().enumerate() {
        let id = match &article.id {
            Some(raw) => parse_id::<ChapterId>(&format!("article {} id", position + 1), raw)?,
            None => positional_chapter_id(
                next_index + u32::try_from(position).unwrap_or(u32::MAX - next_index),
            ),
        };
        if taken.contains(&id) {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("article id {id} exists in work {work_id}"),
            )
            .into());
        }
        required_text("title", &article.title, super::MAX_ARTICLE_TITLE_CHARS)?;
        drafts.push((
            Some(id),
            ChapterDraft {
                title: article.title,
                text: article.text,
            },
        ));
    }
    let chapters = build_chapters(work_id, drafts, next_index)?;
    state.works.put_chapters(&chapters).await?;
    work.updated_at = Utc::now();
    state.works.put_work(&work).await?;
    enqueue_fingerprinting(state, work_id).await?;
    tracing::info!(work_id = %work_id, articles = chapters.len(), by = %caller.key_id, "articles added");
    Ok(ArticlesAdded {
        work_id: work_id.clone(),
        chapter_ids: chapters.into_iter().map(|chapter| chapter.id).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_normalized_and_non_hosts_refused() {
        let hosts = normalize_hosts(&[
            "Example.COM".into(),
            "https://licensed.cn/path".into(),
            "example.com".into(),
        ])
        .unwrap();
        assert_eq!(hosts, ["example.com", "licensed.cn"]);
        for bad in ["", "a b", "example.com/path", "http://"] {
            assert!(normalize_hosts(&[bad.to_string()]).is_err(), "{bad}");
        }
    }
}
