//! Per-mutation figures on the shared devset, for `docs/fingerprints.md`.
//!
//! ```text
//! cargo run --release -p copyhound-fingerprint --example devset_report [-- devset|devset-hard]
//! ```
//!
//! For each positive page and each chapter it copies: word / shingle SimHash
//! distance, share of the chapter's DNA codes found on the page, share of
//! chapter passages with a page passage within 3 bits, verifier chapter
//! coverage; the same against a wrong chapter. Negative pages: the highest
//! verifier coverage over all registered chapters.

#[path = "../tests/support/devset.rs"]
mod devset;

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use copyhound_fingerprint::{
    DocumentFingerprint, FingerprintConfig, Fingerprinter, hamming_distance,
};

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn dna_share(a: &DocumentFingerprint, b: &DocumentFingerprint) -> f64 {
    if a.dna.is_empty() {
        return 0.0;
    }
    let set: HashSet<u64> = b.dna.iter().copied().collect();
    a.dna.iter().filter(|c| set.contains(c)).count() as f64 / a.dna.len() as f64
}

fn passage_share(a: &DocumentFingerprint, b: &DocumentFingerprint) -> f64 {
    if a.passages.is_empty() {
        return 0.0;
    }
    let hits = a
        .passages
        .iter()
        .filter(|p| {
            b.passages
                .iter()
                .any(|q| hamming_distance(p.simhash, q.simhash) <= 3)
        })
        .count();
    hits as f64 / a.passages.len() as f64
}

#[derive(Default)]
struct Row {
    word: Vec<f64>,
    shingle: Vec<f64>,
    dna: Vec<f64>,
    passage: Vec<f64>,
    cov: Vec<f64>,
    truth_cov: Vec<f64>,
    found: usize,
    wrong_word: Vec<f64>,
    wrong_cov: Vec<f64>,
}

fn main() -> anyhow::Result<()> {
    let name = std::env::args().nth(1).unwrap_or_else(|| "devset".into());
    let Some(dir) = devset::locate(&name) else {
        return Ok(());
    };
    let set = devset::Devset::load(dir);
    let t0 = Instant::now();
    let fp = Fingerprinter::new(FingerprintConfig::default())?;
    eprintln!("Fingerprinter::new: {:?}", t0.elapsed());

    let chapters = set.chapters();
    let mut norm = BTreeMap::new();
    let mut prints = BTreeMap::new();
    let mut prepared = BTreeMap::new();
    for (w, c) in &chapters {
        let n = fp.normalize(&set.chapter_text(w, c));
        prints.insert((w.clone(), c.clone()), fp.fingerprint_normalized(&n));
        prepared.insert((w.clone(), c.clone()), fp.prepare_chapter(&n));
        norm.insert((w.clone(), c.clone()), n);
    }
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut neg: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let t1 = Instant::now();
    let mut verifications = 0usize;
    for (pid, page) in set.pages() {
        if page["robots_disallowed"].as_bool() == Some(true)
            || page["role"].as_str() == Some("index")
        {
            continue;
        }
        let pn = fp.normalize(&set.page_text(&pid));
        let pf = fp.fingerprint_normalized(&pn);
        let copies = page["copies"].as_array().cloned().unwrap_or_default();
        if page["label"].as_str() == Some("positive") && !copies.is_empty() {
            let kind = page["primary"].as_str().unwrap_or("?").to_owned();
            let row = rows.entry(kind).or_default();
            for cp in &copies {
                let key = (
                    cp["work"].as_str().unwrap_or("").to_owned(),
                    cp["chapter"].as_str().unwrap_or("").to_owned(),
                );
                let Some(cf) = prints.get(&key) else { continue };
                row.word
                    .push(f64::from(hamming_distance(cf.simhash, pf.simhash)));
                row.shingle.push(f64::from(hamming_distance(
                    cf.shingle_simhash,
                    pf.shingle_simhash,
                )));
                row.dna.push(dna_share(cf, &pf));
                row.passage.push(passage_share(cf, &pf));
                let cov = f64::from(fp.verify_prepared(&prepared[&key], &pn).chapter_coverage);
                let truth_cov = cp["coverage"].as_f64().unwrap_or(1.0);
                row.cov.push(cov);
                row.truth_cov.push(truth_cov);
                if cov >= 0.5 * truth_cov {
                    row.found += 1;
                }
                // A wrong chapter: the next one in sorted order not copied here.
                let idx = chapters.iter().position(|k| *k == key).unwrap_or(0);
                let wrong = &chapters[(idx + 7) % chapters.len()];
                row.wrong_word.push(f64::from(hamming_distance(
                    prints[wrong].simhash,
                    pf.simhash,
                )));
                row.wrong_cov.push(f64::from(
                    fp.verify_prepared(&prepared[wrong], &pn).chapter_coverage,
                ));
            }
        } else {
            let kind = page["neg_kind"]
                .as_str()
                .or(page["class"].as_str())
                .unwrap_or("negative")
                .to_owned();
            let best = prepared
                .values()
                .map(|p| {
                    verifications += 1;
                    f64::from(fp.verify_prepared(p, &pn).chapter_coverage)
                })
                .fold(0.0, f64::max);
            neg.entry(kind).or_default().push(best);
        }
    }
    eprintln!(
        "pages processed in {:?} ({verifications} negative verifications)",
        t1.elapsed()
    );
    println!(
        "| primary | n | word SimHash d (true / wrong) | shingle SimHash d | DNA codes shared | passages matched (d<=3) | truth coverage | verifier coverage (true / wrong) | found (cov >= truth/2) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (kind, r) in &mut rows {
        let n = r.cov.len();
        let recall = r.found as f64 / n.max(1) as f64;
        println!(
            "| {kind} | {n} | {:.0} / {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} / {:.2} | {:.2} |",
            median(&mut r.word),
            median(&mut r.wrong_word),
            median(&mut r.shingle),
            median(&mut r.dna),
            median(&mut r.passage),
            median(&mut r.truth_cov),
            median(&mut r.cov),
            median(&mut r.wrong_cov),
            recall
        );
    }
    println!();
    println!("| negative kind | n | max coverage over all chapters: median | max | pages >= 0.3 |");
    println!("|---|---|---|---|---|");
    for (kind, v) in &mut neg {
        let over = v.iter().filter(|&&c| c >= 0.3).count();
        let max = v.iter().copied().fold(0.0, f64::max);
        println!(
            "| {kind} | {} | {:.3} | {:.3} | {over} |",
            v.len(),
            median(v),
            max
        );
    }
    Ok(())
}
