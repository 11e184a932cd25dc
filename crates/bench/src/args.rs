//! Command-line arguments of the tooling commands (the CLI embeds them).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Arguments of `copyhound eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The benchmark folder (works/, pages/, optionally truth.json and tools/score.py).
    #[arg(long = "set", value_name = "DIR")]
    pub set: PathBuf,
    /// Predictions file (JSON lines).
    #[arg(long, default_value = "predictions.jsonl")]
    pub out: PathBuf,
    /// A fresh embedded instance, or the configured MongoDB + Redis (fresh database and key prefixes).
    #[arg(long, value_enum, default_value_t = EvalBackends::Embedded)]
    pub backends: EvalBackends,
    /// Tasks run at once (and as many site crawls) [default: worker.concurrency].
    #[arg(long)]
    pub concurrency: Option<u32>,
    /// Also write the scorer's metrics as JSON here.
    #[arg(long, value_name = "PATH")]
    pub metrics_json: Option<PathBuf>,
}

/// Which backends `eval` runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EvalBackends {
    /// A fresh embedded instance in a scratch directory.
    Embedded,
    /// The configured engines.
    Configured,
}

/// Arguments of `copyhound bench pipeline`.
#[derive(Debug, Args)]
pub struct BenchPipelineArgs {
    /// Benchmark folder (works/, pages/) [default: ../shared/devset].
    #[arg(long)]
    pub set: Option<PathBuf>,
    /// Worker process counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 4])]
    pub workers: Vec<usize>,
    /// Crawler process counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2])]
    pub crawlers: Vec<usize>,
    /// Tasks in flight per worker process.
    #[arg(long, default_value_t = 2)]
    pub concurrency: u32,
}

/// Arguments of `copyhound bench extract`.
#[derive(Debug, Args)]
pub struct BenchExtractArgs {
    /// Folder of saved pages (.html, .htm, .shtml), read recursively.
    #[arg(long)]
    pub pages: PathBuf,
    /// Rounds of each extractor, alternated; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
}

/// Arguments of `copyhound bench compare`.
#[derive(Debug, Args)]
pub struct BenchCompareArgs {
    /// Corpus sizes (registered chapters), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000usize, 10_000, 100_000])]
    pub chapters: Vec<usize>,
    /// Pages compared per corpus (half are copies).
    #[arg(long, default_value_t = 200)]
    pub pages: usize,
    /// Characters per chapter.
    #[arg(long, default_value_t = 1_500)]
    pub chapter_chars: usize,
    /// RNG seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
}

/// Arguments of `copyhound bench latency`.
#[derive(Debug, Args)]
pub struct BenchLatencyArgs {
    /// Piracy sites in the farm, each on its own loopback address and port.
    #[arg(long, default_value_t = 100)]
    pub sites: usize,
    /// Registered works (novels) the publisher releases chapters of.
    #[arg(long, default_value_t = 20)]
    pub works: usize,
    /// Length of the timed phase in minutes (releases, copies, alerts); the
    /// set-up and the first crawl of every site come before it.
    #[arg(long, default_value_t = 9.0)]
    pub minutes: f64,
    /// Seconds at the end of the timed phase in which no copy appears, so the
    /// last copies have time to be alerted [default: 180, at most a third of
    /// the phase].
    #[arg(long)]
    pub grace_seconds: Option<u64>,
    /// Longest delay of a site's copy after the release, seconds (the
    /// shortest is 10).
    #[arg(long, default_value_t = 600)]
    pub max_delay_seconds: u64,
    /// Longest wait for the first crawl of every site (not timed), seconds.
    #[arg(long, default_value_t = 240)]
    pub first_crawl_seconds: u64,
    /// A fresh embedded instance (`serve` runs workers and schedulers), or the
    /// configured MongoDB + Redis (`serve`, `worker` and `scheduler`
    /// processes; fresh database and key prefixes).
    #[arg(long, value_enum, default_value_t = EvalBackends::Embedded)]
    pub backends: EvalBackends,
    /// Worker processes with `--backends configured`.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// After the timed phase, wait for every release's burst to end and
    /// measure quiet watching this many minutes: requests per host per
    /// minute outside bursts (0: not measured).
    #[arg(long, default_value_t = 0.0)]
    pub quiet_minutes: f64,
    /// The product's `crawler.burst_minutes` for this run [default: the
    /// configuration's]; at most 30 with `--quiet-minutes`, which waits for
    /// the last burst to end.
    #[arg(long)]
    pub burst_minutes: Option<u64>,
    /// RNG seed: the same seed gives the same farm and timetable.
    #[arg(long, default_value_t = 36)]
    pub seed: u64,
    /// Also write every request the farm answered here, one a line: seconds
    /// from the start of the timed phase (negative before it), host, status, path.
    #[arg(long, value_name = "PATH")]
    pub requests_log: Option<std::path::PathBuf>,
}
