//! Throughput of the fingerprint pipeline over chapter-size Chinese texts,
//! with linear baselines measured in the same run so figures can be quoted
//! as ratios (machines differ, ratios travel).
//!
//! Texts: chapters of `../../../shared/devset/works/*/chapters/*.txt` (Chinese
//! works only), else a seeded synthetic text.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter, simhash};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};

/// A few chapter-size Chinese texts.
fn texts() -> Vec<String> {
    let works = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/devset/works");
    let mut out = Vec::new();
    if let Ok(dirs) = std::fs::read_dir(&works) {
        let mut dirs: Vec<_> = dirs.flatten().map(|d| d.path()).collect();
        dirs.sort();
        for d in dirs {
            let Ok(files) = std::fs::read_dir(d.join("chapters")) else {
                continue;
            };
            let mut files: Vec<_> = files.flatten().map(|f| f.path()).collect();
            files.sort();
            for f in files.iter().take(4) {
                if let Ok(t) = std::fs::read_to_string(f)
                    && t.chars()
                        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
                        .count()
                        * 2
                        > t.chars().count()
                {
                    out.push(t);
                }
            }
        }
    }
    if out.is_empty() {
        eprintln!("note: devset not found, using synthetic text");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
        for _ in 0..8 {
            let t: String = (0..5000)
                .map(|i| {
                    if i % 20 == 19 {
                        '，'
                    } else {
                        char::from_u32(rng.random_range(0x4e00..0x9fa5)).unwrap_or('一')
                    }
                })
                .collect();
            out.push(t);
        }
    }
    out
}

/// Naive linear baseline: SimHash over char bigrams with an FNV-1a hash
/// (no std hasher), 64 branchy counter updates per feature.
fn naive_bigram_simhash(text: &str) -> u64 {
    let mut acc = [0i32; 64];
    let mut prev = 0u32;
    for c in text.chars() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in prev
            .to_le_bytes()
            .into_iter()
            .chain(u32::from(c).to_le_bytes())
        {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        for (i, a) in acc.iter_mut().enumerate() {
            *a += if (h >> i) & 1 == 1 { 1 } else { -1 };
        }
        prev = u32::from(c);
    }
    acc.iter()
        .enumerate()
        .fold(0, |o, (i, &a)| if a > 0 { o | (1 << i) } else { o })
}

fn bench(c: &mut Criterion) {
    let texts = texts();
    let bytes: usize = texts.iter().map(String::len).sum();
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let normalized: Vec<_> = texts.iter().map(|t| fp.normalize(t)).collect();

    let mut g = c.benchmark_group("fingerprint");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    g.bench_function("baseline_byte_copy", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|t| black_box(t.as_bytes().to_vec()).len())
                .sum::<usize>()
        })
    });
    g.bench_function("baseline_naive_bigram_simhash", |b| {
        b.iter(|| {
            texts
                .iter()
                .fold(0u64, |x, t| x ^ naive_bigram_simhash(black_box(t)))
        })
    });
    g.bench_function("full_pipeline", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|t| fp.fingerprint(black_box(t)).passages.len())
                .sum::<usize>()
        })
    });
    g.bench_function("normalize", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|t| fp.normalize(black_box(t)).len())
                .sum::<usize>()
        })
    });
    g.bench_function("shingle_simhash", |b| {
        b.iter(|| {
            normalized.iter().fold(0u64, |x, n| {
                x ^ simhash::shingle_simhash(black_box(&n.chars), 3)
            })
        })
    });
    g.bench_function("word_simhash", |b| {
        b.iter(|| {
            normalized
                .iter()
                .fold(0u64, |x, n| x ^ fp.word_simhash(black_box(n)))
        })
    });
    g.bench_function("dna", |b| {
        b.iter(|| {
            normalized
                .iter()
                .map(|n| fp.dna_windows(black_box(n)).len())
                .sum::<usize>()
        })
    });
    g.bench_function("passages", |b| {
        b.iter(|| {
            normalized
                .iter()
                .map(|n| fp.passages(black_box(n)).len())
                .sum::<usize>()
        })
    });
    g.finish();

    // Verifier: one chapter against a page holding a mutated copy of it.
    let chapter = &normalized[0];
    let page_text: String = format!(
        "{}广告：手机游戏下载{}",
        &texts[1],
        texts[0].replace('的', "地")
    );
    let page = fp.normalize(&page_text);
    let prepared = fp.prepare_chapter(chapter);
    let mut g = c.benchmark_group("verify");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    eprintln!(
        "verify: chapter {} chars, page {} chars",
        chapter.len(),
        page.len()
    );
    g.bench_function("verify", |b| {
        b.iter(|| fp.verify(black_box(chapter), black_box(&page)).spans.len())
    });
    g.bench_function("verify_prepared", |b| {
        b.iter(|| fp.verify_prepared(&prepared, black_box(&page)).spans.len())
    });
    // A page is prepared once for all its candidates (as the matcher does).
    let prepared_page = fp.prepare_page(&page);
    g.bench_function("verify_page", |b| {
        b.iter(|| {
            fp.verify_page(&prepared, &page, black_box(&prepared_page))
                .spans
                .len()
        })
    });
    // Most candidates a page's votes bring are not copies: the reject path.
    let unrelated = fp.normalize(&format!("{}{}", texts[2], texts[3]));
    let prepared_unrelated = fp.prepare_page(&unrelated);
    g.bench_function("verify_page_unrelated", |b| {
        b.iter(|| {
            fp.verify_page(&prepared, &unrelated, black_box(&prepared_unrelated))
                .spans
                .len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
