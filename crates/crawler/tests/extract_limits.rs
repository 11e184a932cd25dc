//! HTML extraction on hostile pages: bounded memory and time, measured with a
//! counting global allocator (this binary only), and a fuzz over arbitrary
//! input (never a panic, output bounded by the input).
//!
//! A page of ten million tiny elements used to become a tree of twenty million
//! nodes (gigabytes); a page nested a hundred thousand levels deep made the
//! parser quadratic. Both now go through the streaming tag stripper.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use copyhound_core::model::ExtractionHints;
use copyhound_crawler::extract::{
    DEFAULT_MAX_LINKS, MAX_ELEMENTS, MAX_HTML_BYTES, extract, extract_with_limit,
};
use peak_alloc::PeakAlloc;
use proptest::prelude::*;

/// Counts live heap bytes and their high-water mark (the workspace forbids
/// `unsafe`, so the allocator comes from a crate).
#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The tests of this binary run one at a time: the counters are global.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Returns the peak heap bytes `work` allocates on top of what was live, and its time.
fn measure<T>(work: impl FnOnce() -> T) -> (T, usize, Duration) {
    ALLOCATOR.reset_peak_usage();
    let baseline = ALLOCATOR.current_usage();
    let started = Instant::now();
    let result = work();
    let elapsed = started.elapsed();
    let peak = ALLOCATOR.peak_usage().saturating_sub(baseline);
    (result, peak, elapsed)
}

#[test]
fn ten_million_tiny_elements_are_stripped_in_bounded_memory() {
    let _serial = serial();
    let html = format!(
        "<html><body>{}</body></html>",
        "<b>a</b>".repeat(10_000_000)
    );
    let (extracted, peak, elapsed) = measure(|| extract(&html, &ExtractionHints::default()));
    eprintln!(
        "10M elements, {} MB of html: peak {} MB in {elapsed:?}",
        html.len() >> 20,
        peak >> 20
    );
    let warning = extracted.warning.as_deref().unwrap_or_default();
    assert!(
        warning.contains("bytes") && warning.contains("elements"),
        "{warning}"
    );
    assert!(extracted.text.starts_with("a\na\na"));
    assert!(extracted.links.is_empty());
    // Only the first MAX_HTML_BYTES are read, and the stripper keeps no more
    // than the text it returns (a fraction of them).
    assert!(
        peak <= MAX_HTML_BYTES / 2,
        "peak {peak} bytes for {} bytes of html",
        html.len()
    );
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
}

#[test]
fn a_hundred_thousand_levels_of_nesting_are_stripped() {
    let _serial = serial();
    let html = format!(
        "<html><body>{}正文{}</body></html>",
        "<div><span>".repeat(100_000),
        "</span></div>".repeat(100_000)
    );
    let (extracted, peak, elapsed) = measure(|| extract(&html, &ExtractionHints::default()));
    eprintln!(
        "100k levels, {} KB of html: peak {} KB in {elapsed:?}",
        html.len() >> 10,
        peak >> 10
    );
    assert_eq!(extracted.text, "正文");
    assert!(extracted.warning.unwrap().contains("nested"));
    assert!(peak <= 2 * html.len(), "peak {peak} bytes");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}

#[test]
fn the_largest_parsed_page_stays_within_the_element_budget() {
    let _serial = serial();
    // Just under the element budget: the page is parsed into a tree.
    let elements = MAX_ELEMENTS - 100;
    let html = format!(
        "<html><head><title>t</title></head><body><div id=\"content\">{}</div></body></html>",
        "<p>天色已晚</p>".repeat(elements)
    );
    let (extracted, peak, elapsed) = measure(|| extract(&html, &ExtractionHints::default()));
    eprintln!(
        "{elements} elements, {} MB of html: peak {} MB ({:.1} x) in {elapsed:?}",
        html.len() >> 20,
        peak >> 20,
        peak as f64 / html.len() as f64
    );
    assert!(extracted.warning.is_none());
    assert_eq!(extracted.text.lines().count(), elements);
    // The tree costs about 500 bytes per element (with its text node),
    // whatever the page's size: the element budget bounds it.
    assert!(
        peak <= 640 * MAX_ELEMENTS,
        "peak {peak} bytes for {} bytes",
        html.len()
    );
}

/// HTML-like input: tags, broken tags, quotes, entities, comments and text.
fn html_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<div>".to_owned()),
        Just("</div>".to_owned()),
        Just("<p>".to_owned()),
        Just("<br/>".to_owned()),
        Just("<a href='next.html'>".to_owned()),
        Just("</a>".to_owned()),
        Just("<title>".to_owned()),
        Just("<script>".to_owned()),
        Just("</SCRIPT>".to_owned()),
        Just("<style".to_owned()),
        // CSS: hidden decoys, and selectors costly or malformed to match.
        Just("<style>.a{display:none} :is(:is(span div) div) p, :not(:is(".to_owned()),
        Just("{content:'站'} .a::before".to_owned()),
        Just("</style><i class=a>".to_owned()),
        Just("<table><td>".to_owned()),
        Just("<!--".to_owned()),
        Just("-->".to_owned()),
        Just("<a \"".to_owned()),
        Just("'".to_owned()),
        Just("<".to_owned()),
        Just(">".to_owned()),
        Just("&amp;&#x6bb5;&#0;&bogus;".to_owned()),
        Just("下一页".to_owned()),
        Just("第1/3页".to_owned()),
        "[a-z天色已晚 \t\n]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..64).prop_map(|pieces| pieces.concat())
}

fn check_bounded(html: &str) {
    let _serial = serial();
    let chars = html.chars().count();
    let extracted = extract_with_limit(html, &ExtractionHints::default(), 8);
    assert!(extracted.text.chars().count() <= 2 * chars + 1);
    assert!(extracted.links.len() <= 8);
    assert!(extracted.title.chars().count() <= chars);
    assert!(extracted.heading.chars().count() <= chars);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn extraction_of_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check_bounded(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn extraction_of_html_like_text_is_bounded(html in html_like()) {
        check_bounded(&html);
    }
}

#[test]
fn the_default_link_cap_holds_on_a_link_farm() {
    let _serial = serial();
    let html = "<a href='/x'>x</a>".repeat(10_000)
        + &(0..5_000)
            .map(|index| format!("<a href='/{index}'>{index}</a>"))
            .collect::<String>();
    let extracted = extract(&html, &ExtractionHints::default());
    assert!(extracted.links.len() <= DEFAULT_MAX_LINKS);
}
