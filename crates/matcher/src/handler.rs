use copyhound_core::Result;
use copyhound_core::ids::{PageId, WorkId};

use std::sync::Arc;

use crate::chapters::ChapterCache;
use crate::context::MatcherPorts;
use crate::{backfill, compare, fingerprinting};

/// The matcher stage's task handler: fingerprinting of pages and works,
/// comparison, and back-fill of newly registered works.
#[derive(Debug, Clone)]
pub struct MatcherHandler {
    ports: MatcherPorts,
    chapters: Arc<ChapterCache>,
}

impl MatcherHandler {
    /// Returns the handler over `ports`.
    pub fn new(ports: MatcherPorts) -> Self {
        let chapters = Arc::new(ChapterCache::new(
            ports.config.chapter_cache_mib.saturating_mul(1 << 20),
        ));
        Self { ports, chapters }
    }

    /// Returns the ports.
    pub fn ports(&self) -> &MatcherPorts {
        &self.ports
    }
}

/// The matcher stage's tasks, one method per kind: the runtime's dispatcher
/// matches the task kind (the one map from kind to stage) and calls these.
impl MatcherHandler {
    /// Runs `fingerprint_page`: fingerprints and indexes the page at
    /// `content_sha256` (a newer content makes the task stale), then compares it.
    pub async fn fingerprint_page(&self, page_id: &PageId, content_sha256: &str) -> Result<()> {
        fingerprinting::fingerprint_page(&self.ports, &self.chapters, page_id, content_sha256).await
    }

    /// Runs `fingerprint_work`: fingerprints and indexes every chapter of the
    /// work, then queues its back-fill.
    pub async fn fingerprint_work(&self, work_id: &WorkId) -> Result<()> {
        fingerprinting::fingerprint_work(&self.ports, work_id).await
    }

    /// Runs `compare_page`: compares the page fingerprinted at
    /// `content_sha256` against the registered works.
    pub async fn compare_page(&self, page_id: &PageId, content_sha256: &str) -> Result<()> {
        compare::compare_page(&self.ports, &self.chapters, page_id, content_sha256).await
    }

    /// Runs `backfill_work`: queues `compare_page` for the pages already
    /// crawled whose index entries hit the work.
    pub async fn backfill_work(&self, work_id: &WorkId) -> Result<()> {
        backfill::backfill_work(&self.ports, work_id).await
    }
}
