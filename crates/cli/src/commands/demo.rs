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
        println!(
            "replacing the previous demo in {} (its data and reviews; the demo always starts fresh)",
            demo_dir.display()
        );
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
    // The sample's pages may name real domains: suggested, never contacted.
    demo_config.crawler.verify_suggestions = false;
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

    let summaries = summarize(
        &works,
        &matches,
        inputs.iter().flat_map(|input| &input.chapters),
    );
    println!(
        "\ncrawled {} sites: {} pages stored ({} fetches stored nothing) in {:.1} s; {} page-chapter matches",
        run.sites.sites.len(),
        run.pages_crawled,
        run.not_stored,
        run.elapsed.as_secs_f64(),
        matches.len()
    );
    for line in summaries {
        println!("  {line}");
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
    let publishers: Vec<String> = inputs
        .iter()
        .map(|input| input.scope.publisher_id.to_string())
        .collect();
    let next = NextSteps {
        program: program_invocation(),
        data_dir: absolute(&demo_config.data_dir),
        listen: config.server.listen.clone(),
        publishers,
        operator_key_set: config
            .server
            .admin_key
            .as_deref()
            .is_some_and(|key| !key.is_empty()),
    };
    println!();
    for line in next.lines() {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What the demo prints last: how to browse its results in the console.
struct NextSteps {
    /// How the user runs the binary (`copyhound`, or `cargo run --release --`).
    program: String,
    /// The demo's data directory, absolute.
    data_dir: PathBuf,
    /// `server.listen`.
    listen: String,
    /// The demo's publishers.
    publishers: Vec<String>,
    /// Whether `server.admin_key` is set.
    operator_key_set: bool,
}

impl NextSteps {
    fn lines(&self) -> Vec<String> {
        let on_demo = format!(
            "{} --data-dir {}",
            self.program,
            shell_word(&self.data_dir.display().to_string())
        );
        let url = format!("http://{}/", self.listen.replace("0.0.0.0", "127.0.0.1"));
        let mut lines = vec!["next: browse these results in the console".to_string()];
        if let Some(first) = self.publishers.first() {
            lines.push(format!("  1. a key of publisher {first} (printed once):"));
            lines.push(format!("       {on_demo} keys create {first} --role admin"));
            lines.push(format!(
                "  2. the console; open {url} and log in with that key:"
            ));
        } else {
            lines.push(format!("  the console, at {url}:"));
        }
        lines.push(format!("       {on_demo} serve"));
        if self.publishers.len() > 1 {
            lines.push(format!(
                "  the demo's publishers: {} (a key sees its own publisher's results)",
                self.publishers.join(", ")
            ));
        }
        lines.push(if self.operator_key_set {
            "  or log in with the operator key (server.admin_key): it creates publishers and their keys"
                .to_string()
        } else {
            "  or start `serve` with COPYHOUND_SERVER_ADMIN_KEY=<a long secret> and log in with \
             that operator key: it creates publishers and their keys"
                .to_string()
        });
        lines
    }
}

/// How the user ran this binary: `cargo run` (which sets `CARGO_PKG_NAME`
/// for the program, as the README's quick start does), else `copyhound`.
fn program_invocation() -> String {
    if std::env::var("CARGO_PKG_NAME").as_deref() != Ok(env!("CARGO_PKG_NAME")) {
        return "copyhound".to_string();
    }
    let release = std::env::current_exe().ok().is_some_and(|exe| {
        exe.parent()
            .and_then(Path::file_name)
            .is_some_and(|name| name == "release")
    });
    if release {
        "cargo run --release --".to_string()
    } else {
        "cargo run --".to_string()
    }
}

/// Quotes `word` for a POSIX shell when it holds anything but plain path characters.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|character| character.is_ascii_alphanumeric() || "/._-+:@%".contains(character));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// One line per copied work: distinct chapters copied out of the work's
/// chapters, the pages carrying them, and the page-chapter matches.
fn summarize<'a>(
    works: &[&copyhound_core::model::Work],
    matches: &[&copyhound_core::model::Match],
    chapters: impl Iterator<Item = &'a copyhound_report::ChapterInfo>,
) -> Vec<String> {
    use std::collections::BTreeSet;
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    for chapter in chapters {
        *totals.entry(chapter.work_id.to_string()).or_default() += 1;
    }
    let mut by_work: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>, usize)> =
        BTreeMap::new();
    for found in matches {
        let entry = by_work.entry(found.work_id.to_string()).or_default();
        entry.0.insert(found.chapter_id.to_string());
        entry.1.insert(found.page_id.to_string());
        entry.2 += 1;
    }
    by_work
        .into_iter()
        .map(|(work_id, (chapters, pages, pairs))| {
            let title = works
                .iter()
                .find(|work| work.id.as_str() == work_id)
                .map_or(work_id.clone(), |work| format!("{} ({work_id})", work.title));
            let total = totals.get(&work_id).copied().unwrap_or(chapters.len());
            format!(
                "{title}: {} of {total} chapters copied, on {} pages ({pairs} page-chapter matches)",
                chapters.len(),
                pages.len()
            )
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use copyhound_core::ids::{ChapterId, MatchId, PageId, PublisherId, SiteId, WorkId};
    use copyhound_core::model::{Language, Match, MatchStatus, Work, WorkKind};
    use copyhound_report::ChapterInfo;

    use super::{NextSteps, shell_word, summarize};

    #[test]
    fn the_demo_ends_with_how_to_browse_its_results_in_the_console() {
        let next = NextSteps {
            program: "copyhound".into(),
            data_dir: "/home/li/copyhound-data/demo/data".into(),
            listen: "127.0.0.1:8080".into(),
            publishers: vec!["N01".into(), "N02".into()],
            operator_key_set: false,
        };
        let text = next.lines().join("\n");
        assert!(
            text.contains(
                "copyhound --data-dir /home/li/copyhound-data/demo/data keys create N01 --role admin"
            ),
            "{text}"
        );
        assert!(
            text.find("keys create") < text.find(" serve"),
            "the key first: {text}"
        );
        assert!(
            text.contains("copyhound --data-dir /home/li/copyhound-data/demo/data serve")
                && text.contains("http://127.0.0.1:8080/"),
            "{text}"
        );
        assert!(text.contains("COPYHOUND_SERVER_ADMIN_KEY="), "{text}");
        assert!(text.contains("N01, N02"), "{text}");
        let configured = NextSteps {
            operator_key_set: true,
            listen: "0.0.0.0:9000".into(),
            ..next
        };
        let text = configured.lines().join("\n");
        assert!(text.contains("http://127.0.0.1:9000/"), "{text}");
        assert!(!text.contains("COPYHOUND_SERVER_ADMIN_KEY="), "{text}");
        assert!(text.contains("operator key (server.admin_key)"), "{text}");
    }

    #[test]
    fn paths_with_spaces_are_quoted_for_the_shell() {
        assert_eq!(shell_word("/tmp/a b/it's"), "'/tmp/a b/it'\\''s'");
        assert_eq!(shell_word("/tmp/data"), "/tmp/data");
    }

    #[test]
    fn the_summary_counts_distinct_chapters_not_page_chapter_pairs() {
        let publisher: PublisherId = "P01".parse().unwrap();
        let work_id: WorkId = "w1".parse().unwrap();
        let work = Work {
            id: work_id.clone(),
            publisher_id: publisher.clone(),
            title: "风起".into(),
            author: String::new(),
            kind: WorkKind::Novel,
            language: Language::Zh,
            licensed_hosts: Vec::new(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            released_at: None,
            release_schedule: None,
        };
        let chapters: Vec<ChapterInfo> = (1..=20)
            .map(|index| ChapterInfo {
                work_id: work_id.clone(),
                chapter_id: format!("c{index}").parse().unwrap(),
                title: format!("第{index}章"),
                index,
            })
            .collect();
        // Three pages copy chapters 1-4 each: 12 pairs, 4 chapters.
        let mut matches = Vec::new();
        for page in 0..3 {
            for chapter in 1..=4 {
                let page_id = PageId::for_url(&format!("http://pirate.example/{page}"));
                let chapter_id: ChapterId = format!("c{chapter}").parse().unwrap();
                matches.push(Match {
                    id: MatchId::for_pair(&publisher, &page_id, &work_id, &chapter_id, 1),
                    publisher_id: publisher.clone(),
                    page_url: format!("http://pirate.example/{page}"),
                    page_id,
                    site_id: "site1".parse::<SiteId>().unwrap(),
                    work_id: work_id.clone(),
                    chapter_id,
                    fingerprint_version: 1,
                    score: 0.9,
                    chapter_coverage: 0.9,
                    page_coverage: 0.9,
                    spans: Vec::new(),
                    evidence: Vec::new(),
                    page_body_sha256: "00".repeat(32),
                    page_reading: Default::default(),
                    duplicate_page_ids: Vec::new(),
                    status: MatchStatus::New,
                    reviews: Vec::new(),
                    first_seen: Utc::now(),
                    last_seen: Utc::now(),
                });
            }
        }
        let matches: Vec<&Match> = matches.iter().collect();
        let lines = summarize(&[&work], &matches, chapters.iter());
        assert_eq!(
            lines,
            ["风起 (w1): 4 of 20 chapters copied, on 3 pages (12 page-chapter matches)"]
        );
    }
}
