use async_trait::async_trait;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::TaskHandler;
use copyhound_core::{Error, Result};

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

#[async_trait]
impl TaskHandler for MatcherHandler {
    async fn handle(&self, task: &Task) -> Result<()> {
        let ports = &self.ports;
        match &task.kind {
            TaskKind::FingerprintPage {
                page_id,
                content_sha256,
            } => {
                fingerprinting::fingerprint_page(ports, &self.chapters, page_id, content_sha256)
                    .await
            }
            TaskKind::FingerprintWork { work_id } => {
                fingerprinting::fingerprint_work(ports, work_id).await
            }
            TaskKind::ComparePage {
                page_id,
                content_sha256,
            } => compare::compare_page(ports, &self.chapters, page_id, content_sha256).await,
            TaskKind::BackfillWork { work_id } => backfill::backfill_work(ports, work_id).await,
            other => Err(Error::internal(format!(
                "the matcher does not handle {} tasks",
                other.name()
            ))),
        }
    }
}
