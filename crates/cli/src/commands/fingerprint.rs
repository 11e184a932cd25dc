//! `copyhound fingerprint` and `copyhound compare`: the fingerprint engine on
//! files, for operators checking why a page did or did not match.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use copyhound_fingerprint::{Fingerprinter, Verification, hamming_distance};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::cli::{CompareArgs, FingerprintArgs};
use crate::text_input;

#[derive(Serialize)]
struct FileFingerprint<'a> {
    file: String,
    charset: &'a str,
    html: bool,
    chars: usize,
    #[serde(flatten)]
    fingerprint: &'a copyhound_fingerprint::DocumentFingerprint,
}

pub fn fingerprint(args: FingerprintArgs) -> anyhow::Result<ExitCode> {
    let engine = copyhound_runtime::fingerprinter()?;
    let progress = ProgressBar::new(args.files.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} files {per_sec} {eta}")
            .expect("the template is valid"),
    );
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(args.files.len().max(1));
    let chunks: Vec<&[PathBuf]> = args
        .files
        .chunks(args.files.len().div_ceil(threads).max(1))
        .collect();
    let results: Vec<Vec<anyhow::Result<String>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let engine = engine.clone();
                let progress = progress.clone();
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|path| {
                            let line = fingerprint_file(&engine, path);
                            progress.inc(1);
                            line
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("fingerprint threads do not panic"))
            .collect()
    });
    progress.finish_and_clear();
    let mut stdout = std::io::stdout().lock();
    let mut failures = 0;
    for result in results.into_iter().flatten() {
        match result {
            Ok(line) => writeln!(stdout, "{line}")?,
            Err(error) => {
                failures += 1;
                eprintln!("error: {error:#}");
            }
        }
    }
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn fingerprint_file(engine: &Fingerprinter, path: &std::path::Path) -> anyhow::Result<String> {
    let input = text_input::read(path)?;
    let fingerprint = engine.fingerprint(&input.text);
    let record = FileFingerprint {
        file: path.display().to_string(),
        charset: &input.charset,
        html: input.html,
        chars: input.text.chars().count(),
        fingerprint: &fingerprint,
    };
    Ok(serde_json::to_string(&record)?)
}

/// The comparison of a registered text and a suspect page.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub chapter_chars: usize,
    pub page_chars: usize,
    pub word_simhash_distance: u32,
    pub shingle_simhash_distance: u32,
    /// Share of the chapter's DNA codes found among the page's.
    pub dna_agreement: f32,
    pub verification: Verification,
    #[serde(skip)]
    chapter_text: String,
    #[serde(skip)]
    page_text: String,
}

/// Compares `chapter` against `page` with every fingerprint.
pub fn compare_texts(engine: &Fingerprinter, chapter: String, page: String) -> Comparison {
    let chapter_normalized = engine.normalize(&chapter);
    let page_normalized = engine.normalize(&page);
    let chapter_fp = engine.fingerprint_normalized(&chapter_normalized);
    let page_fp = engine.fingerprint_normalized(&page_normalized);
    let page_codes: std::collections::HashSet<u64> = page_fp.dna.iter().copied().collect();
    let shared = chapter_fp
        .dna
        .iter()
        .filter(|code| page_codes.contains(code))
        .count();
    let dna_agreement = if chapter_fp.dna.is_empty() {
        0.0
    } else {
        shared as f32 / chapter_fp.dna.len() as f32
    };
    Comparison {
        chapter_chars: chapter.chars().count(),
        page_chars: page.chars().count(),
        word_simhash_distance: hamming_distance(chapter_fp.simhash, page_fp.simhash),
        shingle_simhash_distance: hamming_distance(
            chapter_fp.shingle_simhash,
            page_fp.shingle_simhash,
        ),
        dna_agreement,
        verification: engine.verify(&chapter_normalized, &page_normalized),
        chapter_text: chapter,
        page_text: page,
    }
}

impl Comparison {
    /// Prints the comparison for people: figures, then the copied spans side by side.
    pub fn print(&self, max_spans: usize) {
        let verification = &self.verification;
        let copied: u32 = verification
            .spans
            .iter()
            .map(|span| span.chapter_end - span.chapter_start)
            .sum();
        println!("registered text    {:>7} chars", self.chapter_chars);
        println!("suspect page       {:>7} chars", self.page_chars);
        println!(
            "word SimHash       distance {:>2} of 64 (unrelated texts: about 32)",
            self.word_simhash_distance
        );
        println!(
            "shingle SimHash    distance {:>2} of 64",
            self.shingle_simhash_distance
        );
        println!(
            "pinyin DNA         {:.0}% of the registered text's codes on the page",
            self.dna_agreement * 100.0
        );
        println!(
            "chapter coverage   {:.1}% of the registered text is on the page",
            verification.chapter_coverage * 100.0
        );
        println!(
            "page coverage      {:.1}% of the page is copied",
            verification.page_coverage * 100.0
        );
        println!(
            "copied spans       {} spans, {copied} chars of the registered text",
            verification.spans.len()
        );
        let chapter: Vec<char> = self.chapter_text.chars().collect();
        let page: Vec<char> = copyhound_core::model::shown_text(&self.page_text)
            .chars()
            .collect();
        for (number, span) in verification.spans.iter().take(max_spans).enumerate() {
            println!(
                "\n#{} registered [{}..{})  page [{}..{})",
                number + 1,
                span.chapter_start,
                span.chapter_end,
                span.page_start,
                span.page_end
            );
            println!(
                "  registered: {}",
                excerpt(&chapter, span.chapter_start, span.chapter_end)
            );
            println!(
                "  page:       {}",
                excerpt(&page, span.page_start, span.page_end)
            );
        }
        if verification.spans.len() > max_spans {
            println!(
                "\n... {} more spans (--json prints them all)",
                verification.spans.len() - max_spans
            );
        }
    }
}

fn excerpt(chars: &[char], start: u32, end: u32) -> String {
    let start = (start as usize).min(chars.len());
    let end = (end as usize).clamp(start, chars.len());
    let text: String = chars[start..end]
        .iter()
        .map(|c| if c.is_whitespace() { ' ' } else { *c })
        .collect();
    let shown: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        format!("{shown}…")
    } else {
        shown
    }
}

pub fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let engine = copyhound_runtime::fingerprinter()?;
    let chapter = text_input::read(&args.registered)?;
    let page = text_input::read(&args.suspect)?;
    let comparison = compare_texts(&engine, chapter.text, page.text);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        comparison.print(args.max_spans);
    }
    Ok(ExitCode::SUCCESS)
}
