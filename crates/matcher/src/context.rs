use std::sync::Arc;

use copyhound_core::config::MatcherConfig;
use copyhound_core::ports::{
    FingerprintIndex, FingerprintStore, MatchStore, PageStore, TaskQueue, WorkStore,
};
use copyhound_fingerprint::Fingerprinter;

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
