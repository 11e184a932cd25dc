//! Bulk insert and read-back throughput of the stores, on seeded synthetic data.
//!
//! ```text
//! cargo run --release -p copyhound-store --example bench_store -- \
//!     [--pages 100000] [--fingerprints 1000000] [--backend local|mongo|both] [--mongo-url URL]
//! ```
//! The MongoDB run uses `--mongo-url` or `COPYHOUND_TEST_MONGODB_URL` and a fresh
//! database that is dropped afterwards.

use std::sync::Arc;
use std::time::Instant;

use anyhow_free::Args;
use chrono::{TimeZone, Utc};
use copyhound_core::ids::{PageId, sha256_hex};
use copyhound_core::model::{FetchMeta, FingerprintOwner, FingerprintRecord, Page, PassageRecord};
use copyhound_core::ports::PageRequest;
use copyhound_store::{MongoStore, StoreLimits, Stores};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PAGE_BATCH: usize = 1_000;
const FINGERPRINT_BATCH: usize = 5_000;
const SITE: &str = "site_bench";

mod anyhow_free {
    /// Command-line options.
    pub struct Args {
        pub pages: usize,
        pub fingerprints: usize,
        pub backend: String,
        pub mongo_url: Option<String>,
    }

    impl Args {
        pub fn parse() -> Self {
            let mut args = Self {
                pages: 100_000,
                fingerprints: 1_000_000,
                backend: "both".into(),
                mongo_url: std::env::var("COPYHOUND_TEST_MONGODB_URL").ok(),
            };
            let mut iter = std::env::args().skip(1);
            while let Some(flag) = iter.next() {
                let value = iter
                    .next()
                    .unwrap_or_else(|| panic!("{flag} needs a value"));
                match flag.as_str() {
                    "--pages" => args.pages = value.parse().expect("--pages takes a number"),
                    "--fingerprints" => {
                        args.fingerprints = value.parse().expect("--fingerprints takes a number")
                    }
                    "--backend" => args.backend = value,
                    "--mongo-url" => args.mongo_url = Some(value),
                    other => panic!("unknown option {other}"),
                }
            }
            args
        }
    }
}

fn synthetic_page(rng: &mut ChaCha8Rng, number: usize) -> Page {
    let url = format!("http://bench.example/{number:08}.html");
    let text: String = (0..600)
        .map(|_| char::from_u32(0x4e00 + rng.random_range(0..3000)).unwrap_or('字'))
        .collect();
    let body =
        format!("<html><head><title>{number}</title></head><body><div>{text}</div></body></html>")
            .into_bytes();
    let at = Utc.timestamp_opt(1_700_000_000 + number as i64, 0).unwrap();
    Page {
        id: PageId::for_url(&url),
        url: url.clone(),
        site_id: SITE.parse().expect("valid site id"),
        title: format!("chapter {number}"),
        body_sha256: sha256_hex(&body),
        raw_body: body,
        body_truncated: false,
        charset: "utf-8".into(),
        content_sha256: sha256_hex(text.as_bytes()),
        text,
        first_seen: at,
        last_seen: at,
        fetch: FetchMeta {
            status: 200,
            final_url: url,
            ..FetchMeta::default()
        },
        previous_versions: Vec::new(),
    }
}

fn synthetic_fingerprint(rng: &mut ChaCha8Rng, number: usize) -> FingerprintRecord {
    let page_id = PageId::for_url(&format!("http://bench.example/{number:08}.html"));
    let passages = (0..2)
        .map(|ordinal| PassageRecord {
            ordinal,
            start: ordinal * 300,
            end: ordinal * 300 + 300,
            simhash: rng.random(),
            dna: (0..4).map(|_| rng.random()).collect(),
        })
        .collect();
    FingerprintRecord {
        owner: FingerprintOwner::Page { page_id },
        version: 1,
        content_sha256: format!("{:064x}", rng.random::<u128>()),
        simhash: rng.random(),
        shingle_simhash: rng.random(),
        dna: (0..8).map(|_| rng.random()).collect(),
        passages,
        anchors: Vec::new(),
        normalized_chars: 600,
        created_at: Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    }
}

fn rate(count: usize, started: Instant) -> String {
    let seconds = started.elapsed().as_secs_f64();
    format!(
        "{:>9.0} docs/s ({count} in {seconds:.1} s)",
        count as f64 / seconds
    )
}

async fn bench(name: &str, stores: &Stores, args: &Args) {
    copyhound_store::migrate_up(stores)
        .await
        .expect("migrations apply");
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let pages: Vec<Page> = (0..args.pages)
        .map(|number| synthetic_page(&mut rng, number))
        .collect();
    let started = Instant::now();
    for batch in pages.chunks(PAGE_BATCH) {
        stores
            .pages
            .upsert_pages(batch)
            .await
            .expect("pages insert");
    }
    println!("| {name} | pages insert | {} |", rate(pages.len(), started));
    let started = Instant::now();
    let mut request = PageRequest {
        after: None,
        limit: 1_000,
    };
    let mut read = 0;
    loop {
        let page = stores
            .pages
            .list_pages(&SITE.parse().expect("valid site id"), &request)
            .await
            .expect("pages read");
        read += page.items.len();
        match page.next {
            Some(next) => request.after = Some(next),
            None => break,
        }
    }
    assert_eq!(read, pages.len());
    println!("| {name} | pages read (list) | {} |", rate(read, started));
    drop(pages);

    let started = Instant::now();
    let mut written = 0;
    while written < args.fingerprints {
        let batch: Vec<_> = (written..(written + FINGERPRINT_BATCH).min(args.fingerprints))
            .map(|number| synthetic_fingerprint(&mut rng, number))
            .collect();
        stores
            .fingerprints
            .put_fingerprints(&batch)
            .await
            .expect("fingerprints insert");
        written += batch.len();
    }
    println!(
        "| {name} | fingerprints insert | {} |",
        rate(written, started)
    );
    let started = Instant::now();
    let mut request = PageRequest {
        after: None,
        limit: 1_000,
    };
    let mut read = 0;
    loop {
        let page = stores
            .fingerprints
            .list_fingerprints(1, &request)
            .await
            .expect("fingerprints read");
        read += page.items.len();
        match page.next {
            Some(next) => request.after = Some(next),
            None => break,
        }
    }
    assert_eq!(read, written);
    println!(
        "| {name} | fingerprints read (list) | {} |",
        rate(read, started)
    );
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    println!("| backend | operation | throughput |\n|---|---|---|");
    if args.backend == "local" || args.backend == "both" {
        let dir = tempfile::tempdir().expect("temp dir");
        let stores = Stores::local(dir.path()).expect("local store opens");
        bench("embedded (redb)", &stores, &args).await;
    }
    if args.backend == "mongo" || args.backend == "both" {
        let Some(url) = args.mongo_url.as_deref() else {
            eprintln!("no --mongo-url or COPYHOUND_TEST_MONGODB_URL: skipping MongoDB");
            return;
        };
        let database = format!("copyhound_bench_{}", uuid::Uuid::now_v7().simple());
        let store = Arc::new(
            MongoStore::connect(url, &database, StoreLimits::default())
                .await
                .expect("connects"),
        );
        bench("mongodb", &Stores::from_backend(store.clone()), &args).await;
        store.drop_database().await.expect("drop bench database");
    }
}
