//! `copyhound bench`: benchmarks with their baseline measured in the same run,
//! so figures are ratios that survive a noisy machine.

use std::process::ExitCode;

use copyhound_core::config::Config;
use copyhound_index::bench::{BenchParams, run_bench};

use crate::cli::{BenchCommand, BenchIndexArgs};

pub async fn run(config: &Config, command: BenchCommand) -> anyhow::Result<ExitCode> {
    match command {
        BenchCommand::Index(args) => index(config, args).await,
        BenchCommand::Compare(args) => copyhound_bench::compare::run(args).await,
        BenchCommand::Extract(args) => copyhound_bench::extract::run(args),
        BenchCommand::Pipeline(args) => copyhound_bench::pipeline::run(config, args).await,
        BenchCommand::Latency(args) => copyhound_bench::latency::run(config, args).await,
    }
}

async fn index(config: &Config, args: BenchIndexArgs) -> anyhow::Result<ExitCode> {
    let redis_url = args.redis_url.or_else(|| config.index.url.clone());
    eprintln!(
        "building indexes over {} fingerprints, {} queries, k = {} ...",
        args.n, args.queries, args.k
    );
    let report = run_bench(BenchParams {
        n: args.n,
        queries: args.queries,
        k: args.k,
        seed: args.seed,
        redis_url,
        redis_cluster: config.index.cluster,
    })
    .await?;
    println!("{report}");
    Ok(ExitCode::SUCCESS)
}
