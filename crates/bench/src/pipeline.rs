//! `copyhound bench pipeline`: end-to-end pages per second as processes are
//! added, on the configured MongoDB and Redis (or Redis Cluster).
//!
//! Each run gets its own database and key prefixes, registers the benchmark's
//! works and fingerprints them (not timed), then starts W `copyhound worker`
//! processes and C crawler processes (each runs `copyhound crawl` over its
//! share of the sites, one after another) and times crawl to drained queue.
//! CPU comes from Linux's `/proc`: workers' own counters, crawlers' through
//! this process's waited-for children, the machine's busy time for the rest
//! (the database servers, the static sites served from here).

use std::io::Read;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use copyhound_core::config::Config;
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::BenchPipelineArgs;
use crate::eval::{register_sites, scratch_namespace, site_owner};
use crate::static_sites::StaticSites;
use copyhound_intake::import::{self, import_works};
use copyhound_runtime::Backends;

/// Clock ticks per second of `/proc` CPU counters (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// One measured configuration.
struct Row {
    workers: usize,
    crawlers: usize,
    pages: u64,
    seconds: f64,
    crawl_cpu: f64,
    worker_cpu: f64,
    other_cpu: f64,
    dead: u64,
    /// Per task kind: (tasks, wall ms summed over worker slots).
    stages: std::collections::BTreeMap<String, (u64, u64)>,
}

