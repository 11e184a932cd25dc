use std::sync::Arc;

use copyhound_core::config::MatcherConfig;
use copyhound_core::ports::{
    FingerprintIndex, FingerprintStore, MatchStore, PageStore, PublisherStore, SiteStore,
    TaskQueue, WorkStore,
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
    /// Publishers, for their infringement policies.
    pub publishers: Arc<dyn PublisherStore>,
    /// Crawled pages.
    pub pages: Arc<dyn PageStore>,
    /// Watched sites, for their reach.
    pub sites: Arc<dyn SiteStore>,
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

/// A candidate's work and the bar its publisher sets for it.
#[derive(Clone, Debug)]
pub(crate) struct WorkContext {
    pub work: copyhound_core::model::Work,
    /// `[matcher]` with the publisher's policy for the work's kind applied.
    pub config: MatcherConfig,
}

/// Loads the work and its publisher's policy, once per page and work.
pub(crate) async fn work_context<'a>(
    ports: &MatcherPorts,
    works: &'a mut std::collections::HashMap<copyhound_core::ids::WorkId, WorkContext>,
    work_id: &copyhound_core::ids::WorkId,
) -> copyhound_core::Result<&'a WorkContext> {
    if !works.contains_key(work_id) {
        let work = ports.works.get_work_any(work_id).await?;
        let config =
            copyhound_intake::policy::for_work(ports.publishers.as_ref(), &ports.config, &work)
                .await?;
        works.insert(work_id.clone(), WorkContext { work, config });
    }
    works
        .get(work_id)
        .ok_or_else(|| copyhound_core::Error::internal("work context vanished"))
}
