//! Insert throughput of the in-memory index with and without its write-ahead
//! log, in the same run (release build; the log syncs every write to disk):
//!
//! ```text
//! cargo run --release -p copyhound-index --example bench_log -- [--n 200000] [--dir /var/tmp]
//! ```

use std::sync::Arc;
use std::time::Instant;

use copyhound_core::ports::{FingerprintIndex, IndexEntry};
use copyhound_index::MemoryFingerprintIndex;
use copyhound_index::bench::{BenchParams, bench_data};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut n = 200_000;
    let mut dir = std::env::temp_dir();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => n = value.parse()?,
            "--dir" => dir = value.into(),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let params = BenchParams {
        n,
        queries: 1,
        k: 3,
        seed: 42,
        redis_url: None,
        redis_cluster: false,
    };
    let (entries, _) = bench_data(&params);
    let runtime = tokio::runtime::Runtime::new()?;
    println!("{n} entries; entries per second, memory vs memory + log (log syncs every write)");
    for (batch, writers) in [(50, 1), (300, 1), (300, 4), (5_000, 1), (50_000, 1)] {
        let memory = Arc::new(MemoryFingerprintIndex::new(3)?);
        let plain = runtime.block_on(time_inserts(memory, &entries, batch, writers))?;
        let scratch = scratch_dir(&dir, batch * 10 + writers)?;
        let logged = runtime.block_on(async {
            let durable = Arc::new(MemoryFingerprintIndex::open(&scratch, 3).await?);
            time_inserts(durable, &entries, batch, writers).await
        })?;
        std::fs::remove_dir_all(&scratch)?;
        println!(
            "batch {batch:>6}, {writers} writer(s): {plain:>10.0} vs {logged:>10.0}  log/plain time = {:.2}",
            plain / logged
        );
    }
    Ok(())
}

/// Returns entries inserted per second by `writers` concurrent tasks.
async fn time_inserts(
    index: Arc<MemoryFingerprintIndex>,
    entries: &[IndexEntry],
    batch: usize,
    writers: usize,
) -> copyhound_core::Result<f64> {
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for part in entries.chunks(entries.len().div_ceil(writers)) {
        let index = Arc::clone(&index);
        let part = part.to_vec();
        tasks.spawn(async move {
            for chunk in part.chunks(batch) {
                index.insert(chunk).await?;
            }
            Ok::<_, copyhound_core::Error>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|error| copyhound_core::Error::internal(error.to_string()))??;
    }
    Ok(entries.len() as f64 / started.elapsed().as_secs_f64())
}

fn scratch_dir(root: &std::path::Path, batch: usize) -> std::io::Result<std::path::PathBuf> {
    let dir = root.join(format!(
        "copyhound-bench-log-{}-{batch}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