/// Runs `bench pipeline` for every (workers, crawlers) combination asked for.
pub async fn run(config: &Config, args: BenchPipelineArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !config.uses_embedded_backends(),
        "bench pipeline runs several processes: configure store.url, index.url and queue.url \
         (MongoDB and Redis); the embedded default is one process's"
    );
    let set = match args.set {
        Some(set) => set,
        None => crate::eval::default_set().context("no --set and no ../shared/devset")?,
    };
    let mut rows = Vec::new();
    for &crawlers in &args.crawlers {
        for &workers in &args.workers {
            eprintln!("run: {workers} worker process(es), {crawlers} crawler process(es)");
            rows.push(
                measure(
                    config,
                    &set,
                    workers.max(1),
                    crawlers.max(1),
                    args.concurrency,
                )
                .await?,
            );
        }
    }
    println!(
        "pipeline bench on {} (store {}, index {}{}, queue {}{})",
        set.display(),
        masked(config.store.url.as_deref()),
        masked(config.index.url.as_deref()),
        if config.index.cluster { " cluster" } else { "" },
        masked(config.queue.url.as_deref()),
        if config.queue.cluster { " cluster" } else { "" },
    );
    println!(
        "{:>7} {:>8} {:>6} {:>7} {:>8} {:>7}  {:>14} {:>15} {:>14} {:>5}",
        "workers",
        "crawlers",
        "pages",
        "wall s",
        "pages/s",
        "speedup",
        "crawl cpu ms/p",
        "worker cpu ms/p",
        "other cpu ms/p",
        "dead"
    );
    let baseline = rows.first().map(|row| row.pages as f64 / row.seconds);
    for row in &rows {
        let pages = row.pages.max(1) as f64;
        let rate = row.pages as f64 / row.seconds;
        println!(
            "{:>7} {:>8} {:>6} {:>7.1} {:>8.1} {:>6.2}x  {:>14.1} {:>15.1} {:>14.1} {:>5}",
            row.workers,
            row.crawlers,
            row.pages,
            row.seconds,
            rate,
            baseline.map_or(1.0, |base| rate / base),
            row.crawl_cpu * 1000.0 / pages,
            row.worker_cpu * 1000.0 / pages,
            row.other_cpu * 1000.0 / pages,
            row.dead,
        );
    }
    println!(
        "by task kind: wall ms per page summed over worker slots, and the workers' CPU ms per \
         page split by wall share (an estimate: tasks overlap)"
    );
    for row in &rows {
        let pages = row.pages.max(1) as f64;
        let total_ms: u64 = row.stages.values().map(|(_, ms)| ms).sum();
        let stages: Vec<String> = row
            .stages
            .iter()
            .map(|(kind, (tasks, ms))| {
                let share = *ms as f64 / total_ms.max(1) as f64;
                format!(
                    "{kind} {:.1} wall, ~{:.1} cpu ({tasks} tasks)",
                    *ms as f64 / pages,
                    row.worker_cpu * 1000.0 * share / pages
                )
            })
            .collect();
        println!(
            "  {}w/{}c: {}",
            row.workers,
            row.crawlers,
            stages.join("; ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn masked(url: Option<&str>) -> String {
    url.map(copyhound_core::config::mask_url)
        .unwrap_or_else(|| "embedded".into())
}

async fn measure(
    config: &Config,
    set: &std::path::Path,
    workers: usize,
    crawlers: usize,
    concurrency: u32,
) -> anyhow::Result<Row> {
    let (mut run_config, scratch) = scratch_namespace(config.clone(), "bench")?;
    run_config.crawler.allow_private_addresses = true;
    run_config.crawler.verify_suggestions = false;
    run_config.store.migrate_on_start = true;
    let env = child_env(&run_config);

    let backends = Backends::open(&run_config).await?;
    let works = import::read_works(&set.join("works"))?;
    let owner = site_owner(&works)?;
    import_works(&backends.ports(), works, "bench").await?;
    let sites = StaticSites::serve(&set.join("pages")).await?;
    register_sites(&backends, &sites.sites, &owner).await?;
    // The works' fingerprints first, not timed: the run measures pages.
    let status = child(&env, &["worker", "--until-idle"])
        .stdout(Stdio::null())
        .status()
        .context("cannot run copyhound worker")?;
    anyhow::ensure!(status.success(), "fingerprinting the works failed");

    let bar = ProgressBar::new_spinner()
        .with_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid"));
    bar.enable_steady_tick(Duration::from_millis(200));
    let machine_before = machine_busy_seconds();
    let children_before = waited_children_seconds();
    let started = Instant::now();
    let logs: Vec<std::path::PathBuf> = (0..workers)
        .map(|index| scratch.path().join(format!("worker{index}.log")))
        .collect();
    let mut worker_children: Vec<Child> = logs
        .iter()
        .map(|log| {
            child(&env, &["worker", "--concurrency", &concurrency.to_string()])
                .env("RUST_LOG", "warn,copyhound_runtime::worker=debug")
                .env("COPYHOUND_LOG_FORMAT", "json")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(log)?)
                .spawn()
                .context("cannot start copyhound worker")
        })
        .collect::<anyhow::Result<_>>()?;
    let names: Vec<String> = sites.sites.iter().map(|site| site.name.clone()).collect();
    let crawl_threads: Vec<std::thread::JoinHandle<anyhow::Result<u64>>> = (0..crawlers)
        .map(|slot| {
            let env = env.clone();
            let mine: Vec<String> = names
                .iter()
                .enumerate()
                .filter(|(index, _)| index % crawlers == slot)
                .map(|(_, name)| name.clone())
                .collect();
            std::thread::spawn(move || crawl_sites(&env, &mine))
        })
        .collect();
    let mut pages = 0;
    for thread in crawl_threads {
        pages += thread
            .join()
            .map_err(|_| anyhow::anyhow!("a crawler thread panicked"))??;
    }
    let crawl_cpu = waited_children_seconds() - children_before;
    loop {
        let stats = backends.queue.stats().await?;
        bar.set_message(format!(
            "{pages} pages crawled; {} queued, {} in flight",
            stats.depth, stats.in_flight
        ));
        if stats.depth == 0 && stats.in_flight == 0 && stats.retrying == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    let worker_cpu: f64 = worker_children
        .iter()
        .map(|worker| process_seconds(worker.id()))
        .sum();
    let machine = machine_busy_seconds() - machine_before;
    bar.finish_and_clear();
    for worker in &mut worker_children {
        let _ = Command::new("kill")
            .args(["-TERM", &worker.id().to_string()])
            .status();
    }
    for worker in &mut worker_children {
        let _ = worker.wait();
    }
    let dead = backends.queue.stats().await?.dead;
    drop(sites);
    let mut stages = std::collections::BTreeMap::new();
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for (kind, ms) in text.lines().filter_map(task_done) {
            let entry: &mut (u64, u64) = stages.entry(kind).or_default();
            entry.0 += 1;
            entry.1 += ms;
        }
    }
    Ok(Row {
        workers,
        crawlers,
        pages,
        seconds,
        crawl_cpu,
        worker_cpu,
        other_cpu: (machine - crawl_cpu - worker_cpu).max(0.0),
        dead,
        stages,
    })
}

/// Reads a worker's JSON "task done" log line: (task kind, wall ms).
fn task_done(line: &str) -> Option<(String, u64)> {
    let event: serde_json::Value = serde_json::from_str(line).ok()?;
    let fields = &event["fields"];
    if fields["message"] != "task done" {
        return None;
    }
    Some((
        fields["kind"].as_str()?.to_string(),
        fields["elapsed_ms"].as_u64()?,
    ))
}

/// Crawls `sites` one after another, each in a `copyhound crawl` process;
/// returns the pages fetched.
fn crawl_sites(env: &Arc<Vec<(String, String)>>, sites: &[String]) -> anyhow::Result<u64> {
    let mut fetched = 0;
    for site in sites {
        let mut process = child(env, &["crawl", site, "--no-compare"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start copyhound crawl")?;
        let mut out = String::new();
        if let Some(mut stdout) = process.stdout.take() {
            stdout.read_to_string(&mut out)?;
        }
        process.wait()?;
        fetched += out
            .split("fetched ")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .and_then(|count| count.trim().parse::<u64>().ok())
            .with_context(|| format!("crawl of {site} printed no page count: {out}"))?;
    }
    Ok(fetched)
}

/// The environment that points a child at this run's namespace.
pub(crate) fn child_env(config: &Config) -> Arc<Vec<(String, String)>> {
    let mut env = vec![
        ("COPYHOUND_DATA_DIR", config.data_dir.display().to_string()),
        ("COPYHOUND_STORE_DATABASE", config.store.database.clone()),
        ("COPYHOUND_STORE_MIGRATE_ON_START", "false".into()),
        ("COPYHOUND_INDEX_PREFIX", config.index.prefix.clone()),
        ("COPYHOUND_INDEX_CLUSTER", config.index.cluster.to_string()),
        ("COPYHOUND_QUEUE_PREFIX", config.queue.prefix.clone()),
        ("COPYHOUND_QUEUE_CLUSTER", config.queue.cluster.to_string()),
        ("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true".into()),
        (
            "COPYHOUND_CRAWLER_VERIFY_SUGGESTIONS",
            config.crawler.verify_suggestions.to_string(),
        ),
    ];
    for (name, url) in [
        ("COPYHOUND_STORE_URL", &config.store.url),
        ("COPYHOUND_INDEX_URL", &config.index.url),
        ("COPYHOUND_QUEUE_URL", &config.queue.url),
    ] {
        if let Some(url) = url {
            env.push((name, url.clone()));
        }
    }
    Arc::new(
        env.into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect(),
    )
}

pub(crate) fn child(env: &[(String, String)], args: &[&str]) -> Command {
    let binary = std::env::current_exe().unwrap_or_else(|_| "copyhound".into());
    let mut command = Command::new(binary);
    command
        .args(args)
        .envs(env.iter().map(|(name, value)| (name, value)))
        .env("RUST_LOG", "warn");
    command
}

/// CPU seconds (user + system) of a running process.
pub(crate) fn process_seconds(pid: u32) -> f64 {
    stat_fields(&format!("/proc/{pid}/stat"))
        .map_or(0.0, |fields| ticks(&fields, 13) + ticks(&fields, 14))
}

/// CPU seconds of this process's waited-for children.
fn waited_children_seconds() -> f64 {
    stat_fields("/proc/self/stat").map_or(0.0, |fields| ticks(&fields, 15) + ticks(&fields, 16))
}

/// Busy CPU seconds of the whole machine (all but idle and iowait).
pub(crate) fn machine_busy_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
        return 0.0;
    };
    let Some(line) = stat.lines().next() else {
        return 0.0;
    };
    let values: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|value| value.parse().ok())
        .collect();
    let total: f64 = values.iter().take(8).sum();
    let idle = values.get(3).copied().unwrap_or(0.0) + values.get(4).copied().unwrap_or(0.0);
    (total - idle) / TICKS_PER_SECOND
}

