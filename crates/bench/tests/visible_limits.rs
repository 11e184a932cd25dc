//! The reference visible-text extractor on hostile pages: one linear pass in
//! bounded memory, and never more text than the input.
#![allow(clippy::unwrap_used)]

use std::sync::{Mutex, MutexGuard};

use copyhound_bench::visible::visible_text;
use copyhound_crawler::extract::MAX_HTML_BYTES;
use peak_alloc::PeakAlloc;
use proptest::prelude::*;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn ten_million_tiny_elements_stay_within_the_byte_budget() {
    let _serial = serial();
    let html = format!(
        "<html><body>{}</body></html>",
        "<p>a</p>".repeat(10_000_000)
    );
    ALLOCATOR.reset_peak_usage();
    let baseline = ALLOCATOR.current_usage();
    let text = visible_text(&html);
    let peak = ALLOCATOR.peak_usage().saturating_sub(baseline);
    assert!(text.starts_with("a\na\na"));
    assert!(text.len() <= MAX_HTML_BYTES, "only the budget is read");
    assert!(
        peak <= MAX_HTML_BYTES * 2,
        "peak {peak} bytes for {} bytes of html",
        html.len()
    );
}

#[test]
fn an_unterminated_quote_does_not_swallow_the_page() {
    let html = "<p title=\"unterminated>正文</p><p>后文</p>";
    let text = visible_text(html);
    assert!(text.chars().count() <= html.chars().count());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic_and_never_grow(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _serial = serial();
        let html = String::from_utf8_lossy(&bytes);
        prop_assert!(visible_text(&html).chars().count() <= html.chars().count());
    }
}
