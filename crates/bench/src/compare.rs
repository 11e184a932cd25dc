//! `copyhound bench compare`: comparison throughput as the registered corpus
//! grows. Candidates come from the index, so the cost per page should stay
//! nearly flat from 1k to 100k chapters; the baseline, measured in the same run
//! on the smallest corpus, verifies each page against every chapter.

use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use copyhound_core::config::{MatcherConfig, QueueConfig};
use copyhound_core::ids::{ChapterId, PageId, PublisherId, SiteId, WorkId, sha256_hex};
use copyhound_core::model::{
    Chapter, FetchMeta, FingerprintOwner, FingerprintRecord, Language, Page, Publisher,
    PublisherKind, Work, WorkKind,
};
use copyhound_fingerprint::{DocumentFingerprint, Fingerprinter};
use copyhound_index::MemoryFingerprintIndex;
use copyhound_matcher::{MatcherHandler, MatcherPorts, to_record};
use copyhound_store::Stores;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::args::BenchCompareArgs;

const ALPHABET: &str = "的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要她出也得里后自以会家可下而过天去能对小多然于心学么之都好看起发当没成只如事把还用第样道想作种开美总从无情己面最女但现前些所同日手又行意动方期它头经长儿回位分爱老因很给名法间斯知世什两次使身者被高已亲其进此话常与活正感见明问力理尔点文几定本公特做外孩相西果走将月十实向声车全信重三机工物气每并别真打太新比才便夫再书部水像眼等体却加电主界门利海受听表德少克代员许稜先口由死安写性马光白或住难望教命花结乐色更拉东神记处让母父应直字场平报友关放至张认接告入笑内英军候民岁往何度山觉路带万男边风解叫任金快原吃妈变通师立象数四失满战远格士音轻目条呢病始达深完今提求清王化空业思切怎非找片罗钱紶吗语元喜曾离飞科言干流欢约各即指合反题必该论交终林请医晚制球决窢传画保读运及则房早院量苦火布品近坐产答星精视五连司巴";

/// Seeded synthetic text of `chars` characters in sentences of 8–30 characters,
/// drawn from a random 80-character vocabulary (texts differ in their character
/// mix as real chapters do, which is what pinyin DNA measures).
fn synthetic_text(rng: &mut ChaCha8Rng, chars: usize) -> String {
    let all: Vec<char> = ALPHABET.chars().collect();
    let alphabet: Vec<char> = (0..80)
        .map(|_| all[rng.random_range(0..all.len())])
        .collect();
    let mut text = String::with_capacity(chars * 3);
    let mut sentence = 0;
    let mut sentence_length = rng.random_range(8..30);
    for _ in 0..chars {
        text.push(alphabet[rng.random_range(0..alphabet.len())]);
        sentence += 1;
        if sentence == sentence_length {
            text.push_str(if rng.random_bool(0.2) { "。\n" } else { "，" });
            sentence = 0;
            sentence_length = rng.random_range(8..30);
        }
    }
    text
}

/// Replaces about `rate` of the characters (typos and rewrites).
fn mutate(rng: &mut ChaCha8Rng, text: &str, rate: f64) -> String {
    let alphabet: Vec<char> = ALPHABET.chars().collect();
    text.chars()
        .map(|c| {
            if c.is_alphabetic() && rng.random_bool(rate) {
                alphabet[rng.random_range(0..alphabet.len())]
            } else {
                c
            }
        })
        .collect()
}

/// Fingerprints texts on every core.
fn fingerprint_all(engine: &Arc<Fingerprinter>, texts: &[String]) -> Vec<DocumentFingerprint> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = texts.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = texts
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|text| engine.fingerprint(text))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("fingerprinting does not panic"))
            .collect()
    })
}

struct CorpusRun {
    chapters: usize,
    setup_seconds: f64,
    pages_per_second: f64,
    found: usize,
    baseline_pages_per_second: Option<f64>,
}

