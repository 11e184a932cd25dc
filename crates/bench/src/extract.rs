//! `copyhound bench extract`: the cost of reading pages as a reader sees them
//! (the page's CSS cascaded, see `copyhound_crawler::style`) against reading
//! the markup alone, on the same pages, alternated in one run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use copyhound_core::model::ExtractionHints;
use copyhound_crawler::charset::decode_body;
use copyhound_crawler::extract::{DEFAULT_MAX_LINKS, Extracted, extract_styled};

use crate::args::BenchExtractArgs;

/// Pages read at most (files under the folder, in path order).
const MAX_PAGES: usize = 20_000;

/// Runs the benchmark and prints its report.
pub fn run(args: BenchExtractArgs) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    collect(&args.pages, &mut files)?;
    files.sort();
    files.truncate(MAX_PAGES);
    anyhow::ensure!(
        !files.is_empty(),
        "no .html/.htm/.shtml files under {}",
        args.pages.display()
    );
    let pages: Vec<String> = files
        .iter()
        .map(|path| {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok(decode_body(&bytes, None, None).text)
        })
        .collect::<anyhow::Result<_>>()?;
    let bytes: usize = pages.iter().map(String::len).sum();
    eprintln!(
        "{} pages, {:.1} MB, {} rounds ...",
        pages.len(),
        bytes as f64 / 1e6,
        args.rounds
    );
    let hints = ExtractionHints::default();
    let no_sheets = |_: &str| -> Option<std::sync::Arc<str>> { None };
    let (mut markup, mut styled) = (Vec::new(), Vec::new());
    let mut last = Vec::new();
    for _ in 0..args.rounds.max(1) {
        markup.push(
            time(|| {
                pages
                    .iter()
                    .map(|html| extract_styled(html, &hints, DEFAULT_MAX_LINKS, None))
                    .collect::<Vec<_>>()
            })
            .0,
        );
        let (elapsed, extracted) = time(|| {
            pages
                .iter()
                .map(|html| extract_styled(html, &hints, DEFAULT_MAX_LINKS, Some(&no_sheets)))
                .collect()
        });
        styled.push(elapsed);
        last = extracted;
    }
    let per_page = |runs: &mut Vec<Duration>| {
        runs.sort();
        runs[runs.len() / 2].as_secs_f64() * 1e6 / pages.len() as f64
    };
    let (markup_us, styled_us) = (per_page(&mut markup), per_page(&mut styled));
    let count = |f: fn(&Extracted) -> bool| last.iter().filter(|e| f(e)).count();
    println!(
        "extraction, median of {} rounds over {} pages:",
        args.rounds.max(1),
        pages.len()
    );
    println!("  markup only (baseline) {markup_us:>9.1} us/page");
    println!(
        "  as a reader sees it    {styled_us:>9.1} us/page   ({:.2}x the baseline)",
        styled_us / markup_us.max(f64::MIN_POSITIVE)
    );
    println!(
        "  pages with hidden text {}, reordered {}, generated content {}, glyph images {}, CSS cut short {}",
        count(|e| e.styled.hidden > 0),
        count(|e| e.styled.reordered > 0),
        count(|e| e.styled.generated > 0),
        count(|e| e.styled.glyphs > 0),
        count(|e| e.styled.truncated.is_some()),
    );
    Ok(ExitCode::SUCCESS)
}

fn time<T>(work: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let out = work();
    (started.elapsed(), out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "html" | "htm" | "shtml"))
        {
            out.push(path);
        }
        if out.len() >= MAX_PAGES {
            break;
        }
    }
    Ok(())
}
