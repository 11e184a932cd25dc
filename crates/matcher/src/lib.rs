//! The comparison workers. A crawled page is only evidence once something has
//! shown, span by span, that it carries a registered chapter; this crate does that
//! and nothing else: fingerprint what arrives, ask the index for candidate chapters
//! (so the cost does not grow with the number of registered works), verify each
//! candidate precisely, and keep the ones that clear the configured evidence bar as
//! matches with spans and side-by-side excerpts.
//!
//! [`MatcherHandler`] is the stage's task handler; the runtime crate routes the
//! fingerprinting, comparison and back-fill tasks to it.
#![warn(missing_docs)]

mod backfill;
mod candidates;
mod chapters;
mod compare;
mod context;
mod evidence;
mod fingerprinting;
mod handler;
mod lookup;
mod recovery;

pub use compare::{Decision, MATCH_ID_VERSION, decide};
pub use context::MatcherPorts;
pub use fingerprinting::to_record;
pub use handler::MatcherHandler;
pub use recovery::{RequeueOutcome, requeue_pending_works};
