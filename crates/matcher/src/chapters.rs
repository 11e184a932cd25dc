//! Prepared chapters kept between pages. A crawl brings the pages of one
//! site's copy of a book in reading order, so the same few chapters are
//! verified against page after page; normalizing and seeding a chapter
//! costs about as much as verifying it, so it is done once per chapter text.
//! Keyed by the text's SHA-256: an edited chapter is prepared anew, and the
//! store is still read for every candidate, so a deleted work is noticed.

use std::convert::Infallible;
use std::sync::Arc;

use copyhound_core::model::Chapter;
use copyhound_core::stages::{Stage, time};
use copyhound_fingerprint::{Fingerprinter, PreparedChapter};
use quick_cache::Weighter;
use quick_cache::sync::Cache;

/// A prepared chapter and what it weighs.
#[derive(Clone)]
struct Entry {
    prepared: Arc<PreparedChapter>,
    bytes: u64,
}

#[derive(Clone, Copy)]
struct ByBytes;

impl Weighter<String, Entry> for ByBytes {
    fn weight(&self, _key: &String, entry: &Entry) -> u64 {
        entry.bytes.max(1)
    }
}

/// Prepared chapters, bounded by their heap bytes.
pub(crate) struct ChapterCache {
    cache: Option<Cache<String, Entry, ByBytes>>,
}

impl std::fmt::Debug for ChapterCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChapterCache")
            .field("entries", &self.cache.as_ref().map_or(0, Cache::len))
            .field("bytes", &self.cache.as_ref().map_or(0, Cache::weight))
            .finish()
    }
}

/// A chapter of this many characters weighs about this many bytes prepared:
/// sizes the cache's table.
const TYPICAL_CHAPTER_BYTES: u64 = 4_000 * 60;

impl ChapterCache {
    /// A cache of at most `max_bytes` (0: none, every chapter is prepared each time).
    pub(crate) fn new(max_bytes: u64) -> Self {
        let cache = (max_bytes > 0).then(|| {
            let items = usize::try_from(max_bytes / TYPICAL_CHAPTER_BYTES)
                .unwrap_or(usize::MAX)
                .clamp(16, 1 << 20);
            Cache::with_weighter(items, max_bytes, ByBytes)
        });
        Self { cache }
    }

    /// The chapter prepared for verification; blocking (CPU work on a miss).
    pub(crate) fn prepared(
        &self,
        fingerprinter: &Fingerprinter,
        chapter: &Chapter,
    ) -> Arc<PreparedChapter> {
        let prepare = || {
            time(Stage::ChapterLoad, || {
                let prepared =
                    fingerprinter.prepare_chapter(&fingerprinter.normalize(&chapter.text));
                let bytes = u64::try_from(prepared.heap_bytes()).unwrap_or(u64::MAX);
                Entry {
                    prepared: Arc::new(prepared),
                    bytes,
                }
            })
        };
        let Some(cache) = &self.cache else {
            return prepare().prepared;
        };
        let found: Result<Entry, Infallible> =
            cache.get_or_insert_with(chapter.content_sha256.as_str(), || Ok(prepare()));
        match found {
            Ok(entry) => entry.prepared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copyhound_core::ids::{ChapterId, WorkId};
    use copyhound_fingerprint::FingerprintConfig;

    fn chapter(text: &str) -> Chapter {
        Chapter::new(
            "w1".parse::<WorkId>().expect("valid id"),
            "c1".parse::<ChapterId>().expect("valid id"),
            1,
            "第一章".into(),
            text.into(),
        )
    }

    #[test]
    fn a_chapter_is_prepared_once_per_text() {
        let fingerprinter =
            Fingerprinter::new(FingerprintConfig::default()).expect("fingerprinter");
        let cache = ChapterCache::new(64 << 20);
        let first = chapter(&"叔宝众人出了酒店，行至街上，见灯烛辉煌。".repeat(20));
        let again = cache.prepared(&fingerprinter, &first);
        assert!(Arc::ptr_eq(&again, &cache.prepared(&fingerprinter, &first)));
        // The same ids with an edited text: prepared anew, not served stale.
        let edited = chapter(&"雄信听了，心中大怒，拍案而起。".repeat(20));
        let fresh = cache.prepared(&fingerprinter, &edited);
        assert!(!Arc::ptr_eq(&again, &fresh));
        assert_eq!(
            fresh.text().chars,
            fingerprinter.normalize(&edited.text).chars
        );
    }

    #[test]
    fn the_cache_stays_within_its_bytes() {
        let fingerprinter =
            Fingerprinter::new(FingerprintConfig::default()).expect("fingerprinter");
        let cache = ChapterCache::new(1 << 20);
        for n in 0..200 {
            let text = format!(
                "{}{n}",
                "叔宝众人出了酒店，行至街上，见灯烛辉煌。".repeat(40)
            );
            cache.prepared(&fingerprinter, &chapter(&text));
        }
        let cache = cache.cache.as_ref().expect("a bounded cache");
        assert!(cache.weight() <= 1 << 20, "{} bytes", cache.weight());
        assert!(cache.len() < 200);
    }

    #[test]
    fn a_zero_budget_prepares_every_time() {
        let fingerprinter =
            Fingerprinter::new(FingerprintConfig::default()).expect("fingerprinter");
        let cache = ChapterCache::new(0);
        let text = chapter(&"叔宝众人出了酒店。".repeat(30));
        let first = cache.prepared(&fingerprinter, &text);
        assert!(!Arc::ptr_eq(&first, &cache.prepared(&fingerprinter, &text)));
    }
}
