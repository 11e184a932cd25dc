//! Mutation tests on the shared devset: for a sample of positive pages per
//! primary mutation, the verifier must find the true chapter and not a wrong
//! one, SimHash must rank the true chapter closer than unrelated chapters,
//! and DNA must agree where the mutation keeps pinyin initials.
//! Skips (with a note) when `../shared/devset` is absent, unless `CI=true`.

mod support;

use std::collections::HashSet;

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter, hamming_distance};
use support::devset::{Devset, locate};

/// Pages sampled per mutation kind (debug builds; keep the test fast).
const PER_KIND: usize = 3;

#[test]
fn mutations_are_detected() {
    let Some(dir) = locate("devset") else { return };
    let set = Devset::load(dir);
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let chapters = set.chapters();
    let kinds = [
        ("exact", 0.8, true),
        ("homophone", 0.8, true),
        ("traditional", 0.8, true),
        ("watermark", 0.8, true),
        ("ad_inject", 0.8, true),
        ("typo", 0.8, false),
        ("para_shuffle", 0.2, false),
        ("partial", 0.2, false),
        ("wash", 0.5, false),
        ("combo", 0.5, false),
    ];
    let pages = set.pages();
    for (kind, min_ratio, dna_expected) in kinds {
        let sample: Vec<_> = pages
            .iter()
            .filter(|(_, p)| {
                p["primary"].as_str() == Some(kind)
                    && p["copies"].as_array().is_some_and(|c| c.len() == 1)
                    && p["lang"].as_str() == Some("zh")
            })
            .take(PER_KIND)
            .collect();
        assert!(!sample.is_empty(), "no {kind} pages in devset");
        for (pid, page) in sample {
            let cp = &page["copies"][0];
            let (work, chapter) = (
                cp["work"].as_str().expect("work"),
                cp["chapter"].as_str().expect("chapter"),
            );
            let truth_cov = cp["coverage"].as_f64().expect("coverage") as f32;
            let pn = fp.normalize(&set.page_text(pid));
            let cn = fp.normalize(&set.chapter_text(work, chapter));
            let v = fp.verify(&cn, &pn);
            assert!(
                v.chapter_coverage >= min_ratio * truth_cov,
                "{kind} {pid}: coverage {} < {min_ratio} x truth {truth_cov}",
                v.chapter_coverage
            );
            assert!(!v.spans.is_empty());
            // A wrong chapter of another work.
            let wrong = chapters
                .iter()
                .find(|(w, _)| w != work)
                .expect("another work");
            let wn = fp.normalize(&set.chapter_text(&wrong.0, &wrong.1));
            let wv = fp.verify(&wn, &pn);
            assert!(
                wv.chapter_coverage <= 0.05,
                "{kind} {pid}: wrong chapter coverage {}",
                wv.chapter_coverage
            );
            // SimHash ranks the true chapter closer than the wrong one.
            let (pf, cf, wf) = (
                fp.fingerprint_normalized(&pn),
                fp.fingerprint_normalized(&cn),
                fp.fingerprint_normalized(&wn),
            );
            assert!(
                hamming_distance(pf.simhash, cf.simhash) < hamming_distance(pf.simhash, wf.simhash),
                "{kind} {pid}: word simhash does not rank the true chapter first"
            );
            let page_codes: HashSet<u64> = pf.dna.iter().copied().collect();
            let shared = cf.dna.iter().filter(|c| page_codes.contains(c)).count() as f32
                / cf.dna.len().max(1) as f32;
            let wrong_shared = wf.dna.iter().filter(|c| page_codes.contains(c)).count();
            assert!(
                wrong_shared <= 1,
                "{kind} {pid}: {wrong_shared} DNA codes shared with a wrong chapter"
            );
            if dna_expected {
                assert!(
                    shared >= 0.5 * truth_cov,
                    "{kind} {pid}: DNA shared {shared}"
                );
            }
        }
    }
}

#[test]
fn negatives_have_no_long_spans() {
    let Some(dir) = locate("devset") else { return };
    let set = Devset::load(dir);
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let pages = set.pages();
    for (pid, page) in pages
        .iter()
        .filter(|(_, p)| {
            p["neg_kind"]
                .as_str()
                .is_some_and(|k| k == "near_miss" || k == "short_quote")
        })
        .take(4)
    {
        let pn = fp.normalize(&set.page_text(pid));
        for q in page["quotes"].as_array().into_iter().flatten() {
            let cn = fp.normalize(&set.chapter_text(
                q["work"].as_str().expect("work"),
                q["chapter"].as_str().expect("chapter"),
            ));
            let v = fp.verify(&cn, &pn);
            assert!(
                v.chapter_coverage < 0.05,
                "{pid}: quoted chapter coverage {}",
                v.chapter_coverage
            );
        }
    }
}
