//! The comparison workers. A crawled page is only evidence once something has
//! shown, span by span, that it carries a registered chapter; this crate does that
//! and nothing else: fingerprint what arrives, ask the index for candidate chapters
//! (so the cost does not grow with the number of registered works), verify each
//! candidate precisely, and keep the ones that clear the configured evidence bar as
//! matches with spans and side-by-side excerpts.
//!
//! It also hosts the generic worker loop (`Worker`) that every task kind runs in:
//! the crawler and the report generator plug their handlers into it.
#![warn(missing_docs)]

mod backfill;
mod candidates;
mod compare;
mod context;
mod evidence;
mod fingerprinting;
mod lookup;
mod pipeline;
mod recovery;
mod worker;

pub use compare::{Decision, decide};
pub use context::MatcherPorts;
pub use fingerprinting::to_record;
pub use pipeline::Pipeline;
pub use recovery::{RequeueOutcome, requeue_pending_works};
pub use worker::{TaskHandler, TickOutcome, Worker, WorkerConfig};
