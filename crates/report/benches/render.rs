//! Report generation over a seeded synthetic set of 10,000 matches: analytics,
//! then each renderer. Run with `cargo bench -p copyhound-report`.

use std::hint::black_box;

use copyhound_report::testsuite::synthetic_input;
use copyhound_report::{ReportFormat, build_report_data, render};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const MATCHES: usize = 10_000;

fn report_benches(criterion: &mut Criterion) {
    let input = synthetic_input(MATCHES, 42);
    let data = build_report_data(&input);
    let mut group = criterion.benchmark_group("report_10k_matches");
    group.sample_size(10);
    group.throughput(Throughput::Elements(MATCHES as u64));
    group.bench_function("build_report_data", |bench| {
        bench.iter(|| build_report_data(black_box(&input)))
    });
    for (name, format) in [
        ("html", ReportFormat::Html),
        ("csv", ReportFormat::Csv),
        ("json", ReportFormat::Json),
    ] {
        group.bench_function(format!("render_{name}"), |bench| {
            bench.iter(|| render(black_box(&data), format).expect("renders"))
        });
    }
    group.finish();
}

criterion_group!(benches, report_benches);
criterion_main!(benches);
