//! Reads a work folder in the benchmark format (`works/<id>/meta.json` plus
//! `chapters/*.txt`), the format publishers' bulk exports are converted to. Parsing
//! is separate from storing so a broken folder is reported before anything is
//! written.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use chrono::Utc;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{Chapter, Language, Publisher, PublisherKind, Work, WorkKind};
use serde::Deserialize;

/// One work read from disk, with its publisher and chapters.
#[derive(Debug)]
pub struct ImportedWork {
    pub publisher: Publisher,
    pub work: Work,
    pub chapters: Vec<Chapter>,
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
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&works_dir)
        .with_context(|| format!("cannot list {}", works_dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.join("meta.json").is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        bail!("no works/<id>/meta.json under {}", dir.display());
    }
    folders.iter().map(|folder| read_work(folder)).collect()
}

fn read_work(folder: &Path) -> anyhow::Result<ImportedWork> {
    let meta_path = folder.join("meta.json");
    let meta_text = std::fs::read_to_string(&meta_path)
        .with_context(|| format!("cannot read {}", meta_path.display()))?;
    let meta: MetaFile = serde_json::from_str(&meta_text)
        .with_context(|| format!("{} is not a valid work description", meta_path.display()))?;
    let invalid = |what: &str| format!("{}: invalid {what}", meta_path.display());
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
    let now = Utc::now();
    let mut chapters = Vec::with_capacity(meta.chapters.len());
    for entry in &meta.chapters {
        let path = folder.join(&entry.file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read chapter {}", path.display()))?;
        let chapter_id: ChapterId = entry
            .chapter_id
            .parse()
            .with_context(|| invalid("chapter_id"))?;
        chapters.push(Chapter::new(
            work_id.clone(),
            chapter_id,
            entry.index,
            entry.title.clone(),
            text,
        ));
    }
    let publisher = Publisher {
        id: publisher_id.clone(),
        name: publisher_id.to_string(),
        kind: if kind == WorkKind::News {
            PublisherKind::News
        } else {
            PublisherKind::Books
        },
        created_at: now,
    };
    let work = Work {
        id: work_id,
        publisher_id,
        title: meta.title,
        author: meta.author,
        kind,
        language,
        licensed_hosts: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    Ok(ImportedWork {
        publisher,
        work,
        chapters,
    })
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
        assert_eq!(works[0].chapters[0].chars, 9);
        assert_eq!(works[0].work.publisher_id.as_str(), "P01");

        std::fs::write(work.join("meta.json"), r#"{"work_id":"w 1"}"#).unwrap();
        let error = read_works(dir.path()).unwrap_err();
        assert!(format!("{error:#}").contains("meta.json"), "{error:#}");
    }
}
