//! Reads a work folder in the benchmark format (`works/<id>/meta.json` plus
//! `chapters/*.txt`), the format publishers' bulk exports are converted to. Parsing
//! is separate from storing so a broken folder is reported before anything is
//! written.
//!
//! The folder is untrusted input: a `meta.json` names files, and an import must
//! never read outside the folder it was given (no `..`, no absolute paths, no
//! symlink that resolves elsewhere, no devices or FIFOs) nor more bytes than the
//! limits below, whatever the file system claims about sizes.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use chrono::Utc;
use copyhound_core::ErrorKind;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{Language, Publisher, PublisherKind, WorkKind};
use copyhound_core::ports::Ports;
use serde::Deserialize;

use crate::formats::ChapterDraft;
use crate::formats::limits::{
    MAX_CHAPTER_CHARS, MAX_CHAPTER_TITLE_CHARS, MAX_CHAPTERS, MAX_TEXT_CHARS,
};
use crate::works::{
    MAX_AUTHOR_CHARS, MAX_TITLE_CHARS, NewChapter, Registrant, WorkMeta, register_or_replace,
};

/// Largest `meta.json`.
pub const MAX_META_BYTES: u64 = 4 << 20;
/// Largest chapter file: a UTF-8 character is at most 4 bytes, so a longer
/// file cannot hold a chapter the registration accepts.
pub const MAX_CHAPTER_FILE_BYTES: u64 = 4 * MAX_CHAPTER_CHARS as u64;
/// Most chapter bytes of one work, by the same reasoning.
pub const MAX_WORK_BYTES: u64 = 4 * MAX_TEXT_CHARS as u64;

/// One work read from disk: who owns it, what it says about itself and its
/// chapters, not yet checked against the registration's limits.
#[derive(Debug)]
pub struct ImportedWork {
    /// The publisher that owns the work.
    pub publisher_id: PublisherId,
    /// The work's metadata (licensed hosts: kept, a folder cannot say them).
    pub meta: WorkMeta,
    /// Its chapters in reading order.
    pub chapters: Vec<NewChapter>,
}

#[derive(Debug, Deserialize)]
struct MetaFile {
    work_id: String,
    title: String,
    #[serde(default)]
    author: String,
    publisher_id: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "default_language")]
    language: String,
    chapters: Vec<MetaChapter>,
}

fn default_language() -> String {
    "zh".into()
}

#[derive(Debug, Deserialize)]
struct MetaChapter {
    chapter_id: String,
    index: u32,
    title: String,
    file: PathBuf,
}

