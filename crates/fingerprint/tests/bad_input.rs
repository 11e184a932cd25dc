//! Hostile input: empty, no Han, huge, one enormous line. A fingerprint or a
//! clear flag, never a panic.

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter, NormalizeConfig};

fn fp() -> Fingerprinter {
    Fingerprinter::new(FingerprintConfig::default()).expect("default config")
}

#[test]
fn empty_and_junk_only() {
    let fp = fp();
    for text in [
        "",
        "   \n\t",
        "，。！？……",
        "\u{200B}\u{FEFF}\u{200D}",
        "丶丿乀",
    ] {
        let f = fp.fingerprint(text);
        assert_eq!(f.normalized_chars, 0, "{text:?}");
        assert!(f.dna.is_empty() && f.passages.is_empty());
        assert_eq!(f.shingle_simhash, 0);
        let n = fp.normalize(text);
        let v = fp.verify(&n, &n);
        assert!(v.spans.is_empty() && v.chapter_coverage == 0.0);
    }
}

#[test]
fn latin_only_text_has_no_dna_but_hashes() {
    let f = fp().fingerprint("The quick brown fox jumps over the lazy dog, again and again.");
    assert!(f.dna.is_empty());
    assert_ne!(f.simhash, 0);
    assert_ne!(f.shingle_simhash, 0);
}

#[test]
fn one_megabyte_single_line() {
    let fp = fp();
    let line: String = "天下大势分久必合合久必分"
        .chars()
        .cycle()
        .take(350_000)
        .collect();
    assert!(line.len() > 1_000_000);
    let f = fp.fingerprint(&line);
    assert_eq!(f.normalized_chars, 350_000);
    assert!(!f.passages.is_empty());
    let n = fp.normalize(&line);
    let v = fp.verify(&n, &n);
    // Highly repetitive text: seeds exceed max_occurrences, so no span; the
    // point is that it returns.
    assert!(v.chapter_coverage <= 1.0);
}

#[test]
fn fifty_megabytes_are_truncated_not_fatal() {
    // A small limit keeps the debug-build test fast; the default limit is
    // 8 MiB and the path is the same.
    let cfg = FingerprintConfig {
        normalize: NormalizeConfig {
            max_input_bytes: 1 << 20,
            ..NormalizeConfig::default()
        },
        ..FingerprintConfig::default()
    };
    let fp = Fingerprinter::new(cfg).expect("config");
    let big: String = "滚滚长江东逝水，浪花淘尽英雄。\n".repeat(50 * 1024 * 1024 / 48);
    assert!(big.len() >= 50_000_000);
    let n = fp.normalize(&big);
    assert!(n.truncated);
    assert!(n.len() < 400_000);
    let f = fp.fingerprint_normalized(&n);
    assert_eq!(f.normalized_chars as usize, n.len());
}

#[test]
fn fifty_megabytes_default_limits() {
    let fp = fp();
    let big: String = "滚滚长江东逝水，浪花淘尽英雄。\n".repeat(50 * 1024 * 1024 / 48);
    let f = fp.fingerprint(&big);
    assert!(f.normalized_chars > 0);
}

#[test]
fn one_sentence_repeated_two_million_chars_stays_within_the_budgets() {
    let fp = fp();
    let budget = fp.config().budget.clone();
    let text = "天色已晚，林中起了大风。".repeat(200_000);
    let started = std::time::Instant::now();
    let f = fp.fingerprint(&text);
    let elapsed = started.elapsed();
    assert_eq!(f.normalized_chars, 2_000_000);
    assert!(f.passages.len() <= budget.max_passages as usize);
    assert!(
        f.passages
            .iter()
            .all(|passage| passage.dna.len() <= budget.max_passage_dna as usize)
    );
    assert!(f.dna.len() <= budget.max_dna_windows as usize);
    assert!(f.anchors.len() <= budget.max_anchors as usize);
    // Linear work: a passage no longer scans every DNA window of the text.
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
}
