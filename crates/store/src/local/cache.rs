//! Decoded chapters kept in memory. Comparing reads every candidate chapter
//! of every page, so one chapter is read hundreds of times between two
//! writes of it (registration, a status change, deletion); decoding it anew
//! each time (JSON to a document tree to the model) was 2 % of the CPU of a
//! devset run. redb locks its file to one process, so every write of a
//! chapter passes through this store, and evicting what it wrote keeps the
//! cache exact: a read that began before a write never leaves what it
//! read in the cache once the write has returned (the generation check).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use copyhound_core::model::Chapter;
use quick_cache::Weighter;
use quick_cache::sync::Cache;

/// Heap bytes the cache may hold.
const MAX_BYTES: u64 = 64 << 20;

/// Bytes a chapter weighs besides its text.
const OVERHEAD_BYTES: u64 = 256;

#[derive(Clone, Copy)]
struct ByBytes;

impl Weighter<String, Arc<Chapter>> for ByBytes {
    fn weight(&self, _key: &String, chapter: &Arc<Chapter>) -> u64 {
        u64::try_from(chapter.text.len()).unwrap_or(u64::MAX) + OVERHEAD_BYTES
    }
}

/// Chapters by store key, bounded by their bytes.
pub(crate) struct ChapterCache {
    chapters: Cache<String, Arc<Chapter>, ByBytes>,
    /// Bumped by every chapter write: a read stores what it read only if no
    /// write finished since it began.
    generation: AtomicU64,
}

impl Default for ChapterCache {
    fn default() -> Self {
        // Sized for chapters of about 16 KiB.
        let items = usize::try_from(MAX_BYTES >> 14).unwrap_or(usize::MAX);
        Self {
            chapters: Cache::with_weighter(items, MAX_BYTES, ByBytes),
            generation: AtomicU64::new(0),
        }
    }
}

impl ChapterCache {
    /// The generation to pass to [`ChapterCache::keep`] after reading.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub(crate) fn get(&self, key: &str) -> Option<Arc<Chapter>> {
        self.chapters.get(key)
    }

    /// Keeps a chapter read from the database, unless a write ended since
    /// `generation` was taken (before the read).
    pub(crate) fn keep(&self, key: String, chapter: Arc<Chapter>, generation: u64) {
        self.chapters.insert(key.clone(), chapter);
        // A write bumps, then clears. Bumped before this check: the entry
        // goes here. After: its clear comes after the insert.
        if self.generation() != generation {
            self.chapters.remove(&key);
        }
    }

    /// Called after every write of chapters (committed or failed) with
    /// their keys.
    pub(crate) fn written<'a>(&self, keys: impl IntoIterator<Item = &'a str>) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        for key in keys {
            self.chapters.remove(key);
        }
    }

    /// Called after a write of chapters whose keys are not at hand (a work's deletion).
    pub(crate) fn written_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.chapters.clear();
    }
}
