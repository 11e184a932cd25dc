//! Writes the sample report (or a seeded synthetic one) in every text format,
//! for looking at: `cargo run -p copyhound-report --example render_sample -- OUT_DIR [MATCHES]`.

use std::path::PathBuf;

use copyhound_report::testsuite::{sample_input, synthetic_input};
use copyhound_report::{ReportFormat, build_report_data, render};

fn main() -> anyhow::Result<()> {
    let mut arguments = std::env::args().skip(1);
    let directory = PathBuf::from(
        arguments
            .next()
            .unwrap_or_else(|| "report-sample".to_string()),
    );
    let input = match arguments.next() {
        Some(count) => synthetic_input(count.parse()?, 42),
        None => sample_input(),
    };
    std::fs::create_dir_all(&directory)?;
    let data = build_report_data(&input);
    for (format, extension) in [
        (ReportFormat::Html, "html"),
        (ReportFormat::Csv, "csv"),
        (ReportFormat::Json, "json"),
    ] {
        let path = directory.join(format!("report.{extension}"));
        std::fs::write(&path, render(&data, format)?)?;
        println!("{}", path.display());
    }
    Ok(())
}
