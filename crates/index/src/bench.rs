//! A reproducible benchmark of both indexes against a linear scan, on seeded
//! data: `n` passage fingerprints (16 per owner) and `queries` queries of which
//! half are planted near-duplicates (a stored fingerprint with 0..=k bits
//! flipped) and half random. The CLI's `bench index` command and the
//! `bench_index` example print its [`BenchReport`].

use std::fmt;
use std::time::Instant;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use copyhound_core::Result;
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry};

use crate::MemoryFingerprintIndex;
use crate::layout::hamming;

/// Entries per insert call.
const INSERT_BATCH: usize = 50_000;
/// Queries per `query_batch` call.
const QUERY_BATCH: usize = 10_000;
/// Queries the linear scan runs (it is slow; its time is per query).
const SCAN_QUERIES: usize = 200;

/// What to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchParams {
    /// Indexed fingerprints.
    pub n: usize,
    /// Queries.
    pub queries: usize,
    /// Query distance (also the indexes' max distance).
    pub k: u32,
    /// Seed of the data.
    pub seed: u64,
    /// Redis to measure too (keys under a fresh prefix, deleted afterwards).
    pub redis_url: Option<String>,
    /// That Redis is a cluster (also detected from the server).
    pub redis_cluster: bool,
}

/// One measured implementation.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    /// Implementation name.
    pub name: String,
    /// Time to insert all entries, seconds (none for the scan).
    pub build_seconds: Option<f64>,
    /// Entries inserted per second.
    pub inserts_per_second: Option<f64>,
    /// Mean time per query, microseconds (amortized over batches).
    pub micros_per_query: f64,
    /// Memory per entry, bytes.
    pub bytes_per_entry: f64,
    /// Hits over all queries (the scan: over its subset).
    pub hits: u64,
    /// Whether the answers to the scan's queries equal the scan's.
    pub agrees_with_scan: bool,
}

/// Results of [`run_bench`].
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    /// The parameters measured.
    pub params: BenchParams,
    /// One row per implementation, the linear scan last.
    pub rows: Vec<BenchRow>,
}

/// Builds seeded data, measures the memory index, the Redis index when a URL is
/// given, and a linear scan, all in this run.
pub async fn run_bench(params: BenchParams) -> Result<BenchReport> {
    let (entries, queries) = bench_data(&params);
    let fingerprints: Vec<u64> = entries.iter().map(|entry| entry.fingerprint).collect();
    let scan_queries = &queries[..queries.len().min(SCAN_QUERIES)];
    let started = Instant::now();
    let scan_hits: Vec<usize> = scan_queries
        .iter()
        .map(|query| {
            fingerprints
                .iter()
                .filter(|stored| hamming(**stored, *query) <= params.k)
                .count()
        })
        .collect();
    let scan_micros = started.elapsed().as_secs_f64() * 1e6 / scan_queries.len().max(1) as f64;

    let mut rows = Vec::new();
    let memory = MemoryFingerprintIndex::new(params.k)?;
    rows.push(
        measure(
            "memory",
            &memory,
            Some(&memory),
            &entries,
            &queries,
            &params,
            &scan_hits,
            None,
        )
        .await?,
    );
    #[cfg(feature = "redis")]
    if let Some(url) = &params.redis_url {
        rows.push(redis_row(url, &entries, &queries, &params, &scan_hits).await?);
    }
    rows.push(BenchRow {
        name: "linear scan".into(),
        build_seconds: None,
        inserts_per_second: None,
        micros_per_query: scan_micros,
        bytes_per_entry: 8.0,
        hits: scan_hits.iter().sum::<usize>() as u64,
        agrees_with_scan: true,
    });
    Ok(BenchReport { params, rows })
}

/// Returns the entries (16 per owner) and queries (half planted) of a run.
pub fn bench_data(params: &BenchParams) -> (Vec<IndexEntry>, Vec<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let entries: Vec<IndexEntry> = (0..params.n)
        .map(|index| IndexEntry {
            owner: format!("p:{:012x}", index / 16),
            kind: EntryKind::Passage,
            ordinal: (index % 16) as u32,
            fingerprint: rng.next_u64(),
        })
        .collect();
    let queries = (0..params.queries)
        .map(|index| {
            if index % 2 == 1 || entries.is_empty() {
                return rng.next_u64();
            }
            let mut query = entries[rng.random_range(0..entries.len())].fingerprint;
            for _ in 0..rng.random_range(0..=params.k) {
                query ^= 1 << rng.random_range(0..64);
            }
            query
        })
        .collect();
    (entries, queries)
}

