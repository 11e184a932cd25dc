//! The vocabulary of CopyHound: ids, domain types, error kinds with stable codes,
//! configuration, and the ports (traits) that every backend implements.
//!
//! Everything else depends on this crate and it depends on no other workspace
//! crate but the pure `fingerprint` engine (whose `CopiedSpan` it re-exports),
//! so the dependency graph points one way: stages and backends know the ports,
//! the ports know nothing of backends. Only the CLI picks concrete backends,
//! from the configuration.
#![warn(missing_docs)]

pub mod api_keys;
pub mod backoff;
pub mod charset;
pub mod chromium;
pub mod config;
pub mod error;
pub mod html;
pub mod ids;
pub mod model;
pub mod net;
pub mod ports;
pub mod schedule;
pub mod site;
pub mod stages;
pub mod test_services;
pub mod urls;
pub mod utf8;

pub use error::{Error, ErrorKind, Result};
