//! Snapshots of the JSON and CSV exports over the seeded sample, and the HTML
//! structure: what downstream tools and people rely on, pinned.

use copyhound_report::testsuite::{HOSTILE_TEXT, sample_input, synthetic_input};
use copyhound_report::{CSV_COLUMNS, ReportFormat, UTF8_BOM, build_report_data, render};

#[test]
fn json_export_snapshot() {
    let data = build_report_data(&sample_input());
    insta::assert_json_snapshot!("report_json", data);
    let bytes = render(&data, ReportFormat::Json).unwrap();
    let mut expected = serde_json::to_vec_pretty(&data).unwrap();
    expected.push(b'\n');
    assert!(
        bytes == expected,
        "render(json) is the pretty-printed ReportData"
    );
}

#[test]
fn csv_export_snapshot() {
    let data = build_report_data(&sample_input());
    let bytes = render(&data, ReportFormat::Csv).unwrap();
    let body = bytes
        .strip_prefix(UTF8_BOM)
        .expect("Excel reads the export as UTF-8 only with a byte-order mark");
    insta::assert_snapshot!("report_csv", String::from_utf8(body.to_vec()).unwrap());
}

#[test]
fn csv_rows_parse_back_with_every_column() {
    let data = build_report_data(&sample_input());
    let bytes = render(&data, ReportFormat::Csv).unwrap();
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(
        header,
        CSV_COLUMNS
            .iter()
            .map(|(name, _)| name.to_string())
            .collect::<Vec<_>>()
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 8);
    let site_name = header.iter().position(|name| name == "site_name").unwrap();
    assert!(
        rows.iter().any(|row| &row[site_name] == HOSTILE_TEXT),
        "quotes and commas survive quoting"
    );
}

#[test]
fn html_report_structure() {
    let data = build_report_data(&sample_input());
    let html = String::from_utf8(render(&data, ReportFormat::Html).unwrap()).unwrap();
    for needle in [
        "<svg",
        "<mark>",
        "@media print",
        "class=\"cards\"",
        "Evidence",
        "示例出版社",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    assert!(
        !html.contains(HOSTILE_TEXT),
        "hostile text must not appear raw"
    );
    assert!(
        !html.contains("<script"),
        "no script element, hostile or ours"
    );
    assert!(html.contains(
        "&lt;script&gt;alert(&#x27;x&#x27;)&lt;&#x2f;script&gt; &amp; &quot;quoted&quot;"
    ));
}

#[test]
fn large_reports_stay_bounded() {
    let data = build_report_data(&synthetic_input(2_000, 7));
    assert_eq!(data.summary.total_matches, 2_000);
    let html = String::from_utf8(render(&data, ReportFormat::Html).unwrap()).unwrap();
    assert_eq!(
        html.matches("<article class=\"evidence\"").count(),
        300,
        "detailed evidence is capped"
    );
    assert!(html.contains("more infringing matches are listed below"));
    let again = build_report_data(&synthetic_input(2_000, 7));
    assert_eq!(data, again, "seeded inputs are deterministic");
}

/// Evidence taken from text that was not the markup as served says how it
/// was read: a reader of the raw page would not find the excerpts in it.
#[test]
fn evidence_says_when_the_text_was_rendered_or_decoded_through_a_font() {
    let mut input = sample_input();
    let plain = build_report_data(&input);
    let html = String::from_utf8(render(&plain, ReportFormat::Html).unwrap()).unwrap();
    assert!(
        !html.contains("decoded through the site"),
        "plain pages say nothing"
    );
    for found in &mut input.matches {
        found.page_reading.rendered = true;
        found.page_reading.font_decoded_chars = 812;
    }
    let data = build_report_data(&input);
    let html = String::from_utf8(render(&data, ReportFormat::Html).unwrap()).unwrap();
    assert!(
        html.contains("812 characters decoded through the site&#x27;s web font"),
        "{html}"
    );
    assert!(html.contains("812 个字符经网站字体解码"));
    assert!(html.contains("read after the page&#x27;s scripts ran in a browser"));
    let json = String::from_utf8(render(&data, ReportFormat::Json).unwrap()).unwrap();
    assert!(
        json.contains("\"font_decoded_chars\": 812") || json.contains("\"font_decoded_chars\":812"),
        "{json}"
    );
}