/// Runs `bench compare`: comparison throughput against corpus size, beside
/// verifying every chapter without the index.
pub async fn run(args: BenchCompareArgs) -> anyhow::Result<std::process::ExitCode> {
    let engine = copyhound_runtime::fingerprinter()?;
    let mut runs = Vec::new();
    for (position, &chapters) in args.chapters.iter().enumerate() {
        eprintln!("corpus of {chapters} chapters ...");
        runs.push(run_corpus(&engine, chapters, &args, position == 0).await?);
    }
    println!(
        "| registered chapters | setup (s) | compare pages/s | copies found | verify-all baseline pages/s | speed-up |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for run in &runs {
        let baseline = run
            .baseline_pages_per_second
            .map_or("–".to_string(), |value| format!("{value:.1}"));
        let ratio = run
            .baseline_pages_per_second
            .map_or("–".to_string(), |value| {
                format!("{:.0}x", run.pages_per_second / value)
            });
        println!(
            "| {} | {:.1} | {:.1} | {}/{} | {baseline} | {ratio} |",
            run.chapters,
            run.setup_seconds,
            run.pages_per_second,
            run.found,
            args.pages / 2
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

async fn run_corpus(
    engine: &Arc<Fingerprinter>,
    chapter_count: usize,
    args: &BenchCompareArgs,
    with_baseline: bool,
) -> anyhow::Result<CorpusRun> {
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let dir = tempfile::tempdir()?;
    let stores = Stores::local(dir.path().join("store"))?;
    let index = Arc::new(MemoryFingerprintIndex::new(3)?);
    let queue = Arc::new(
        copyhound_queue::LocalTaskQueue::open(&dir.path().join("queue"), &QueueConfig::default())
            .await?,
    );
    let publisher_id: PublisherId = "bench".parse()?;
    let work_id: WorkId = "bench-work".parse()?;
    stores
        .publishers
        .put_publisher(&Publisher {
            id: publisher_id.clone(),
            name: "bench".into(),
            kind: PublisherKind::Books,
            created_at: Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        })
        .await?;
    let now = Utc::now();
    stores
        .works
        .put_work(&Work {
            id: work_id.clone(),
            publisher_id,
            title: "bench".into(),
            author: String::new(),
            kind: WorkKind::Novel,
            language: Language::Zh,
            licensed_hosts: Vec::new(),
            created_at: now,
            updated_at: now,
            released_at: None,
            release_schedule: None,
        })
        .await?;
    let texts: Vec<String> = (0..chapter_count)
        .map(|_| synthetic_text(&mut rng, args.chapter_chars))
        .collect();
    for batch in texts.chunks(2_000).enumerate() {
        let (batch_index, batch_texts) = batch;
        let chapters: Vec<Chapter> = batch_texts
            .iter()
            .enumerate()
            .map(|(offset, text)| {
                let number = batch_index * 2_000 + offset;
                let id: ChapterId = format!("c{number}").parse().expect("valid id");
                Chapter::new(
                    work_id.clone(),
                    id,
                    number as u32 + 1,
                    format!("第{number}章"),
                    text.clone(),
                )
            })
            .collect();
        stores.works.put_chapters(&chapters).await?;
        let fingerprints = fingerprint_all(engine, batch_texts);
        let records: Vec<FingerprintRecord> = chapters
            .iter()
            .zip(fingerprints)
            .map(|(chapter, fingerprint)| {
                let owner = FingerprintOwner::Chapter {
                    work_id: work_id.clone(),
                    chapter_id: chapter.id.clone(),
                };
                to_record(owner, &chapter.content_sha256, fingerprint)
            })
            .collect();
        stores.fingerprints.put_fingerprints(&records).await?;
        let entries: Vec<_> = records
            .iter()
            .flat_map(|record| record.index_entries())
            .collect();
        copyhound_core::ports::FingerprintIndex::insert(index.as_ref(), &entries).await?;
    }
    // Pages: half mutated copies of random chapters inside other text, half unrelated.
    let mut pages = Vec::new();
    for number in 0..args.pages {
        let text = if number % 2 == 0 {
            let source = &texts[rng.random_range(0..texts.len())];
            format!(
                "{}\n{}\n{}",
                synthetic_text(&mut rng, 300),
                mutate(&mut rng, source, 0.05),
                synthetic_text(&mut rng, 300)
            )
        } else {
            synthetic_text(&mut rng, args.chapter_chars)
        };
        let url = format!("http://bench.example/{number}.html");
        let sha = sha256_hex(text.as_bytes());
        pages.push(Page {
            id: PageId::for_url(&url),
            url,
            site_id: "bench".parse::<SiteId>()?,
            title: String::new(),
            raw_body: Vec::new(),
            body_truncated: false,
            body_sha256: sha.clone(),
            charset: "utf-8".into(),
            text,
            content_sha256: sha,
            first_seen: now,
            last_seen: now,
            fetch: FetchMeta::default(),
            previous_versions: Vec::new(),
        });
    }
    stores.pages.upsert_pages(&pages).await?;
    let page_texts: Vec<String> = pages.iter().map(|page| page.text.clone()).collect();
    let page_records: Vec<FingerprintRecord> = pages
        .iter()
        .zip(fingerprint_all(engine, &page_texts))
        .map(|(page, fingerprint)| {
            to_record(
                FingerprintOwner::Page {
                    page_id: page.id.clone(),
                },
                &page.content_sha256,
                fingerprint,
            )
        })
        .collect();
    stores.fingerprints.put_fingerprints(&page_records).await?;
    let setup_seconds = started.elapsed().as_secs_f64();

    let pipeline = MatcherHandler::new(MatcherPorts {
        ports: stores.ports(index.clone(), queue),
        fingerprinter: engine.clone(),
        config: MatcherConfig::default(),
    });
    let timer = Instant::now();
    for page in &pages {
        pipeline
            .compare_page(&page.id, &page.content_sha256)
            .await?;
    }
    let pages_per_second = pages.len() as f64 / timer.elapsed().as_secs_f64();
    let mut found = 0;
    for page in &pages {
        found += usize::from(!stores.matches.matches_of_page(&page.id).await?.is_empty());
    }
    let baseline_pages_per_second = if with_baseline {
        Some(verify_all_baseline(engine, &texts, &pages))
    } else {
        None
    };
    Ok(CorpusRun {
        chapters: chapter_count,
        setup_seconds,
        pages_per_second,
        found,
        baseline_pages_per_second,
    })
}

/// Verifies a few pages against every chapter (no index): the cost the index avoids.
fn verify_all_baseline(engine: &Fingerprinter, chapters: &[String], pages: &[Page]) -> f64 {
    let prepared: Vec<_> = chapters
        .iter()
        .map(|text| engine.prepare_chapter(&engine.normalize(text)))
        .collect();
    let sample = &pages[..pages.len().min(10)];
    let timer = Instant::now();
    for page in sample {
        let normalized = engine.normalize(&page.text);
        for chapter in &prepared {
            std::hint::black_box(engine.verify_prepared(chapter, &normalized));
        }
    }
    sample.len() as f64 / timer.elapsed().as_secs_f64()
}
