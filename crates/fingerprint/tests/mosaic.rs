//! Copies whose sentences were shuffled: no long run survives, many short
//! ones do, and together they count; a quotation of a few sentences does not.

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter};

const CHAPTER: &str = include_str!("../../cli/samples/registered-chapter.txt");

/// The chapter's sentences, each with its closing mark.
fn sentences() -> Vec<String> {
    let mut out = vec![String::new()];
    for c in CHAPTER.chars() {
        out.last_mut().expect("one").push(c);
        if "。！？；".contains(c) {
            out.push(String::new());
        }
    }
    out.retain(|s| !s.trim().is_empty());
    out
}

/// Every sentence, in an order where no two neighbours stay neighbours.
fn shuffled() -> String {
    let all = sentences();
    let (even, odd): (Vec<_>, Vec<_>) = all.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    even.into_iter()
        .rev()
        .chain(odd)
        .map(|(_, s)| s.as_str())
        .collect()
}

#[test]
fn a_shuffled_copy_is_a_mosaic_of_short_runs() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let chapter = fp.normalize(CHAPTER);
    let page = fp.normalize(&shuffled());
    let found = fp.verify(&chapter, &page);
    // The same page without the mosaic rule: only runs of 48 tokens count.
    let strict = Fingerprinter::new(FingerprintConfig {
        verify: copyhound_fingerprint::VerifyConfig {
            mosaic_min_total: u32::MAX,
            ..Default::default()
        },
        ..Default::default()
    })
    .expect("valid config");
    let long_runs_only = strict.verify(&chapter, &page);
    assert!(found.chapter_coverage > 0.7, "{}", found.chapter_coverage);
    assert!(
        long_runs_only.chapter_coverage < found.chapter_coverage - 0.3,
        "long runs alone {} vs {}",
        long_runs_only.chapter_coverage,
        found.chapter_coverage
    );
}

#[test]
fn a_few_quoted_sentences_are_no_mosaic() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let chapter = fp.normalize(CHAPTER);
    let all = sentences();
    // Three quoted sentences inside a review, at most 150 characters.
    let mut quoted = String::new();
    for s in all.iter().skip(2) {
        if quoted.chars().count() + s.chars().count() > 150 {
            break;
        }
        quoted.push_str(s);
    }
    let review = format!(
        "这本书我读了三遍，每次都有新的感受。{quoted}作者的文字朴素而有力，值得推荐给每一位读者。\
         书中还有一段话：{}读来令人深思。",
        all[all.len() / 2]
    );
    let found = fp.verify(&chapter, &fp.normalize(&review));
    // The quoted passage may be one run (the matcher's 300-character bar
    // judges it); the lone sentence never becomes a mosaic piece.
    assert!(found.spans.len() <= 1, "{:?}", found.spans);
    let copied = copyhound_fingerprint::covered_len(
        found.spans.iter().map(|s| (s.chapter_start, s.chapter_end)),
    );
    assert!(copied <= 150, "{copied}");
}
