//! Crawls the labeled benchmark sites served from 127.0.0.1 and checks the
//! crawl against truth.json: every content page robots.txt allows is reached
//! and none it disallows; every copied passage (truth spans, sliced from the
//! reference extractor's output by python3) survives decoding and extraction;
//! split chapters are joined on their first part.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use common::{devset_dir, harness, serve_dir, site, test_config};
use copyhound_core::model::Page;
use copyhound_crawler::NoProgress;
use serde_json::Value;

/// Span texts per page id, sliced by the reference extractor.
fn span_texts(set_dir: &Path) -> HashMap<String, Vec<String>> {
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1] + "/tools")
import pagetext
truth = json.load(open(sys.argv[1] + "/truth.json"))
out = {}
for pid, page in truth["pages"].items():
    if page.get("spans") and not page.get("robots_disallowed"):
        text = pagetext.visible_text(open(sys.argv[1] + "/pages/" + pid, "rb").read())
        out[pid] = [text[s["start"]:s["end"]] for s in page["spans"]]
json.dump(out, sys.stdout)
"#;
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(set_dir)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Letters and digits only, lowercased: whitespace, punctuation and
/// indentation differ between extractors, the words do not.
fn normalized(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// `strict_pagination`: every split chapter must be joined completely (the hard
/// set breaks some chains on purpose: a part without any page navigation).
async fn crawl_set(set_name: &str, strict_pagination: bool) {
    let Some(set_dir) = devset_dir(set_name) else {
        return;
    };
    let truth: Value =
        serde_json::from_slice(&std::fs::read(set_dir.join("truth.json")).unwrap()).unwrap();
    let spans = span_texts(&set_dir);
    let mut site_names: Vec<String> = truth["sites"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    site_names.sort();
    let test = harness(test_config()).await;
    let mut stored: HashMap<String, Page> = HashMap::new();
    for site_name in &site_names {
        let address = serve_dir(set_dir.join("pages").join(site_name)).await;
        let site = site(&format!("http://{address}/index.html"));
        test.sites.put_site(&site).await.unwrap();
        let run = test
            .crawler
            .run_crawl(
                &site.id,
                &copyhound_core::ids::CrawlRunId::generate(),
                &NoProgress,
            )
            .await
            .unwrap();
        eprintln!("{set_name}/{site_name}: {:?}", run.counters);
        let prefix = format!("http://{address}/");
        for page in test.all_pages().await {
            if let Some(path) = page.url.strip_prefix(&prefix) {
                stored.insert(format!("{site_name}/{path}"), page);
            }
        }
    }
    let mut failures: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let (mut spans_total, mut spans_missing) = (0usize, 0usize);
    for (page_id, page) in truth["pages"].as_object().unwrap() {
        let disallowed = page["robots_disallowed"].as_bool().unwrap();
        let Some(stored_page) = stored.get(page_id) else {
            if !disallowed && page["role"] == "content" {
                failures
                    .entry("content page not reached")
                    .or_default()
                    .push(page_id.clone());
            }
            continue;
        };
        if disallowed {
            failures
                .entry("disallowed page fetched")
                .or_default()
                .push(page_id.clone());
        }
        if page["role"] == "content" && stored_page.text.contains('\u{fffd}') {
            failures
                .entry("replacement characters")
                .or_default()
                .push(page_id.clone());
        }
        let text = normalized(&stored_page.text);
        for span in spans.get(page_id).into_iter().flatten() {
            spans_total += 1;
            if !text.contains(&normalized(span)) {
                spans_missing += 1;
                failures.entry("span missing").or_default().push(format!(
                    "{page_id}: {}",
                    span.chars().take(40).collect::<String>()
                ));
            }
        }
        if let Some(split) = page["split"].as_object() {
            let part = split["part"].as_u64().unwrap();
            let of = split["of"].as_u64().unwrap() as usize;
            match stored_page.fetch.pagination.as_ref() {
                Some(pagination)
                    if part == 1
                        && (pagination.part_urls.len() != of
                            || pagination.joined_text.is_none()) =>
                {
                    failures
                        .entry("split chapter not joined")
                        .or_default()
                        .push(page_id.clone());
                }
                None => failures
                    .entry("split part without pagination")
                    .or_default()
                    .push(page_id.clone()),
                _ => {}
            }
        }
    }
    eprintln!(
        "{set_name}: {} pages stored, {spans_total} spans checked, {spans_missing} missing",
        stored.len()
    );
    let span_failures = failures.remove("span missing").unwrap_or_default();
    if !strict_pagination {
        for key in ["split chapter not joined", "split part without pagination"] {
            if let Some(pages) = failures.remove(key) {
                eprintln!(
                    "{set_name}: note: {key}: {} pages (site gives no navigation)",
                    pages.len()
                );
            }
        }
    }
    assert!(
        spans_missing * 100 <= spans_total,
        "more than 1% of spans missing: {span_failures:#?}"
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_the_devset_against_truth() {
    crawl_set("devset", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_the_hard_devset_against_truth() {
    crawl_set("devset-hard", false).await;
}
