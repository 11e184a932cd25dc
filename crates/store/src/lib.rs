//! Stores: where CopyHound keeps what it learns (works, sites, pages with their
//! history, fingerprints, matches, reports). Production uses MongoDB; the embedded
//! default keeps the same data in a local transactional file, so a single binary
//! works without services. Both implement the store ports of `copyhound-core` and
//! pass one conformance suite, which is what makes them interchangeable.
//!
//! What this crate guarantees on top of the ports: every write is idempotent on a
//! natural key (a retried task converges), page bodies are compressed and capped,
//! driver errors become core [`ErrorKind`]s in one place per backend (a backend
//! that is down answers a retryable `Unavailable`), and the schema is versioned by
//! the numbered files of `migrations/`. It does not decide *what* to store: the
//! crawler and the matcher do.
//!
//! [`ErrorKind`]: copyhound_core::ErrorKind
#![warn(missing_docs)]

mod codec;
pub mod collections;
pub mod local;
pub mod migrate;
#[cfg(feature = "mongodb")]
pub mod mongo;
mod stores;

#[cfg(test)]
mod tests;

pub use codec::{DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, MAX_PAGE_VERSIONS, StoreLimits};
pub use local::LocalStore;
pub use migrate::{MigrationStatus, Migrator};
#[cfg(feature = "mongodb")]
pub use mongo::MongoStore;
pub use stores::{Stores, migrate_status, migrate_up};
