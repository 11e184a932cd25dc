//! Criterion: in-memory index query vs a linear scan, on seeded data.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use copyhound_core::ports::{EntryKind, FingerprintIndex};
use copyhound_index::MemoryFingerprintIndex;
use copyhound_index::bench::{BenchParams, bench_data};

const ENTRIES: usize = 1_000_000;
const QUERIES: usize = 1_000;

fn query_bench(criterion: &mut Criterion) {
    let params = BenchParams {
        n: ENTRIES,
        queries: QUERIES,
        k: 3,
        seed: 42,
        redis_url: None,
        redis_cluster: false,
    };
    let (entries, queries) = bench_data(&params);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let index = MemoryFingerprintIndex::new(params.k).expect("k = 3 is supported");
    runtime
        .block_on(index.insert(&entries))
        .expect("memory insert succeeds");
    let fingerprints: Vec<u64> = entries.iter().map(|entry| entry.fingerprint).collect();

    let mut group = criterion.benchmark_group("index_query_1m_k3");
    group.throughput(Throughput::Elements(QUERIES as u64));
    group.bench_function("memory_query_batch", |bencher| {
        bencher.iter(|| {
            runtime.block_on(index.query_batch(EntryKind::Passage, black_box(&queries), 3))
        })
    });
    group.sample_size(10);
    group.bench_function("linear_scan", |bencher| {
        bencher.iter(|| {
            queries
                .iter()
                .map(|query| {
                    fingerprints
                        .iter()
                        .filter(|stored| (**stored ^ query).count_ones() <= 3)
                        .count()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, query_bench);
criterion_main!(benches);
