//! The HTML report in a real browser: printed to PDF and screenshotted with
//! headless Chromium. Skipped where no `chromium` is installed, except in CI
//! (`CI=true`), where a missing browser fails the test: CI installs it
//! (`apt-get install -y chromium fonts-wqy-microhei`).

use std::path::{Path, PathBuf};
use std::process::Command;

use copyhound_report::testsuite::sample_input;
use copyhound_report::{
    HtmlOptions, ReportFormat, build_report_data, render, render_pdf, render_pdf_with_chromium,
};

/// Returns the browser to use, or `None` to skip (outside CI only).
fn chromium() -> Option<PathBuf> {
    let candidates = ["chromium", "chromium-browser"];
    for name in candidates {
        let found = Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|output| output.status.success());
        if found {
            return Some(PathBuf::from(name));
        }
    }
    let in_ci = std::env::var("CI").is_ok_and(|value| value == "true");
    assert!(
        !in_ci,
        "chromium is required in CI: apt-get install -y chromium fonts-wqy-microhei"
    );
    eprintln!("skipping: chromium is not installed");
    None
}

fn scratch(name: &str) -> PathBuf {
    let directory =
        std::env::temp_dir().join(format!("copyhound-report-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("temp dir is writable");
    directory
}

fn write_sample_html(directory: &Path) -> PathBuf {
    let html =
        render(&build_report_data(&sample_input()), ReportFormat::Html).expect("html renders");
    let path = directory.join("report.html");
    std::fs::write(&path, html).expect("temp dir is writable");
    path
}

#[test]
fn prints_the_report_to_pdf() {
    let Some(browser) = chromium() else { return };
    let directory = scratch("pdf");
    let html_path = write_sample_html(&directory);
    let pdf_path = directory.join("report.pdf");
    render_pdf_with_chromium(&html_path, &pdf_path, &browser).unwrap();
    let pdf = std::fs::read(&pdf_path).unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "a pdf was written");
    assert!(
        pdf.len() > 10_000,
        "the pdf has content: {} bytes",
        pdf.len()
    );

    let in_memory = render_pdf(
        &build_report_data(&sample_input()),
        &HtmlOptions::default(),
        &browser,
    )
    .unwrap();
    assert!(in_memory.starts_with(b"%PDF-"));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn screenshots_the_report() {
    let Some(browser) = chromium() else { return };
    let directory = scratch("screenshot");
    let html_path = write_sample_html(&directory);
    let png_path = directory.join("report.png");
    let profile = directory.join("profile");
    let status = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1200,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("file://{}", html_path.display()))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let png = std::fs::read(&png_path).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a png was written");
    // A blank page compresses to a few kilobytes; the report has charts and text.
    assert!(
        png.len() > 50_000,
        "the screenshot shows content: {} bytes",
        png.len()
    );
    std::fs::remove_dir_all(&directory).unwrap();
}

/// The pages of a PDF written by Chromium, each as its decompressed content
/// stream (Chromium writes page dictionaries uncompressed, one `/Contents`
/// stream each, Flate-encoded).
fn page_contents(pdf: &[u8]) -> Vec<Vec<u8>> {
    use std::io::Read;
    let mut objects = std::collections::HashMap::new();
    let mut rest = pdf;
    let mut offset = 0;
    while let Some(at) = find(rest, b" 0 obj") {
        let number_start = rest[..at]
            .iter()
            .rposition(|byte| !byte.is_ascii_digit())
            .map_or(0, |index| index + 1);
        let number: usize = std::str::from_utf8(&rest[number_start..at])
            .unwrap_or_default()
            .parse()
            .unwrap_or(usize::MAX);
        let body_start = at + 6;
        let body_end =
            find(&rest[body_start..], b"endobj").map_or(rest.len(), |end| body_start + end);
        objects.insert(number, offset + body_start..offset + body_end);
        offset += body_end;
        rest = &pdf[offset..];
    }
    let mut pages = Vec::new();
    for range in objects.values() {
        let body = &pdf[range.clone()];
        let dictionary =
            String::from_utf8_lossy(&body[..find(body, b"stream").unwrap_or(body.len())]);
        let is_page = dictionary.contains("/Type /Page") && !dictionary.contains("/Type /Pages");
        if !is_page {
            continue;
        }
        let contents: usize = dictionary
            .split("/Contents ")
            .nth(1)
            .and_then(|tail| tail.split_whitespace().next())
            .and_then(|number| number.parse().ok())
            .expect("a page has one content stream");
        let stream = &pdf[objects[&contents].clone()];
        let start = find(stream, b"stream").expect("a content stream") + 6;
        let start = start + usize::from(stream[start] == b'\r') + 1;
        let end = find(stream, b"endstream").expect("a terminated stream");
        let mut decoded = Vec::new();
        flate2::read::ZlibDecoder::new(&stream[start..end])
            .read_to_end(&mut decoded)
            .ok();
        pages.push(decoded);
    }
    pages
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Printed, no page is blank or holds a stray line (the closing note once
/// took a last page of its own), and each match starts a page of its own.
#[test]
fn the_pdf_has_no_blank_page_and_one_match_per_page() {
    let Some(browser) = chromium() else { return };
    for input in [
        sample_input(),
        copyhound_report::testsuite::synthetic_input(20, 42),
    ] {
        let data = build_report_data(&input);
        let html = String::from_utf8(render(&data, ReportFormat::Html).unwrap()).unwrap();
        let articles = html.matches("<article class=\"evidence\"").count();
        assert!(articles > 0);
        let pdf = render_pdf(&data, &HtmlOptions::default(), &browser).unwrap();
        let pages = page_contents(&pdf);
        // The summary, the charts, then one page per match at least.
        assert!(
            pages.len() > articles,
            "{} pages for {articles} matches",
            pages.len()
        );
        for (number, content) in pages.iter().enumerate() {
            let shown = content
                .windows(2)
                .filter(|pair| pair == b"TJ" || pair == b"Tj")
                .count();
            // A page of the report draws dozens of text runs and several
            // kilobytes of drawing; the note alone on a page drew 2 runs.
            assert!(
                shown >= 10 && content.len() >= 4_000,
                "page {} is nearly blank: {shown} text runs, {} bytes",
                number + 1,
                content.len()
            );
        }
    }
}
