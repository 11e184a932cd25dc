//! The ports: the traits every backend implements. Stages depend on these traits
//! only (as `Arc<dyn Trait>`), never on a concrete backend, so the embedded
//! default and the production engines (MongoDB, Redis) are interchangeable and
//! one conformance suite per trait holds every implementation to the same contract.
//!
//! Common rules: every write is idempotent (a retried task converges to the same
//! state); a backend that is down answers a retryable error
//! ([`crate::ErrorKind::Unavailable`]), never a partial success reported as
//! success; `check_connectivity` is cheap and used by `/health`.

mod bundle;
mod fetcher;
mod handler;
mod index;
mod paging;
mod queue;
mod recipients;
mod store;

pub use bundle::Ports;
pub use fetcher::{FetchRequest, FetchedPage, Fetcher, Resource};
pub use handler::TaskHandler;
pub use index::{EntryKind, FingerprintIndex, IndexEntry, IndexHit, IndexStats};
pub use paging::{Pages, collect_all};
pub use queue::{AckId, DeadTask, QueueStats, ReceivedTask, TaskQueue};
pub use recipients::{
    MemoryRecipientLookup, RECIPIENT_HEADER_PAGES, RecipientLookup, RecipientQuery, recipient_query,
};
pub use store::{
    FingerprintStore, MAX_LISTED_KEYS, MatchFilter, MatchFilterInput, MatchOrder, MatchStore,
    PageRequest, PageStore, PageUpsert, Paged, PublisherStore, ReportStore, SiteStore, WorkStore,
};
