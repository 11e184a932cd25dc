//! `copyhound eval`: detection quality on a labeled benchmark folder, measured
//! through the production pipeline. Works are imported, every site is served on
//! its own loopback port and crawled by the real crawler (robots.txt and all),
//! the workers run until the queue is empty, and the matches are written in the
//! scorer's format. Nothing here reads the labels; the scorer does, afterwards.

mod offsets;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use copyhound_core::config::Config;
use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::model::WorkKind;
use copyhound_core::ports::Pages;
use copyhound_core::site::SitePolicy;
use copyhound_core::stages::{self, Stage, StageTime};
use copyhound_intake::crawls::queue_run;
use copyhound_intake::sites::{SiteSettings, create_site};
use copyhound_runtime::{Backends, Node};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::args::{EvalArgs, EvalBackends};
use crate::progress::PageCounter;
use crate::static_sites::{ServedSite, StaticSites};
use copyhound_intake::import::{self, import_works};

/// One line of the predictions file.
#[derive(Debug, Serialize)]
struct Prediction {
    page: String,
    work: String,
    chapter: String,
    score: f32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    spans: Vec<[u32; 2]>,
}

/// What a pipeline run over a benchmark produced.
#[derive(Debug)]
pub struct PipelineRun {
    /// The backends used (kept open for reporting).
    pub backends: Backends,
    /// The served sites.
    pub sites: StaticSites,
    /// Pages stored (or found unchanged).
    pub pages_crawled: u64,
    /// Fetches that stored nothing (404s, skips by rule, failures).
    pub not_stored: u64,
    /// Wall time of the whole run: start-up, import of the works, crawl and
    /// comparison.
    pub elapsed: Duration,
    /// Wall time from the crawls' enqueue until the last page is compared
    /// and its matches stored (crawl to matches; the index snapshot taken
    /// at the end is not in it).
    pub crawl_elapsed: Duration,
    /// Tasks that ended in the dead-letter list.
    pub dead_tasks: u64,
}

/// Runs `eval`: the pipeline over the benchmark, predictions written, then
/// the benchmark's own scorer.
pub async fn run(config: &Config, args: EvalArgs) -> anyhow::Result<ExitCode> {
    let (eval_config, _scratch) = eval_config(config, &args)?;
    let (stages_before, cpu_before) = (stages::snapshot(), stages::process_cpu());
    let run = run_pipeline(&eval_config, &args.set, args.concurrency).await?;
    let cpu = stages::process_cpu().saturating_sub(cpu_before);
    let predictions = collect_predictions(&run).await?;
    write_predictions(&args.out, &predictions)?;
    println!(
        "crawled {} pages on {} sites ({} fetches stored nothing), {} predictions in {:.1} s, crawl to matches {:.2} s ({:.0} pages/s) ({} dead tasks); wrote {}",
        run.pages_crawled,
        run.sites.sites.len(),
        run.not_stored,
        predictions.len(),
        run.elapsed.as_secs_f64(),
        run.crawl_elapsed.as_secs_f64(),
        run.pages_crawled as f64 / run.crawl_elapsed.as_secs_f64().max(1e-9),
        run.dead_tasks,
        args.out.display()
    );
    print_stages(&stages_before, cpu, run.pages_crawled);
    score(&args.set, &args.out, args.metrics_json.as_deref())
}

/// Prints where the run's time went, per stored page, stage by stage.
fn print_stages(before: &[(Stage, StageTime)], process_cpu: Duration, pages: u64) {
    let pages = pages.max(1) as f64;
    let per_page = |d: Duration| d.as_secs_f64() * 1e3 / pages;
    println!(
        "\n== time per stored page by stage (works imported and fingerprinted included; wall times overlap across concurrent tasks)"
    );
    println!(
        "{:<14} {:>8} {:>13} {:>12} {:>10}",
        "stage", "calls", "wall ms/page", "cpu ms/page", "cpu share"
    );
    let mut accounted = Duration::ZERO;
    for ((stage, now), (_, then)) in stages::snapshot().into_iter().zip(before) {
        let spent = now.since(*then);
        accounted += spent.cpu;
        println!(
            "{:<14} {:>8} {:>13.3} {:>12.3} {:>9.1}%",
            stage.name(),
            spent.calls,
            per_page(spent.wall),
            per_page(spent.cpu),
            100.0 * spent.cpu.as_secs_f64() / process_cpu.as_secs_f64().max(1e-9)
        );
    }
    let rest = process_cpu.saturating_sub(accounted);
    println!(
        "{:<14} {:>8} {:>13} {:>12.3} {:>9.1}%",
        "other",
        "",
        "",
        per_page(rest),
        100.0 * rest.as_secs_f64() / process_cpu.as_secs_f64().max(1e-9)
    );
    println!(
        "process CPU {:.3} ms per stored page ({:.2} s in all)",
        per_page(process_cpu),
        process_cpu.as_secs_f64()
    );
}

