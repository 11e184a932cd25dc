//! Measures both indexes and a linear scan on seeded data (release build):
//!
//! ```text
//! cargo run --release -p copyhound-index --example bench_index -- \
//!     --n 1000000 --queries 100000 --k 3 [--seed 42] [--redis redis://127.0.0.1:6390]
//! ```

use copyhound_index::bench::{BenchParams, run_bench};

fn main() -> anyhow_free::Result {
    let mut params = BenchParams {
        n: 1_000_000,
        queries: 100_000,
        k: 3,
        seed: 42,
        redis_url: None,
        redis_cluster: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => params.n = value.parse()?,
            "--queries" => params.queries = value.parse()?,
            "--k" => params.k = value.parse()?,
            "--seed" => params.seed = value.parse()?,
            "--redis" => params.redis_url = Some(value),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(run_bench(params))?;
    print!("{report}");
    Ok(())
}

mod anyhow_free {
    pub type Result = std::result::Result<(), Box<dyn std::error::Error>>;
}
