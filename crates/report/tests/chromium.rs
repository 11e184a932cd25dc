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
