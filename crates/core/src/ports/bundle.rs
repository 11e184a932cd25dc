//! The one bundle of ports a stage holds. Every caller (the API, the workers,
//! the schedulers, the CLI) takes the same value, so a new port is added in one
//! place and a function written against `&Ports` runs on any backend.

use std::sync::Arc;

use super::{
    FingerprintIndex, FingerprintStore, MatchStore, PageStore, PublisherStore, ReportStore,
    SiteStore, TaskQueue, WorkStore,
};

/// Every port of one deployment, as trait objects.
#[derive(Clone, Debug)]
pub struct Ports {
    /// Publishers and API keys.
    pub publishers: Arc<dyn PublisherStore>,
    /// Works and chapters.
    pub works: Arc<dyn WorkStore>,
    /// Sites and crawl runs.
    pub sites: Arc<dyn SiteStore>,
    /// Crawled pages.
    pub pages: Arc<dyn PageStore>,
    /// Fingerprint records.
    pub fingerprints: Arc<dyn FingerprintStore>,
    /// Matches and reviews.
    pub matches: Arc<dyn MatchStore>,
    /// Reports, alert state and artifacts.
    pub reports: Arc<dyn ReportStore>,
    /// The segment index.
    pub index: Arc<dyn FingerprintIndex>,
    /// The task queue.
    pub queue: Arc<dyn TaskQueue>,
}
