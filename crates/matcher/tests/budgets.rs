//! Resource budgets of the comparison pipeline on hostile text, measured with a
//! counting global allocator (this binary only, so other tests keep the system
//! allocator untouched).
//!
//! One chapter of a single sentence repeated over two million characters used to
//! grow memory quadratically: every passage of it has the same SimHash, so each
//! of thousands of identical passage queries hit every one of thousands of
//! identical entries. The budgets make memory linear in the input, with a small
//! constant, whatever the text.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use copyhound_core::config::MatcherConfig;
use copyhound_core::ids::{ChapterId, PageId, PublisherId, SiteId, WorkId, sha256_hex};
use copyhound_core::model::{
    Chapter, FetchMeta, Language, Page, Publisher, PublisherKind, Work, WorkKind,
};
use copyhound_fingerprint::{FingerprintConfig, Fingerprinter};
use copyhound_index::MemoryFingerprintIndex;
use copyhound_matcher::{MatcherHandler, MatcherPorts};
use copyhound_queue::LocalTaskQueue;
use copyhound_store::Stores;
use peak_alloc::PeakAlloc;

/// Counts live heap bytes and their high-water mark (the workspace forbids
/// `unsafe`, so the allocator comes from a crate).
#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// Starts a measurement: the peak restarts from the live bytes now.
fn start_measure() -> usize {
    ALLOCATOR.reset_peak_usage();
    ALLOCATOR.current_usage()
}

/// Bytes allocated on top of `baseline` at the high-water mark since [`start_measure`].
fn peak_above(baseline: usize) -> usize {
    ALLOCATOR.peak_usage().saturating_sub(baseline)
}

const SENTENCE: &str = "天色已晚，林中起了大风。";

/// `chars` characters of one sentence, a line break every ten sentences.
fn repeated_sentence(chars: usize) -> String {
    let sentence_chars = SENTENCE.chars().count();
    let mut text = String::with_capacity(chars * 3 + chars / sentence_chars);
    let mut written = 0;
    let mut sentences = 0;
    while written < chars {
        text.push_str(SENTENCE);
        written += sentence_chars;
        sentences += 1;
        if sentences % 10 == 0 {
            text.push('\n');
        }
    }
    text
}

struct Harness {
    _dir: tempfile::TempDir,
    stores: Stores,
    pipeline: MatcherHandler,
}

async fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::local(dir.path().join("store")).unwrap();
    let queue = Arc::new(
        LocalTaskQueue::open(&dir.path().join("queue"), &Default::default())
            .await
            .unwrap(),
    );
    let ports = MatcherPorts {
        ports: stores.ports(Arc::new(MemoryFingerprintIndex::new(3).unwrap()), queue),
        fingerprinter: Arc::new(Fingerprinter::new(FingerprintConfig::default()).unwrap()),
        config: MatcherConfig::default(),
    };
    Harness {
        _dir: dir,
        stores,
        pipeline: MatcherHandler::new(ports),
    }
}

impl Harness {
    async fn register(&self, work: &str, text: String) -> WorkId {
        let publisher_id: PublisherId = "P01".parse().unwrap();
        let publisher = Publisher {
            id: publisher_id.clone(),
            name: "P01".into(),
            kind: PublisherKind::Books,
            created_at: Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        };
        self.stores
            .publishers
            .put_publisher(&publisher)
            .await
            .unwrap();
        let work_id: WorkId = work.parse().unwrap();
        let record = Work {
            id: work_id.clone(),
            publisher_id,
            title: "林中".into(),
            author: "某".into(),
            kind: WorkKind::Novel,
            language: Language::Zh,
            licensed_hosts: Vec::new(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            released_at: None,
            release_schedule: None,
        };
        self.stores.works.put_work(&record).await.unwrap();
        let chapter_id: ChapterId = "c1".parse().unwrap();
        let chapter = Chapter::new(work_id.clone(), chapter_id, 1, "第一章".into(), text);
        self.stores.works.put_chapters(&[chapter]).await.unwrap();
        work_id
    }

    async fn crawl(&self, url: &str, text: String) -> (PageId, String) {
        let now = Utc::now();
        let content_sha256 = sha256_hex(text.as_bytes());
        let page = Page {
            id: PageId::for_url(url),
            url: url.into(),
            site_id: "site1".parse::<SiteId>().unwrap(),
            title: "page".into(),
            raw_body: Vec::new(),
            body_truncated: false,
            body_sha256: content_sha256.clone(),
            charset: "utf-8".into(),
            text,
            content_sha256: content_sha256.clone(),
            first_seen: now,
            last_seen: now,
            fetch: FetchMeta::default(),
            previous_versions: Vec::new(),
        };
        self.stores.pages.upsert_page(&page).await.unwrap();
        (page.id, content_sha256)
    }
}

/// Fingerprints, indexes, compares and back-fills one chapter and one page of
/// `chars` characters of the same repeated sentence; returns the peak heap
/// bytes above the starting point.
async fn hostile_pipeline_peak(chars: usize) -> usize {
    let harness = harness().await;
    let text = repeated_sentence(chars);
    let baseline = start_measure();
    let work_id = harness.register("w1", text.clone()).await;
    harness.pipeline.fingerprint_work(&work_id).await.unwrap();
    let (page_id, content_sha256) = harness.crawl("http://pirate.example/1.html", text).await;
    let pipeline = &harness.pipeline;
    pipeline
        .fingerprint_page(&page_id, &content_sha256)
        .await
        .unwrap();
    pipeline
        .compare_page(&page_id, &content_sha256)
        .await
        .unwrap();
    pipeline.backfill_work(&work_id).await.unwrap();
    // The verifier ignores seeds repeated all over the chapter, so one sentence
    // repeated is no evidence: memory and time are the point here.
    peak_above(baseline)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_sentence_chapter_stays_within_a_linear_memory_budget() {
    // 2.1M characters: 6.3 MB of UTF-8 in the chapter and as much on the page.
    let chars = 2_100_000;
    let input_bytes = SENTENCE.len() * chars / SENTENCE.chars().count();
    let started = Instant::now();
    let quarter_peak = hostile_pipeline_peak(chars / 4).await;
    let peak = hostile_pipeline_peak(chars).await;
    let elapsed = started.elapsed();
    eprintln!(
        "repeated sentence, {chars} chars ({input_bytes} bytes): peak {} MB ({:.1} x input), \
         a quarter of it {} MB, both in {elapsed:?}",
        peak >> 20,
        peak as f64 / input_bytes as f64,
        quarter_peak >> 20,
    );
    // Linear, not quadratic: four times the text, about four times the memory.
    assert!(
        peak <= 6 * quarter_peak,
        "peak {peak} bytes, {quarter_peak} for a quarter of the text"
    );
    // Chapter and page each hold the text; everything the pipeline builds on
    // top (normalized streams, fingerprints, index entries, the verifier's
    // tables) must stay a small multiple of it.
    assert!(
        peak <= 48 * input_bytes,
        "peak {peak} bytes for {input_bytes} input bytes"
    );
}
