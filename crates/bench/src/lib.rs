//! Evaluation and benchmark tooling, kept out of every production process (the
//! server and the workers never link it): `copyhound eval` on labeled
//! benchmarks through the real pipeline, the loopback sites it crawls, the
//! benchmarks' reference visible-text extractor that span offsets are defined
//! on, `bench extract` (reading pages through their CSS against the markup
//! alone), `bench compare` (comparison throughput against corpus size) and
//! `bench pipeline` (end-to-end throughput of worker and crawler processes).
#![warn(missing_docs)]

mod args;
pub mod compare;
pub mod eval;
pub mod extract;
pub mod pipeline;
mod progress;
pub mod static_sites;
pub mod visible;

pub use args::{BenchCompareArgs, BenchExtractArgs, BenchPipelineArgs, EvalArgs, EvalBackends};
pub use eval::{PipelineRun, default_set, run_pipeline};
pub use progress::PageCounter;
