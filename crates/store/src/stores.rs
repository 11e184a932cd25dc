//! The bundle callers hold: every store port of one backend. Which backend a
//! configuration names is the runtime's to resolve.

use std::path::Path;
use std::sync::Arc;

use copyhound_core::Result;
use copyhound_core::ports::{
    FingerprintIndex, FingerprintStore, MatchStore, PageStore, Ports, PublisherStore, ReportStore,
    SiteStore, TaskQueue, WorkStore,
};

use crate::codec::StoreLimits;
use crate::local::LocalStore;
use crate::migrate::{self, MigrationStatus, Migrator};

/// Every store port of one backend, as trait objects.
#[derive(Clone, Debug)]
pub struct Stores {
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
    /// Reports and artifacts.
    pub reports: Arc<dyn ReportStore>,
    /// Schema migrations of the same backend.
    pub migrator: Arc<dyn Migrator>,
}

impl Stores {
    /// Returns the ports every stage takes: these stores with `index` and `queue`.
    pub fn ports(&self, index: Arc<dyn FingerprintIndex>, queue: Arc<dyn TaskQueue>) -> Ports {
        Ports {
            publishers: self.publishers.clone(),
            works: self.works.clone(),
            sites: self.sites.clone(),
            pages: self.pages.clone(),
            fingerprints: self.fingerprints.clone(),
            matches: self.matches.clone(),
            reports: self.reports.clone(),
            index,
            queue,
        }
    }

    /// Returns the bundle of one value implementing every port.
    pub fn from_backend<S>(backend: Arc<S>) -> Self
    where
        S: PublisherStore
            + WorkStore
            + SiteStore
            + PageStore
            + FingerprintStore
            + MatchStore
            + ReportStore
            + Migrator,
    {
        Self {
            publishers: backend.clone(),
            works: backend.clone(),
            sites: backend.clone(),
            pages: backend.clone(),
            fingerprints: backend.clone(),
            matches: backend.clone(),
            reports: backend.clone(),
            migrator: backend,
        }
    }

    /// Opens the embedded store in `dir` (file `store.redb`), default limits.
    pub fn local(dir: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::from_backend(Arc::new(LocalStore::open(dir)?)))
    }

    /// Opens the embedded store in `dir` with `limits`.
    pub fn local_with(dir: impl AsRef<Path>, limits: StoreLimits) -> Result<Self> {
        Ok(Self::from_backend(Arc::new(LocalStore::open_with(
            dir, limits,
        )?)))
    }

    /// Connects to MongoDB at `url` (database `database`), default limits. Does
    /// not wait for the server: the first operation reports `Unavailable` if it is down.
    #[cfg(feature = "mongodb")]
    pub async fn mongo(url: &str, database: &str) -> Result<Self> {
        Self::mongo_with(url, database, StoreLimits::default()).await
    }

    /// Connects to MongoDB at `url` (database `database`) with `limits`.
    #[cfg(feature = "mongodb")]
    pub async fn mongo_with(url: &str, database: &str, limits: StoreLimits) -> Result<Self> {
        Ok(Self::from_backend(Arc::new(
            crate::mongo::MongoStore::connect(url, database, limits).await?,
        )))
    }

    /// Returns `Ok` when the backend answers.
    pub async fn check_connectivity(&self) -> Result<()> {
        self.publishers.check_connectivity().await
    }
}

/// Returns every known migration and whether (and when) it was applied.
pub async fn migrate_status(stores: &Stores) -> Result<Vec<MigrationStatus>> {
    migrate::status_of(&stores.migrator.applied().await?)
}

/// Applies pending migrations; returns how many this call applied. Safe to run
/// twice and from several processes at once.
pub async fn migrate_up(stores: &Stores) -> Result<usize> {
    stores.migrator.up().await
}
