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
