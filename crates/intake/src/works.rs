//! Registering works: one function for every way a work enters (the JSON API,
//! TXT and EPUB uploads, the console's editor, `copyhound works import`), so
//! limits, chapter ids, the write order and the id-taken check are the same
//! whichever door was used.
//!
//! Write order (the outbox): chapters are stored `Pending` before the work
//! record, which commits the registration; a node start re-enqueues the
//! fingerprinting of works whose chapters are still pending
//! (`copyhound_matcher::requeue_pending_works`), so a process killed between
//! the write and the enqueue loses nothing.

use std::collections::BTreeSet;

use chrono::Utc;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{
    Chapter, FingerprintOwner, FingerprintStatus, Language, Task, TaskKind, Timestamp, Work,
    WorkKind,
};
use copyhound_core::ports::Ports;
use copyhound_core::{Error, ErrorKind, Result};

use crate::formats::ChapterDraft;
pub use crate::formats::limits::{MAX_AUTHOR_CHARS, MAX_CHAPTERS, MAX_TITLE_CHARS};
use crate::formats::limits::{
    MAX_CHAPTER_CHARS, MAX_CHAPTER_TITLE_CHARS, MAX_HOST_INPUT_BYTES, MAX_TEXT_CHARS,
};
use crate::formats::normalize_paragraphs;

/// Most licensed hosts of one work.
pub const MAX_LICENSED_HOSTS: usize = 500;
/// Longest article title, characters.
pub const MAX_ARTICLE_TITLE_CHARS: usize = 500;

/// Who registers: the publisher that will own the work, and the key or
/// command that acted (for the log).
#[derive(Clone, Copy, Debug)]
pub struct Registrant<'a> {
    /// The owning publisher.
    pub publisher_id: &'a PublisherId,
    /// The API key id, console user or command that acted.
    pub by: &'a str,
}

/// Validated work metadata of a registration.
#[derive(Clone, Debug)]
pub struct WorkMeta {
    /// Requested id; generated when `None`.
    pub id: Option<WorkId>,
    /// Title.
    pub title: String,
    /// Author.
    pub author: String,
    /// Novel or news.
    pub kind: WorkKind,
    /// Language; guessed from the chapters when `None`.
    pub language: Option<Language>,
    /// Licensed hosts, normalized; `None` keeps a stored work's (a folder
    /// import cannot say them) and means none for a new work.
    pub licensed_hosts: Option<Vec<String>>,
}

impl WorkMeta {
    /// Checks and trims a registration's metadata.
    pub fn new(
        id: Option<WorkId>,
        title: &str,
        author: &str,
        kind: WorkKind,
        language: Option<Language>,
        licensed_hosts: Option<&[String]>,
    ) -> Result<Self> {
        Ok(Self {
            id,
            title: required_text("title", title, MAX_TITLE_CHARS)?,
            author: optional_text("author", author, MAX_AUTHOR_CHARS)?,
            kind,
            language,
            licensed_hosts: licensed_hosts.map(normalize_hosts).transpose()?,
        })
    }
}

/// A chapter to register: its id (`c_0001`... by position when `None`) and text.
pub type NewChapter = (Option<ChapterId>, ChapterDraft);

/// A work as stored by a registration, with its chapters.
#[derive(Clone, Debug)]
pub struct Registered {
    /// The work record.
    pub work: Work,
    /// Its chapters, text included.
    pub chapters: Vec<Chapter>,
}

/// Returns `text` trimmed, refusing blank text or more than `max_chars`
/// characters (counted as sent, the way the OpenAPI document's `maxLength` counts).
pub fn required_text(field: &str, text: &str, max_chars: usize) -> Result<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Error::invalid(format!("`{field}` must not be empty")));
    }
    if text.chars().count() > max_chars {
        return Err(Error::invalid(format!(
            "`{field}` is longer than {max_chars} characters"
        )));
    }
    Ok(trimmed.to_string())
}

