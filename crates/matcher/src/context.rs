use std::sync::Arc;

use copyhound_core::config::MatcherConfig;
use copyhound_core::ports::{
    FingerprintIndex, FingerprintStore, MatchStore, PageStore, TaskQueue, WorkStore,
};
use copyhound_fingerprint::Fingerprinter;

/// Returns the page if it still has `content_sha256`; `None` when it changed since
/// the task was queued (a newer task handles the new content).
pub(crate) async fn page_at(
    ports: &MatcherPorts,
    page_id: &copyhound_core::ids::PageId,
    content_sha256: &str,
) -> copyhound_core::Result<Option<copyhound_core::model::Page>> {
    let page = ports.pages.get_page(page_id).await?;
    if page.content_sha256 != content_sha256 {
        tracing::debug!(page_id = %page_id, "page changed since the task was queued; skipping");
        return Ok(None);
    }
    Ok(Some(page))
}

/// The ports and settings the comparison handlers need.
#[derive(Clone, Debug)]
pub struct MatcherPorts {
    /// Registered works and chapters.
    pub works: Arc<dyn WorkStore>,
    /// Crawled pages.
    pub pages: Arc<dyn PageStore>,
    /// Fingerprints of chapters and pages.
    pub fingerprints: Arc<dyn FingerprintStore>,
    /// Matches.
    pub matches: Arc<dyn MatchStore>,
    /// The segment index.
    pub index: Arc<dyn FingerprintIndex>,
    /// The task queue, for follow-up tasks.
    pub queue: Arc<dyn TaskQueue>,
    /// The fingerprint engine, built once.
    pub fingerprinter: Arc<Fingerprinter>,
    /// Evidence thresholds.
    pub config: MatcherConfig,
}
