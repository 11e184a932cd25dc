//! A hostile rendered page is bounded: memory its scripts allocate outside
//! V8's heap (ArrayBuffers) kills the browser past its limit, and a page that
//! never finishes costs its render timeout, not more.

use std::time::{Duration, Instant};

use copyhound_crawler::HttpFetcher;
use copyhound_crawler::pacer::HostPacer;
use copyhound_crawler::render::{Chromium, LaunchOptions, RenderLimits};

use super::chromium;
use super::common::test_config;

fn limits(timeout: Duration) -> RenderLimits {
    RenderLimits {
        timeout,
        max_requests: 10,
        interval: Duration::ZERO,
    }
}

/// Renders `html` as if fetched from a loopback page (its document is the
/// body given; nothing else is served).
async fn render(browser: &Chromium, html: &str, timeout: Duration) -> Result<String, String> {
    let fetcher = HttpFetcher::new(test_config()).unwrap();
    browser
        .render(
            "http://127.0.0.1:9/page.html",
            html,
            &fetcher,
            &HostPacer::new(),
            limits(timeout),
        )
        .await
        .map_err(|error| error.message().to_string())
}

#[tokio::test]
async fn array_buffers_past_the_memory_limit_kill_the_browser() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let options = LaunchOptions {
        memory_limit_bytes: 512 << 20,
    };
    let browser = Chromium::launch_with(&binary, options).await.unwrap();
    let pid = browser.pid();
    // 2 GiB at most, so that a browser nobody kills does not take the machine.
    let hog = "<html><body><script>let a = []; for (let i = 0; i < 32; i++) { \
               a.push(new ArrayBuffer(64 << 20)); new Uint8Array(a[i]).fill(1); }\
               </script></body></html>";
    let error = render(&browser, hog, Duration::from_secs(30))
        .await
        .expect_err("the browser is killed before the page finishes");
    assert!(error.contains("memory"), "{error}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::path::Path::new(&format!("/proc/{pid}"))
        .try_exists()
        .unwrap()
    {
        assert!(Instant::now() < deadline, "the browser {pid} still runs");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_page_that_never_yields_costs_its_render_timeout() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let browser = Chromium::launch(&binary).await.unwrap();
    let timeout = Duration::from_secs(2);
    let started = Instant::now();
    let spin = "<html><body><p>text</p><script>for (;;) {}</script></body></html>";
    let outcome = render(&browser, spin, timeout).await;
    let took = started.elapsed();
    assert!(
        took < timeout + Duration::from_secs(2),
        "{took:?}: {outcome:?}"
    );
    // The browser still renders the next page.
    let calm = "<html><body><p>calm</p></body></html>";
    let rendered = render(&browser, calm, Duration::from_secs(10)).await;
    assert!(
        rendered.as_deref().unwrap_or_default().contains("calm"),
        "{rendered:?}"
    );
}
