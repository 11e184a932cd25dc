//! `copyhound demo`: the main job on a bare machine, on the embedded default. It
//! registers the works of a benchmark folder (the shared dev set when present,
//! else a small bundled sample), serves its sites on loopback, crawls them with
//! the real crawler, fingerprints and compares, and writes an HTML report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use copyhound_core::config::Config;
use copyhound_core::model::ReportFormat;

use super::report::{inputs_for_all_publishers, write_report};
use crate::cli::DemoArgs;
use copyhound_bench::{default_set, run_pipeline};

const SAMPLE_CHAPTER: &str = include_str!("../../samples/registered-chapter.txt");
const SAMPLE_PAGE: &[u8] = include_bytes!("../../samples/pirated-page.html");

pub async fn run(config: &Config, args: DemoArgs) -> anyhow::Result<ExitCode> {
    let demo_dir = config.data_dir.join("demo");
    if demo_dir.is_dir() {
        std::fs::remove_dir_all(&demo_dir)
            .with_context(|| format!("cannot clear {}", demo_dir.display()))?;
    }
    std::fs::create_dir_all(&demo_dir)?;
    let (set, description) = match args.set.or_else(default_set) {
        Some(set) => (set.clone(), format!("the benchmark at {}", set.display())),
        None => (
            write_bundled_sample(&demo_dir.join("sample"))?,
            "the bundled sample".to_string(),
        ),
    };
    println!("CopyHound demo on {description}: register works, crawl sites, compare, report.");
    let mut demo_config = config.clone();
    demo_config.data_dir = demo_dir.join("data");
    demo_config.store.url = None;
    demo_config.index.url = None;
    demo_config.queue.url = None;
    demo_config.crawler.allow_private_addresses = true;
    let run = run_pipeline(&demo_config, &set, None).await?;
    let inputs = inputs_for_all_publishers(&run.backends).await?;
    let mut report_paths = Vec::new();
    for input in &inputs {
        let path = demo_dir
            .join("reports")
            .join(format!("{}.html", input.scope.publisher_id));
        write_report(input, ReportFormat::Html, &path)?;
        report_paths.push(path);
    }
    let matches: Vec<&copyhound_core::model::Match> =
        inputs.iter().flat_map(|input| &input.matches).collect();
    let works: Vec<&copyhound_core::model::Work> =
        inputs.iter().flat_map(|input| &input.works).collect();

    let mut by_work: BTreeMap<String, (usize, std::collections::BTreeSet<String>)> =
        BTreeMap::new();
    for found in &matches {
        let title = works
            .iter()
            .find(|work| work.id == found.work_id)
            .map_or(found.work_id.to_string(), |work| {
                format!("{} ({})", work.title, work.id)
            });
        let entry = by_work.entry(title).or_default();
        entry.0 += 1;
        entry.1.insert(found.page_id.to_string());
    }
    println!(
        "\ncrawled {} sites, {} pages in {:.1} s; {} infringing (page, chapter) pairs",
        run.sites.sites.len(),
        run.pages_crawled,
        run.elapsed.as_secs_f64(),
        matches.len()
    );
    for (work, (pairs, pages)) in &by_work {
        println!("  {work}: {pairs} copied chapters on {} pages", pages.len());
    }
    if run.dead_tasks > 0 {
        println!(
            "  {} tasks failed for good (`copyhound tasks dead` lists them)",
            run.dead_tasks
        );
    }
    println!("\nreports (one per publisher, HTML with charts and side-by-side evidence):");
    for path in &report_paths {
        println!("  {}", absolute(path).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the bundled sample as a benchmark folder: one work, one site.
fn write_bundled_sample(dir: &Path) -> anyhow::Result<PathBuf> {
    let chapters = dir.join("works/w1/chapters");
    std::fs::create_dir_all(&chapters)?;
    std::fs::write(chapters.join("c1.txt"), SAMPLE_CHAPTER)?;
    let meta = serde_json::json!({
        "work_id": "w1", "title": "二心集", "author": "鲁迅", "publisher_id": "sample", "type": "news",
        "language": "zh", "n_chapters": 1,
        "chapters": [{"chapter_id": "c1", "index": 1, "title": "《进化和退化》小引", "file": "chapters/c1.txt",
                      "chars": SAMPLE_CHAPTER.chars().count()}]
    });
    std::fs::write(
        dir.join("works/w1/meta.json"),
        serde_json::to_vec_pretty(&meta)?,
    )?;
    let site = dir.join("pages/site1");
    std::fs::create_dir_all(&site)?;
    std::fs::write(site.join("p1.html"), SAMPLE_PAGE)?;
    std::fs::write(
        site.join("index.html"),
        "<html><head><meta charset=\"utf-8\"><title>文史杂谈</title></head><body><ul>\
         <li><a href=\"p1.html\">《进化和退化》小引</a></li></ul></body></html>",
    )?;
    Ok(dir.to_path_buf())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