/// Returns `text` trimmed (possibly empty), refusing more than `max_chars` characters.
pub fn optional_text(field: &str, text: &str, max_chars: usize) -> Result<String> {
    let trimmed = text.trim();
    if text.chars().count() > max_chars {
        return Err(Error::invalid(format!(
            "`{field}` is longer than {max_chars} characters"
        )));
    }
    Ok(trimmed.to_string())
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

async fn enqueue_fingerprinting(ports: &Ports, work_id: &WorkId) -> Result<()> {
    let task = Task::new(
        TaskKind::FingerprintWork {
            work_id: work_id.clone(),
        },
        Utc::now(),
    );
    ports.queue.enqueue(vec![task]).await
}

/// Starts the release burst of `work_id` at `release` (now, or a timetable's
/// next slot): its first `revisit_watch` visit, due then (the crawler's
/// watcher revisits the sites that carry the work; a work no site is known to
/// carry yet ends there).
pub async fn start_burst_at(ports: &Ports, work_id: &WorkId, release: Timestamp) -> Result<()> {
    let task = Task::new(
        TaskKind::RevisitWatch {
            work_id: work_id.clone(),
            release,
            step: 0,
            due: release,
        },
        release,
    );
    ports.queue.enqueue(vec![task]).await
}

/// Returns the index key of a chapter's fingerprints.
pub fn owner_key(work_id: &WorkId, chapter_id: &ChapterId) -> String {
    FingerprintOwner::Chapter {
        work_id: work_id.clone(),
        chapter_id: chapter_id.clone(),
    }
    .index_key()
}

/// Removes chapters' entries from the index; failures are logged (the next
/// `index rebuild` drops them).
pub async fn unindex_chapters(
    ports: &Ports,
    work_id: &WorkId,
    chapter_ids: impl Iterator<Item = ChapterId>,
) {
    let owners: Vec<String> = chapter_ids
        .map(|chapter_id| owner_key(work_id, &chapter_id))
        .collect();
    if owners.is_empty() {
        return;
    }
    if let Err(error) = ports.index.remove_owners(&owners).await {
        tracing::warn!(work_id = %work_id, error = %error, "failed to drop chapters from the index; the next rebuild drops them");
    }
}

/// Registers a work: a new one, or a new version of `existing` (which must
/// belong to the registrant), and enqueues its fingerprinting.
///
/// A new registration under a taken id is a retry when the same publisher
/// sends the same work: it answers the stored work (enqueueing again if it is
/// pending) instead of `Conflict`; a work id of another publisher is a
/// `Conflict` whatever is sent.
pub async fn register_work(
    ports: &Ports,
    by: Registrant<'_>,
    meta: WorkMeta,
    chapters: Vec<NewChapter>,
    existing: Option<Work>,
) -> Result<Registered> {
    if chapters.is_empty() && meta.kind == WorkKind::Novel {
        return Err(Error::invalid("a novel needs at least one chapter"));
    }
    if let Some(work) = &existing
        && work.publisher_id != *by.publisher_id
    {
        return Err(taken(&work.id));
    }
    let (work_id, taken_by) = match (&existing, meta.id.clone()) {
        (Some(work), _) => (work.id.clone(), None),
        (None, Some(id)) => match ports.works.get_work_any(&id).await {
            Ok(stored) => (id, Some(stored)),
            Err(error) if error.kind() == ErrorKind::NotFound => (id, None),
            Err(error) => return Err(error),
        },
        (None, None) => (WorkId::generate(), None),
    };
    let chapters = build_chapters(&work_id, chapters, 1)?;
    let now = Utc::now();
    // The chapters stored now: new ids make a release, missing ones leave.
    let stored: BTreeSet<ChapterId> = match &existing {
        Some(work) => ports
            .works
            .list_chapters(&work.id)
            .await?
            .into_iter()
            .map(|chapter| chapter.id)
            .collect(),
        None => BTreeSet::new(),
    };
    let released =
        existing.is_some() && chapters.iter().any(|chapter| !stored.contains(&chapter.id));
    let licensed_hosts = match (meta.licensed_hosts, &existing) {
        (Some(hosts), _) => hosts,
        (None, Some(work)) => work.licensed_hosts.clone(),
        (None, None) => Vec::new(),
    };
    let work = Work {
        id: work_id.clone(),
        publisher_id: by.publisher_id.clone(),
        title: meta.title,
        author: meta.author,
        kind: meta.kind,
        language: meta.language.unwrap_or_else(|| guess_language(&chapters)),
        licensed_hosts,
        created_at: existing.as_ref().map_or(now, |work| work.created_at),
        updated_at: now,
        released_at: if released {
            Some(now)
        } else {
            existing.as_ref().and_then(|work| work.released_at)
        },
        release_schedule: existing
            .as_ref()
            .and_then(|work| work.release_schedule.clone()),
    };
    if let Some(stored) = taken_by {
        return answer_repeated_registration(ports, by, stored, &work, &chapters).await;
    }
    match &existing {
        Some(_) => replace_chapters(ports, &work, &chapters, &stored).await?,
        None => {
            drop_uncommitted_chapters(ports, &work, &chapters).await?;
            ports.works.put_chapters(&chapters).await?;
            ports.works.put_work(&work).await?;
        }
    }
    if !chapters.is_empty() {
        enqueue_fingerprinting(ports, &work_id).await?;
    }
    if released {
        start_burst_at(ports, &work_id, now).await?;
    }
    tracing::info!(work_id = %work_id, chapters = chapters.len(), by = by.by, replaced = existing.is_some(), released, "work registered");
    Ok(Registered { work, chapters })
}

/// Registers `meta`'s work, replacing the stored one when the registrant owns
/// that id (a re-import), refusing it when another publisher does.
pub async fn register_or_replace(
    ports: &Ports,
    by: Registrant<'_>,
    meta: WorkMeta,
    chapters: Vec<NewChapter>,
) -> Result<Registered> {
    let existing = match &meta.id {
        Some(id) => match ports.works.get_work_any(id).await {
            Ok(stored) => Some(stored),
            Err(error) if error.kind() == ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        },
        None => None,
    };
    register_work(ports, by, meta, chapters, existing).await
}

fn taken(work_id: &WorkId) -> Error {
    Error::new(
        ErrorKind::Conflict,
        format!("work id {work_id} is already in use"),
    )
}

/// Answers a new registration whose id is taken. The same publisher sending
/// the same work again (a retry after a lost answer or a crash) gets the stored
/// work, and its fingerprinting is enqueued again while chapters are pending;
/// anything else is a `Conflict` (`PUT` replaces a work).
async fn answer_repeated_registration(
    ports: &Ports,
    by: Registrant<'_>,
    stored: Work,
    requested: &Work,
    chapters: &[Chapter],
) -> Result<Registered> {
    if stored.publisher_id != *by.publisher_id || !same_metadata(&stored, requested) {
        return Err(taken(&requested.id));
    }
    let stored_chapters = ports.works.list_chapters(&stored.id).await?;
    if !same_chapters(&stored_chapters, chapters) {
        return Err(taken(&requested.id));
    }
    let pending = stored_chapters
        .iter()
        .any(|chapter| chapter.fingerprint_status == FingerprintStatus::Pending);
    if pending {
        enqueue_fingerprinting(ports, &stored.id).await?;
    }
    tracing::info!(work_id = %stored.id, by = by.by, pending, "registration repeated; answering the stored work");
    Ok(Registered {
        work: stored,
        chapters: stored_chapters,
    })
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
/// version or the new one), then the chapters that went away leave the index
/// and their fingerprint records are dropped.
async fn replace_chapters(
    ports: &Ports,
    work: &Work,
    chapters: &[Chapter],
    stored: &BTreeSet<ChapterId>,
) -> Result<()> {
    let kept: BTreeSet<&ChapterId> = chapters.iter().map(|chapter| &chapter.id).collect();
    let removed: Vec<ChapterId> = stored
        .iter()
        .filter(|id| !kept.contains(id))
        .cloned()
        .collect();
    ports.works.replace_work(work, chapters).await?;
    unindex_chapters(ports, &work.id, removed.iter().cloned()).await;
    for chapter_id in removed {
        let owner = FingerprintOwner::Chapter {
            work_id: work.id.clone(),
            chapter_id,
        };
        ports.fingerprints.delete_fingerprints(&owner).await?;
    }
    Ok(())
}

/// Before a new registration: drops chapters stored under this id without a
/// work record (a registration killed before its record, or a delete cut
/// short), so they cannot join this work. The record is written first because
/// deleting a work is what deletes its chapters.
async fn drop_uncommitted_chapters(ports: &Ports, work: &Work, chapters: &[Chapter]) -> Result<()> {
    let kept: BTreeSet<&ChapterId> = chapters.iter().map(|chapter| &chapter.id).collect();
    let leftovers = ports.works.list_chapters(&work.id).await?;
    if leftovers.iter().all(|chapter| kept.contains(&chapter.id)) {
        return Ok(()); // none, or all overwritten below
    }
    tracing::warn!(work_id = %work.id, leftovers = leftovers.len(), "dropping chapters of an unfinished registration");
    ports.works.put_work(work).await?;
    ports.works.delete_work(&work.publisher_id, &work.id).await
}

/// An article to append to a news work.
#[derive(Clone, Debug)]
pub struct NewArticle {
    /// Id; the next positional id when `None`.
    pub id: Option<ChapterId>,
    /// Title.
    pub title: String,
    /// Body.
    pub text: String,
}

/// Appends articles to a news work of the registrant and enqueues fingerprinting.
pub async fn add_articles(
    ports: &Ports,
    by: Registrant<'_>,
    work_id: &WorkId,
    articles: Vec<NewArticle>,
) -> Result<Vec<ChapterId>> {
    let mut work = ports.works.get_work(by.publisher_id, work_id).await?;
    if work.kind != WorkKind::News {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("work {work_id} is a novel; articles are added to news works"),
        ));
    }
    let existing = ports.works.list_chapters(work_id).await?;
    let taken: BTreeSet<ChapterId> = existing.iter().map(|chapter| chapter.id.clone()).collect();
    let next_index = existing
        .iter()
        .map(|chapter| chapter.index)
        .max()
        .unwrap_or(0)
        + 1;
    let mut drafts = Vec::with_capacity(articles.len());
    for (position, article) in articles.into_iter().enumerate() {
        let id = article.id.unwrap_or_else(|| {
            positional_chapter_id(
                next_index + u32::try_from(position).unwrap_or(u32::MAX - next_index),
            )
        });
        if taken.contains(&id) {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("article id {id} exists in work {work_id}"),
            ));
        }
        required_text("title", &article.title, MAX_ARTICLE_TITLE_CHARS)?;
        drafts.push((
            Some(id),
            ChapterDraft {
                title: article.title,
                text: article.text,
            },
        ));
    }
    let chapters = build_chapters(work_id, drafts, next_index)?;
    ports.works.put_chapters(&chapters).await?;
    let now = Utc::now();
    work.updated_at = now;
    work.released_at = Some(now);
    ports.works.put_work(&work).await?;
    enqueue_fingerprinting(ports, work_id).await?;
    start_burst_at(ports, work_id, now).await?;
    tracing::info!(work_id = %work_id, articles = chapters.len(), by = by.by, "articles added");
    Ok(chapters.into_iter().map(|chapter| chapter.id).collect())
}

