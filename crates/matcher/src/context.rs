use std::sync::Arc;

use copyhound_core::config::MatcherConfig;
use copyhound_core::ports::Ports;
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

/// What the comparison handlers need: the ports bundle (which this derefs
/// to, so `ports.works` reads as everywhere else), the fingerprint engine and
/// the installation's thresholds.
#[derive(Clone, Debug)]
pub struct MatcherPorts {
    /// Stores, index and queue.
    pub ports: Ports,
    /// The fingerprint engine, built once.
    pub fingerprinter: Arc<Fingerprinter>,
    /// Evidence thresholds.
    pub config: MatcherConfig,
}

impl std::ops::Deref for MatcherPorts {
    type Target = Ports;

    fn deref(&self) -> &Ports {
        &self.ports
    }
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