/// `bulk`: the in-memory index, compacted into one run after the inserts
/// (inside the build time): the state a bulk load leaves for queries.
#[allow(clippy::too_many_arguments)]
async fn measure(
    name: &str,
    index: &dyn FingerprintIndex,
    bulk: Option<&MemoryFingerprintIndex>,
    entries: &[IndexEntry],
    queries: &[u64],
    params: &BenchParams,
    scan_hits: &[usize],
    memory_before: Option<u64>,
) -> Result<BenchRow> {
    let started = Instant::now();
    for batch in entries.chunks(INSERT_BATCH) {
        index.insert(batch).await?;
    }
    if let Some(memory) = bulk {
        memory.compact().await?;
    }
    let build_seconds = started.elapsed().as_secs_f64();
    let stats = index.stats().await?;
    let memory_bytes = stats
        .memory_bytes
        .saturating_sub(memory_before.unwrap_or(0));
    let started = Instant::now();
    let mut hits = 0_u64;
    let mut agrees_with_scan = true;
    for (batch_index, batch) in queries.chunks(QUERY_BATCH).enumerate() {
        let answers = index
            .query_batch(EntryKind::Passage, batch, params.k)
            .await?;
        hits += answers.iter().map(Vec::len).sum::<usize>() as u64;
        if batch_index == 0 {
            agrees_with_scan = scan_hits
                .iter()
                .zip(&answers)
                .all(|(expected, found)| *expected == found.len());
        }
    }
    let query_seconds = started.elapsed().as_secs_f64();
    Ok(BenchRow {
        name: name.into(),
        build_seconds: Some(build_seconds),
        inserts_per_second: Some(entries.len() as f64 / build_seconds.max(1e-9)),
        micros_per_query: query_seconds * 1e6 / queries.len().max(1) as f64,
        bytes_per_entry: memory_bytes as f64 / entries.len().max(1) as f64,
        hits,
        agrees_with_scan,
    })
}

#[cfg(feature = "redis")]
async fn redis_row(
    url: &str,
    entries: &[IndexEntry],
    queries: &[u64],
    params: &BenchParams,
    scan_hits: &[usize],
) -> Result<BenchRow> {
    use crate::{RedisFingerprintIndex, RedisIndexOptions};
    // As long as the default prefix: Redis charges key bytes per bucket.
    let prefix = format!("copyhound:b{:04x}:", rand::rng().next_u64() as u16);
    let config = copyhound_core::config::IndexConfig {
        url: Some(url.to_owned()),
        cluster: params.redis_cluster,
        prefix,
        max_distance: params.k,
    };
    let index =
        RedisFingerprintIndex::connect_with(url, &config, RedisIndexOptions::for_config(&config))
            .await?;
    let before = index.stats().await?.memory_bytes;
    let row = measure(
        "redis",
        &index,
        None,
        entries,
        queries,
        params,
        scan_hits,
        Some(before),
    )
    .await;
    index.destroy().await?;
    row
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params = &self.params;
        writeln!(
            f,
            "index bench: n={} queries={} k={} seed={}",
            params.n, params.queries, params.k, params.seed
        )?;
        writeln!(
            f,
            "{:<14} {:>9} {:>11} {:>10} {:>11} {:>9} {:>6}",
            "impl", "build s", "inserts/s", "us/query", "bytes/entry", "hits", "exact"
        )?;
        for row in &self.rows {
            let build = row
                .build_seconds
                .map_or("-".to_owned(), |seconds| format!("{seconds:.2}"));
            let rate = row
                .inserts_per_second
                .map_or("-".to_owned(), |rate| format!("{rate:.0}"));
            writeln!(
                f,
                "{:<14} {:>9} {:>11} {:>10.3} {:>11.1} {:>9} {:>6}",
                row.name,
                build,
                rate,
                row.micros_per_query,
                row.bytes_per_entry,
                row.hits,
                row.agrees_with_scan
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn small_bench_agrees_with_the_scan() {
        let params = BenchParams {
            n: 20_000,
            queries: 400,
            k: 3,
            seed: 1,
            redis_url: None,
            redis_cluster: false,
        };
        let report = run_bench(params).await.unwrap();
        assert_eq!(report.rows.len(), 2);
        assert!(
            report.rows.iter().all(|row| row.agrees_with_scan),
            "{report}"
        );
        assert!(report.rows[0].hits >= 200, "{report}");
        assert!(report.to_string().contains("linear scan"));
    }
}