/// The fields of a `/proc/.../stat` line after the command name (which may hold spaces).
fn stat_fields(path: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(path).ok()?;
    let after = stat.rsplit_once(')')?.1;
    // Placeholders for fields 1 and 2 (pid, comm): index n - 1 holds field n.
    Some(
        std::iter::repeat_n(String::new(), 2)
            .chain(after.split_whitespace().map(str::to_string))
            .collect(),
    )
}

fn ticks(fields: &[String], index: usize) -> f64 {
    fields
        .get(index)
        .and_then(|value| value.parse::<f64>().ok())
        .unwrap_or(0.0)
        / TICKS_PER_SECOND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_done_lines_are_read() {
        let line = r#"{"timestamp":"t","level":"DEBUG","fields":{"message":"task done","task_id":"t_1","kind":"compare_page","elapsed_ms":12},"target":"copyhound_runtime::worker"}"#;
        assert_eq!(task_done(line), Some(("compare_page".into(), 12)));
        assert_eq!(task_done("not json"), None);
        assert_eq!(task_done(r#"{"fields":{"message":"task failed"}}"#), None);
    }

    #[test]
    fn proc_counters_are_read_by_field_number() {
        // utime is field 14, stime 15, cutime 16, cstime 17 (1-based).
        let fields = stat_fields("/proc/self/stat").unwrap();
        assert!(fields.len() > 17);
        let spin = Instant::now();
        let mut x = 0_u64;
        while spin.elapsed() < Duration::from_millis(300) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        assert!(x != 1);
        assert!(process_seconds(std::process::id()) > 0.05);
        assert!(machine_busy_seconds() > 0.0);
    }
}
