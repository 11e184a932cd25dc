//! The runtime: one place that turns a configuration into a running node.
//!
//! [`Node::build`] resolves every backend once, by URL scheme (no URL: the
//! embedded default under `data_dir`), and assembles what a process runs: the
//! worker pool over the task queue, the [`Dispatcher`] that hands each task to
//! its stage's handler (each stage crate exports its own), and the schedulers
//! (site crawls, `[reports]` schedules and alerts). `serve`, `worker`,
//! `scheduler`, `eval` and `demo` are all a node plus what the command adds.
//!
//! Why a crate of its own: the stages stay ignorant of each other and of
//! backends; only this crate (and tests) name concrete backends, so wiring
//! exists once.
#![warn(missing_docs)]

mod backends;
mod dispatch;
mod mail;
mod node;
mod timestamp;
mod webhook;
mod worker;

pub use backends::{Backends, DataDirLock, open_index, open_queue, open_stores};
pub use dispatch::Dispatcher;
pub use mail::SmtpMailTransport;
pub use node::{Node, fingerprinter};
pub use timestamp::{HttpTimestampAuthority, bundle_options};
pub use webhook::HttpWebhookTransport;
pub use worker::{Ran, Tick, TickOutcome, Worker, WorkerSettings};