/// Replaces the licensed hosts of a work of the registrant; returns them normalized.
pub async fn set_licensed_hosts(
    ports: &Ports,
    by: Registrant<'_>,
    work_id: &WorkId,
    hosts: &[String],
) -> Result<Vec<String>> {
    let mut work = ports.works.get_work(by.publisher_id, work_id).await?;
    work.licensed_hosts = normalize_hosts(hosts)?;
    ports.works.put_work(&work).await?;
    tracing::info!(work_id = %work_id, by = by.by, hosts = work.licensed_hosts.len(), "licensed hosts updated");
    Ok(work.licensed_hosts)
}

/// Longest release timetable (a cron expression), characters.
pub const MAX_RELEASE_CRON_CHARS: usize = 200;
/// Shortest pause between two releases of a timetable: a burst lasts up to an
/// hour, and overlapping bursts of one work would only fetch the same pages.
pub const MIN_RELEASE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

/// Sets (or, with `None`, clears) the release timetable of a work of the
/// registrant, and queues the burst of its next slot.
pub async fn set_release_schedule(
    ports: &Ports,
    by: Registrant<'_>,
    work_id: &WorkId,
    cron: Option<&str>,
) -> Result<Work> {
    let mut work = ports.works.get_work(by.publisher_id, work_id).await?;
    let cron = cron.map(str::trim).filter(|cron| !cron.is_empty());
    let next = match cron {
        Some(cron) => {
            if cron.chars().count() > MAX_RELEASE_CRON_CHARS {
                return Err(Error::invalid(format!(
                    "`cron` is longer than {MAX_RELEASE_CRON_CHARS} characters"
                )));
            }
            if cron.split_whitespace().count() != 5 {
                return Err(Error::invalid(
                    "`cron` must have 5 fields (minute hour day month weekday), UTC",
                ));
            }
            let parsed = copyhound_core::schedule::parse_schedule(cron)
                .map_err(|error| Error::invalid(format!("`cron`: {}", error.message())))?;
            copyhound_core::schedule::check_floor(&parsed, MIN_RELEASE_INTERVAL, "cron")?;
            let next = copyhound_core::schedule::next_slot(&parsed, Utc::now())
                .ok_or_else(|| Error::invalid(format!("`cron`: `{cron}` never fires")))?;
            Some(next)
        }
        None => None,
    };
    work.release_schedule = cron.map(str::to_string);
    ports.works.put_work(&work).await?;
    if let Some(slot) = next {
        start_burst_at(ports, work_id, slot).await?;
    }
    tracing::info!(work_id = %work_id, by = by.by, schedule = ?work.release_schedule, "release timetable set");
    Ok(work)
}

/// Deletes a work of the registrant with everything that hangs off it: index
/// entries, fingerprint records, matches, chapters. Returns the matches dropped.
///
/// The work record goes last: a delete cut short leaves the work in place, and
/// repeating the call finishes it. Nothing of this work survives for a later
/// owner of the same id to inherit.
pub async fn delete_work(ports: &Ports, by: Registrant<'_>, work_id: &WorkId) -> Result<u64> {
    ports.works.get_work(by.publisher_id, work_id).await?;
    let chapters = ports.works.list_chapters(work_id).await?;
    unindex_chapters(
        ports,
        work_id,
        chapters.iter().map(|chapter| chapter.id.clone()),
    )
    .await;
    for chapter in &chapters {
        let owner = FingerprintOwner::Chapter {
            work_id: work_id.clone(),
            chapter_id: chapter.id.clone(),
        };
        ports.fingerprints.delete_fingerprints(&owner).await?;
    }
    let matches = ports
        .matches
        .delete_matches_of_work(by.publisher_id, work_id)
        .await?;
    ports.works.delete_work(by.publisher_id, work_id).await?;
    tracing::info!(work_id = %work_id, matches, by = by.by, "work deleted");
    Ok(matches)
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