/// Returns the configuration of the evaluated instance and its scratch directory.
fn eval_config(
    config: &Config,
    args: &EvalArgs,
) -> anyhow::Result<(Config, Option<tempfile::TempDir>)> {
    let mut eval = config.clone();
    eval.crawler.allow_private_addresses = true;
    // The sets' pages name real domains: suggested, never contacted.
    eval.crawler.verify_suggestions = false;
    // One publisher, nobody to share the crawl slots with.
    eval.crawler.max_crawls_per_publisher = 0;
    eval.store.migrate_on_start = true;
    match args.backends {
        EvalBackends::Embedded => {
            let scratch = tempfile::Builder::new()
                .prefix("copyhound-eval-")
                .tempdir()?;
            eval.data_dir = scratch.path().to_path_buf();
            eval.store.url = None;
            eval.index.url = None;
            eval.queue.url = None;
            Ok((eval, Some(scratch)))
        }
        EvalBackends::Configured => {
            let (eval, scratch) = scratch_namespace(eval, "eval")?;
            Ok((eval, Some(scratch)))
        }
    }
}

/// Points `config`'s MongoDB and Redis at a namespace of their own (a database
/// and key prefixes named `copyhound_{what}_<tag>`), with embedded leftovers
/// under a scratch directory, so a run never touches production data.
pub(crate) fn scratch_namespace(
    mut config: Config,
    what: &str,
) -> anyhow::Result<(Config, tempfile::TempDir)> {
    let tag = uuid_tag();
    config.store.database = format!("copyhound_{what}_{tag}");
    config.index.prefix = format!("copyhound-{what}-{tag}:index:");
    config.queue.prefix = format!("copyhound-{what}-{tag}:queue:");
    let scratch = tempfile::Builder::new()
        .prefix(&format!("copyhound-{what}-"))
        .tempdir()?;
    config.data_dir = scratch.path().to_path_buf();
    // The sets' pages name real domains: they are suggested, never contacted.
    config.crawler.verify_suggestions = false;
    Ok((config, scratch))
}

fn uuid_tag() -> String {
    let id = copyhound_core::ids::TaskId::generate();
    id.as_str()
        .trim_start_matches(TASK_PREFIX)
        .chars()
        .rev()
        .take(10)
        .collect()
}

const TASK_PREFIX: &str = "t_";

/// Imports the works, serves and registers the sites, crawls and compares until
/// the queue is empty.
pub async fn run_pipeline(
    config: &Config,
    set: &Path,
    concurrency: Option<u32>,
) -> anyhow::Result<PipelineRun> {
    let started = Instant::now();
    let node = Node::build(config).await?;
    let backends = node.backends().clone();
    let works = import::read_works(&set.join("works"))?;
    let owner = site_owner(&works)?;
    let (work_count, chapter_count) = import_works(&backends.ports(), works, "eval").await?;
    eprintln!("registered {work_count} works ({chapter_count} chapters)");
    let sites = StaticSites::serve(&set.join("pages")).await?;
    let site_ids = register_sites(&backends, &sites.sites, &owner).await?;
    let crawl_started = Instant::now();
    let mut run_ids: Vec<CrawlRunId> = Vec::new();
    for site_id in &site_ids {
        let run = queue_run(
            backends.stores.sites.as_ref(),
            backends.queue.as_ref(),
            site_id,
            &CrawlRunId::generate(),
            Utc::now(),
        )
        .await?;
        run_ids.push(run.id);
    }

    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg} | {prefix}")
            .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let counter = Arc::new(PageCounter::with_bar(bar.clone()));
    let worker = node.worker(concurrency, counter.clone())?;
    let mut last_shown = Instant::now();
    let shown = bar.clone();
    worker
        .run_until_idle(|outcome| {
            if last_shown.elapsed() < Duration::from_millis(200) {
                return;
            }
            last_shown = Instant::now();
            shown.set_prefix(format!(
                "{} tasks done, {} failed",
                outcome.succeeded + outcome.failed,
                outcome.failed
            ));
        })
        .await?;
    let crawl_elapsed = crawl_started.elapsed();
    bar.finish_and_clear();
    let stats = backends.queue.stats().await?;
    for dead in backends.queue.dead_letters(20).await? {
        eprintln!(
            "dead task {} ({}): {}",
            dead.task.id,
            dead.task.kind.name(),
            dead.last_error
        );
    }
    print_reading(&backends, &run_ids).await?;
    backends.persist().await?;
    Ok(PipelineRun {
        pages_crawled: counter.pages(),
        not_stored: counter.not_stored(),
        elapsed: started.elapsed(),
        crawl_elapsed,
        dead_tasks: stats.dead,
        backends,
        sites,
    })
}

/// Prints how the runs read their pages: rendered pages and their time,
/// unreadable pages by reason.
async fn print_reading(backends: &Backends, run_ids: &[CrawlRunId]) -> anyhow::Result<()> {
    let (mut fetched, mut rendered, mut render_ms) = (0u64, 0u64, 0u64);
    let mut unreadable: std::collections::BTreeMap<String, u64> = Default::default();
    for run_id in run_ids {
        let run = backends.stores.sites.get_crawl_run(run_id).await?;
        fetched += run.counters.fetched;
        rendered += run.counters.rendered;
        render_ms += run.counters.render_ms;
        for (reason, count) in run.counters.unreadable {
            *unreadable.entry(reason).or_default() += count;
        }
    }
    eprintln!(
        "pages read: {fetched} fetched, {rendered} rendered ({:.1} s in the browser), unreadable {unreadable:?}",
        render_ms as f64 / 1000.0
    );
    Ok(())
}

