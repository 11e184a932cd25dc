//! Devset access for tests and the report example: locating the shared set,
//! reading truth.json, and reading pages as the crawler decodes them, in the
//! benchmark's visible-text coordinates.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `../../../shared/<name>` relative to the crate, if present. Panics when it
/// is missing and `CI=true`.
pub fn locate(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(name);
    if dir.join("truth.json").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("devset {} missing and CI=true", dir.display());
    }
    eprintln!("note: {} not found, skipping devset test", dir.display());
    None
}

/// A loaded devset.
pub struct Devset {
    pub dir: PathBuf,
    pub truth: Value,
}

impl Devset {
    pub fn load(dir: PathBuf) -> Self {
        let truth = serde_json::from_str(
            &std::fs::read_to_string(dir.join("truth.json")).expect("truth.json"),
        )
        .expect("truth.json parses");
        Self { dir, truth }
    }

    /// `(work, chapter)` of every registered chapter, sorted.
    pub fn chapters(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let works = std::fs::read_dir(self.dir.join("works")).expect("works dir");
        for w in works.flatten() {
            let work = w.file_name().to_string_lossy().into_owned();
            if let Ok(files) = std::fs::read_dir(w.path().join("chapters")) {
                for f in files.flatten() {
                    let name = f.file_name().to_string_lossy().into_owned();
                    if let Some(ch) = name.strip_suffix(".txt") {
                        out.push((work.clone(), ch.to_owned()));
                    }
                }
            }
        }
        out.sort();
        out
    }

    pub fn chapter_text(&self, work: &str, chapter: &str) -> String {
        std::fs::read_to_string(
            self.dir
                .join("works")
                .join(work)
                .join("chapters")
                .join(format!("{chapter}.txt")),
        )
        .expect("chapter file")
    }

    /// Page ids (sorted) with their truth entry.
    pub fn pages(&self) -> Vec<(String, &Value)> {
        let mut v: Vec<(String, &Value)> = self.truth["pages"]
            .as_object()
            .expect("pages object")
            .iter()
            .map(|(k, v)| (k.clone(), v))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    pub fn page_text(&self, page_id: &str) -> String {
        let bytes = std::fs::read(self.dir.join("pages").join(page_id)).expect("page file");
        let decoded = copyhound_crawler::charset::decode_body(&bytes, None, None);
        copyhound_bench::visible::visible_text(&decoded.text)
    }
}
