//! Intake: everything that enters CopyHound comes in here, whichever door it
//! used (the HTTP API, the console, the CLI, the scheduler, `eval`). A work,
//! a site, a crawl run or a policy is checked, defaulted and written by one
//! function each, so the doors cannot disagree on limits, ids or write order.
//!
//! The crate sits below `server` and `runtime` and above `core`: it speaks only
//! to the ports ([`copyhound_core::ports::Ports`]), never to a backend, and
//! parses uploads (TXT, EPUB, XHTML, JSON) without IO so fuzz tests can drive it.
#![warn(missing_docs)]

pub mod crawls;
pub mod formats;
pub mod import;
pub mod policy;
pub mod sites;
pub mod suggestions;
pub mod watch;
pub mod works;
