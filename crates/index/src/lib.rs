//! The near-duplicate index: which stored 64-bit fingerprints lie within Hamming
//! distance k of a query. Production shares one Redis segment index between all
//! workers; the embedded default keeps an in-memory index persisted as a snapshot
//! plus a write-ahead log. Both implement `FingerprintIndex` from
//! `copyhound-core` and answer exactly.
//!
//! Both use the same pigeonhole layout ([`layout`]): `max_distance + 1` segment
//! tables, fixed per index, so a query probes one bucket per table and verifies
//! candidates with a popcount, with no false negatives or positives. This crate
//! does not decide what counts as a copy (the matcher does) and does not store
//! fingerprint records (the store does); the index can always be rebuilt from
//! the store with [`rebuild_index`].
#![warn(missing_docs)]

pub mod bench;
pub mod layout;
mod memory;
mod rebuild;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(test, feature = "testsuite"))]
pub mod testsuite;

pub use memory::{LOG_FILE, MemoryFingerprintIndex, SNAPSHOT_FILE};
pub use rebuild::{entries_for_record, rebuild_index};
#[cfg(feature = "redis")]
pub use redis::{RedisFingerprintIndex, RedisIndexOptions};

#[cfg(test)]
mod tests;