/// Reads every `works/<id>/meta.json` under `dir` (or `dir` itself if it holds `works/`'s children).
pub fn read_works(dir: &Path) -> anyhow::Result<Vec<ImportedWork>> {
    let works_dir = if dir.join("works").is_dir() {
        dir.join("works")
    } else {
        dir.to_path_buf()
    };
    let root = works_dir
        .canonicalize()
        .with_context(|| format!("cannot open {}", works_dir.display()))?;
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .with_context(|| format!("cannot list {}", works_dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.join("meta.json").is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        bail!("no works/<id>/meta.json under {}", dir.display());
    }
    folders
        .iter()
        .map(|folder| {
            let folder = contained(&root, folder, "work folder")?;
            read_work(&folder)
        })
        .collect()
}

/// Returns `path` resolved, or an error when it resolves outside `root`.
fn contained(root: &Path, path: &Path, what: &str) -> anyhow::Result<PathBuf> {
    let resolved = path
        .canonicalize()
        .with_context(|| format!("cannot open {what} {}", path.display()))?;
    if !resolved.starts_with(root) {
        bail!(
            "{what} {} leaves the imported folder {} (symlink?); refused",
            path.display(),
            root.display()
        );
    }
    Ok(resolved)
}

/// Returns the chapter path named in `meta.json`, refusing any that could leave `folder`.
fn chapter_path(folder: &Path, named: &Path) -> anyhow::Result<PathBuf> {
    let plain = !named.as_os_str().is_empty()
        && named
            .components()
            .all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    if !plain {
        bail!(
            "chapter file {:?} must be a relative path inside the work folder (no `..`, no absolute path)",
            named.display().to_string()
        );
    }
    contained(folder, &folder.join(named), "chapter file")
}

/// Reads a regular file of at most `limit` bytes (the size is checked while
/// reading too: a growing or lying file never reads past the limit).
fn read_bounded(path: &Path, limit: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    let metadata = file
        .metadata()
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if !metadata.is_file() {
        bail!("{what} {} is not a regular file; refused", path.display());
    }
    if metadata.len() > limit {
        bail!(
            "{what} {} has {} bytes, more than the limit of {limit}",
            path.display(),
            metadata.len()
        );
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if bytes.len() as u64 > limit {
        bail!(
            "{what} {} grew past the limit of {limit} bytes",
            path.display()
        );
    }
    Ok(bytes)
}

fn bounded_text(path: &Path, field: &str, text: &str, max_chars: usize) -> anyhow::Result<()> {
    let chars = text.chars().count();
    if chars > max_chars {
        bail!(
            "{}: {field} has {chars} characters, more than the limit of {max_chars}",
            path.display()
        );
    }
    Ok(())
}

fn read_work(folder: &Path) -> anyhow::Result<ImportedWork> {
    let meta_path = contained(folder, &folder.join("meta.json"), "work description")?;
    let meta_bytes = read_bounded(&meta_path, MAX_META_BYTES, "work description")?;
    let meta: MetaFile = serde_json::from_slice(&meta_bytes)
        .with_context(|| format!("{} is not a valid work description", meta_path.display()))?;
    let invalid = |what: &str| format!("{}: invalid {what}", meta_path.display());
    bounded_text(&meta_path, "title", &meta.title, MAX_TITLE_CHARS)?;
    bounded_text(&meta_path, "author", &meta.author, MAX_AUTHOR_CHARS)?;
    if meta.chapters.len() > MAX_CHAPTERS {
        bail!(
            "{}: {} chapters, more than the limit of {MAX_CHAPTERS}",
            meta_path.display(),
            meta.chapters.len()
        );
    }
    let work_id: WorkId = meta.work_id.parse().with_context(|| invalid("work_id"))?;
    let publisher_id: PublisherId = meta
        .publisher_id
        .parse()
        .with_context(|| invalid("publisher_id"))?;
    let kind = match meta.kind.as_str() {
        "novel" => WorkKind::Novel,
        "news" => WorkKind::News,
        other => bail!(
            "{}: type {other:?} is neither \"novel\" nor \"news\"",
            meta_path.display()
        ),
    };
    let language = match meta.language.as_str() {
        "zh" => Language::Zh,
        "en" => Language::En,
        other => bail!(
            "{}: language {other:?} is neither \"zh\" nor \"en\"",
            meta_path.display()
        ),
    };
    let mut entries: Vec<&MetaChapter> = meta.chapters.iter().collect();
    entries.sort_by_key(|entry| entry.index);
    let mut chapters = Vec::with_capacity(entries.len());
    let mut total_bytes = 0_u64;
    for entry in entries {
        bounded_text(
            &meta_path,
            "chapter title",
            &entry.title,
            MAX_CHAPTER_TITLE_CHARS,
        )?;
        let path = chapter_path(folder, &entry.file)?;
        let bytes = read_bounded(&path, MAX_CHAPTER_FILE_BYTES, "chapter file")?;
        total_bytes += bytes.len() as u64;
        if total_bytes > MAX_WORK_BYTES {
            bail!(
                "{}: chapters exceed the limit of {MAX_WORK_BYTES} bytes per work",
                meta_path.display()
            );
        }
        let text = String::from_utf8(bytes)
            .with_context(|| format!("chapter file {} is not UTF-8", path.display()))?;
        let chapter_id: ChapterId = entry
            .chapter_id
            .parse()
            .with_context(|| invalid("chapter_id"))?;
        chapters.push((
            Some(chapter_id),
            ChapterDraft {
                title: entry.title.clone(),
                text,
            },
        ));
    }
    let meta = WorkMeta::new(
        Some(work_id),
        &meta.title,
        &meta.author,
        kind,
        Some(language),
        None,
    )
    .with_context(|| format!("{}: invalid work", meta_path.display()))?;
    Ok(ImportedWork {
        publisher_id,
        meta,
        chapters,
    })
}

/// Registers works read from folders, creating their publishers when missing,
/// through the registration every other door uses ([`register_or_replace`]).
///
/// A publisher that exists keeps its profile (name, policy, alerts, report
/// schedules): a folder only names it. A work that exists is replaced the way
/// `PUT /works/{id}` replaces it: chapters the folder no longer has leave the
/// store and the index; what a folder cannot say (licensed hosts, creation
/// time) is kept. A work id of another publisher is refused before anything
/// is written. Returns the works and chapters registered.
pub async fn import_works(
    ports: &Ports,
    works: Vec<ImportedWork>,
    by: &str,
) -> anyhow::Result<(usize, usize)> {
    for imported in &works {
        let Some(id) = &imported.meta.id else {
            continue;
        };
        match ports.works.get_work_any(id).await {
            Ok(stored) if stored.publisher_id != imported.publisher_id => {
                bail!("work id {id} belongs to another publisher; choose another work_id")
            }
            Ok(_) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error.into()),
        }
    }
    let count = works.len();
    let mut chapters = 0;
    for imported in works {
        ensure_publisher(ports, &imported.publisher_id, imported.meta.kind).await?;
        let id = imported.meta.id.clone();
        let registered = register_or_replace(
            ports,
            Registrant {
                publisher_id: &imported.publisher_id,
                by,
            },
            imported.meta,
            imported.chapters,
        )
        .await
        .with_context(|| match &id {
            Some(id) => format!("cannot register work {id}"),
            None => "cannot register a work".to_string(),
        })?;
        chapters += registered.chapters.len();
    }
    Ok((count, chapters))
}

/// Creates a publisher named by its id when it does not exist; an existing
/// one is left as it is.
pub async fn ensure_publisher(
    ports: &Ports,
    publisher_id: &PublisherId,
    kind: WorkKind,
) -> copyhound_core::Result<()> {
    match ports.publishers.get_publisher(publisher_id).await {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == ErrorKind::NotFound => {
            let publisher = Publisher {
                id: publisher_id.clone(),
                name: publisher_id.to_string(),
                kind: if kind == WorkKind::News {
                    PublisherKind::News
                } else {
                    PublisherKind::Books
                },
                created_at: Utc::now(),
                policy: Default::default(),
                alerts: Default::default(),
                report_schedules: Vec::new(),
                profile: Default::default(),
            };
            ports.publishers.put_publisher(&publisher).await
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_work_folder_and_reports_broken_ones() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("works/w1");
        std::fs::create_dir_all(work.join("chapters")).unwrap();
        std::fs::write(work.join("chapters/c1.txt"), "第一段。\n第二段。").unwrap();
        std::fs::write(
            work.join("meta.json"),
            r#"{"work_id":"w1","title":"书","author":"某","publisher_id":"P01","type":"novel","language":"zh",
               "chapters":[{"chapter_id":"c1","index":1,"title":"第一章","file":"chapters/c1.txt","chars":8}]}"#,
        )
        .unwrap();
        let works = read_works(dir.path()).unwrap();
        assert_eq!(works.len(), 1);
        assert_eq!(works[0].chapters[0].1.text, "第一段。\n第二段。");
        assert_eq!(works[0].publisher_id.as_str(), "P01");

        std::fs::write(work.join("meta.json"), r#"{"work_id":"w 1"}"#).unwrap();
        let error = read_works(dir.path()).unwrap_err();
        assert!(format!("{error:#}").contains("meta.json"), "{error:#}");
    }

    /// Writes `works/w1` with one chapter whose `file` is `named`.
    fn work_naming(dir: &Path, named: &str) -> PathBuf {
        let work = dir.join("works/w1");
        std::fs::create_dir_all(work.join("chapters")).unwrap();
        let meta = serde_json::json!({
            "work_id": "w1", "title": "书", "publisher_id": "P01", "type": "novel",
            "chapters": [{"chapter_id": "c1", "index": 1, "title": "第一章", "file": named}]
        });
        std::fs::write(work.join("meta.json"), meta.to_string()).unwrap();
        work
    }

    fn refusal(dir: &Path) -> String {
        format!("{:#}", read_works(dir).unwrap_err())
    }

    #[test]
    fn chapter_files_never_leave_the_imported_folder() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "root:x:0:0:secret").unwrap();

        let dir = tempfile::tempdir().unwrap();
        work_naming(dir.path(), "../../../../../../../../etc/passwd");
        assert!(
            refusal(dir.path()).contains("no `..`"),
            "{}",
            refusal(dir.path())
        );

        let dir = tempfile::tempdir().unwrap();
        work_naming(dir.path(), secret.to_str().unwrap());
        assert!(refusal(dir.path()).contains("no absolute path"));

        let dir = tempfile::tempdir().unwrap();
        let work = work_naming(dir.path(), "chapters/c1.txt");
        std::os::unix::fs::symlink(&secret, work.join("chapters/c1.txt")).unwrap();
        assert!(refusal(dir.path()).contains("leaves the imported folder"));

        // A symlinked work folder is refused the same way.
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = work_naming(outside.path(), "chapters/c1.txt");
        std::fs::write(elsewhere.join("chapters/c1.txt"), "正文。").unwrap();
        std::fs::create_dir_all(dir.path().join("works")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("works/w1")).unwrap();
        assert!(refusal(dir.path()).contains("leaves the imported folder"));

        // A symlink that stays inside is fine.
        let dir = tempfile::tempdir().unwrap();
        let work = work_naming(dir.path(), "chapters/link.txt");
        std::fs::write(work.join("chapters/c1.txt"), "正文。").unwrap();
        std::os::unix::fs::symlink(work.join("chapters/c1.txt"), work.join("chapters/link.txt"))
            .unwrap();
        assert_eq!(
            read_works(dir.path()).unwrap()[0].chapters[0].1.text,
            "正文。"
        );
    }

    #[test]
    fn devices_and_oversized_files_are_refused_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        let work = work_naming(dir.path(), "chapters/c1.txt");
        // A 1 GB sparse file: refused from its size, in no time and no memory.
        let file = std::fs::File::create(work.join("chapters/c1.txt")).unwrap();
        file.set_len(1 << 30).unwrap();
        let message = refusal(dir.path());
        assert!(message.contains("more than the limit"), "{message}");

        let dir = tempfile::tempdir().unwrap();
        let work = work_naming(dir.path(), "chapters/c1.txt");
        std::os::unix::fs::symlink("/dev/zero", work.join("chapters/c1.txt")).unwrap();
        let message = refusal(dir.path());
        assert!(
            message.contains("leaves the imported folder")
                || message.contains("not a regular file"),
            "{message}"
        );

        let dir = tempfile::tempdir().unwrap();
        let work = work_naming(dir.path(), "chapters/c1.txt");
        std::fs::write(work.join("chapters/c1.txt"), "正文。").unwrap();
        let meta = serde_json::json!({
            "work_id": "w1", "title": "书", "author": "某".repeat(10_000), "publisher_id": "P01",
            "type": "novel",
            "chapters": [{"chapter_id": "c1", "index": 1, "title": "第一章", "file": "chapters/c1.txt"}]
        });
        std::fs::write(work.join("meta.json"), meta.to_string()).unwrap();
        assert!(refusal(dir.path()).contains("author has 10000 characters"));
    }
}
