//! The crawler: scheduled, polite, bounded fetching of suspected piracy sites,
//! charset decoding, main-text extraction and a per-run frontier. Hostile input
//! (endless bodies, redirect loops, lying charsets) is bounded and recorded per
//! page, never a crash or a hang.
#![warn(missing_docs)]
// Web content is hostile: slicing a string at a byte offset panics inside a
// multi-byte character, so offsets must be checked (`str::get`, `split_at_checked`).
#![deny(clippy::string_slice)]

pub use copyhound_core::{charset, site, urls};
pub mod crawl;
pub mod discover;
pub mod extract;
mod extract_fallback;
pub mod fetch;
pub mod fonts;
pub mod pacer;
pub mod rdap;
pub mod render;
pub mod scheduler;
pub mod style;
pub mod text;
pub mod watch;

pub use crawl::{CrawlHandler, CrawlProgress, Crawler, NoProgress, PageOutcome, PageReport};
pub use fetch::HttpFetcher;
pub use rdap::RdapRecipientLookup;
pub use scheduler::Scheduler;
