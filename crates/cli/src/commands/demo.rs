//! `copyhound demo`: the main job on a bare machine. It needs no services and no
//! network beyond loopback.

use std::process::ExitCode;

use copyhound_core::config::Config;

use super::fingerprint::{compare_texts, fingerprinter};
use crate::cli::DemoArgs;

const SAMPLE_CHAPTER: &str = include_str!("../../samples/registered-chapter.txt");
const SAMPLE_PAGE: &[u8] = include_bytes!("../../samples/pirated-page.html");

pub async fn run(config: &Config, args: DemoArgs) -> anyhow::Result<ExitCode> {
    let _ = config;
    println!("CopyHound demo: a registered chapter against a pirated page that carries it");
    println!("in traditional script, with homophones, typos, synonyms, zero-width characters");
    println!("and site watermarks inside sentences.\n");
    let engine = fingerprinter()?;
    let decoded = copyhound_crawler::charset::decode_body(SAMPLE_PAGE, None, None);
    let page = copyhound_crawler::extract::extract(&decoded.text, &Default::default()).text;
    let comparison = tokio::task::spawn_blocking(move || {
        compare_texts(&engine, SAMPLE_CHAPTER.to_string(), page)
    })
    .await?;
    comparison.print(5);
    if let Some(path) = args.json_out {
        std::fs::write(&path, serde_json::to_vec_pretty(&comparison)?)?;
        println!("\nwrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
