//! Evaluation and benchmark tooling, kept out of the production stages (no
//! stage crate depends on it; the `copyhound` binary links it, and its
//! `worker` and `crawl` commands use [`PageCounter`] for progress): `copyhound eval` on labeled
//! benchmarks through the real pipeline, the loopback sites it crawls, the
//! benchmarks' reference visible-text extractor that span offsets are defined
//! on, `bench extract` (reading pages through their CSS against the markup
//! alone), `bench compare` (comparison throughput against corpus size) and
//! `bench pipeline` (end-to-end throughput of worker and crawler processes)
//! and `bench latency` (time from a copy's appearance to its alert, against a
//! farm of loopback sites).
#![warn(missing_docs)]

mod args;
pub mod compare;
pub mod eval;
pub mod extract;
pub mod latency;
pub mod pipeline;
mod progress;
pub mod static_sites;
pub mod visible;

pub use args::{
    BenchCompareArgs, BenchExtractArgs, BenchLatencyArgs, BenchPipelineArgs, EvalArgs, EvalBackends,
};
pub use eval::{PipelineRun, default_set, run_pipeline};
pub use progress::PageCounter;