/// Who watches the set's sites: the publisher of its works when they all
/// have one (the demo: its users see the sites their matches are on), else
/// the evaluation publisher.
pub(crate) fn site_owner(works: &[import::ImportedWork]) -> anyhow::Result<PublisherId> {
    match works.first() {
        Some(first) if works.iter().all(|w| w.publisher_id == first.publisher_id) => {
            Ok(first.publisher_id.clone())
        }
        _ => Ok("evaluation".parse::<PublisherId>()?),
    }
}

/// Registers the served sites for `publisher` (created when missing) through
/// intake, as `POST /sites` would; returns their ids.
pub(crate) async fn register_sites(
    backends: &Backends,
    sites: &[ServedSite],
    publisher: &PublisherId,
) -> anyhow::Result<Vec<SiteId>> {
    let ports = backends.ports();
    copyhound_intake::import::ensure_publisher(&ports, publisher, WorkKind::Novel).await?;
    let mut ids = Vec::new();
    for served in sites {
        let site_id: SiteId = served
            .name
            .parse()
            .with_context(|| format!("site folder {:?}", served.name))?;
        let settings = SiteSettings {
            name: Some(served.name.clone()),
            seeds: Some(vec![format!("{}/index.html", served.base_url)]),
            max_depth: Some(12),
            max_pages_per_run: Some(20_000),
            rate_limit_per_second: Some(500.0),
            concurrency: Some(4),
            ..SiteSettings::default()
        };
        // The benchmark's sites are served on loopback by this process.
        let site = create_site(
            &ports,
            publisher,
            Some(site_id),
            settings,
            &SitePolicy::new(true),
            "eval",
        )
        .await?;
        ids.push(site.id);
    }
    Ok(ids)
}

/// Reads every match of every crawled page, in the scorer's terms.
async fn collect_predictions(run: &PipelineRun) -> anyhow::Result<Vec<Prediction>> {
    let stores = &run.backends.stores;
    let mut predictions = Vec::new();
    for served in &run.sites.sites {
        let site_id: SiteId = served.name.parse()?;
        let mut pages = Pages::new(200);
        while let Some(request) = pages.next_request() {
            for page in pages.advance(stores.pages.list_pages(&site_id, &request).await?)? {
                let matches = stores.matches.matches_of_page(&page.id).await?;
                if matches.is_empty() {
                    continue;
                }
                let Some(path) = page.url.strip_prefix(&served.base_url) else {
                    continue;
                };
                let page_id = format!("{}/{}", served.name, path.trim_start_matches('/'));
                let decoded = copyhound_crawler::charset::decode_body(
                    &page.raw_body,
                    page.fetch.content_type.as_deref(),
                    None,
                );
                let visible = crate::visible::visible_text(&decoded.text);
                let map = offsets::OffsetMap::new(&page.text, &visible);
                for found in matches {
                    let spans = found
                        .spans
                        .iter()
                        .filter_map(|span| map.map_span(span.page_start, span.page_end))
                        .map(|(start, end)| [start, end])
                        .collect();
                    predictions.push(Prediction {
                        page: page_id.clone(),
                        work: found.work_id.to_string(),
                        chapter: found.chapter_id.to_string(),
                        score: found.score,
                        spans,
                    });
                }
            }
        }
    }
    predictions.sort_by(|a, b| (&a.page, &a.work, &a.chapter).cmp(&(&b.page, &b.work, &b.chapter)));
    Ok(predictions)
}

fn write_predictions(path: &Path, predictions: &[Prediction]) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    for prediction in predictions {
        serde_json::to_writer(&mut out, prediction)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Runs the benchmark's scorer when the folder has labels.
fn score(set: &Path, predictions: &Path, metrics_json: Option<&Path>) -> anyhow::Result<ExitCode> {
    let truth = set.join("truth.json");
    let scorer = set.join("tools/score.py");
    if !truth.is_file() || !scorer.is_file() {
        println!(
            "no truth.json or tools/score.py in {}: not scoring",
            set.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut command = std::process::Command::new("python3");
    command
        .arg(&scorer)
        .arg("--truth")
        .arg(&truth)
        .arg("--pred")
        .arg(predictions);
    if let Some(path) = metrics_json {
        command.arg("--json").arg(path);
    }
    let status = command
        .status()
        .context("cannot run python3 for the scorer")?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Returns the folder of the bundled or shared benchmark for the demo.
pub fn default_set() -> Option<PathBuf> {
    ["../shared/devset", "../../shared/devset"]
        .iter()
        .map(PathBuf::from)
        .find(|path| path.join("works").is_dir())
}
