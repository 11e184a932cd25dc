#![allow(clippy::unwrap_used)]
use std::io::Write;

#[cfg(test)]
use copyhound_core::ErrorKind;
use zip::write::SimpleFileOptions;

use super::*;

/// Returns an EPUB holding `chapters` as (title, paragraphs) XHTML documents, plus a cover.
pub(crate) fn build_epub(title: &str, chapters: &[(&str, &[&str])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    writer.start_file("mimetype", stored).unwrap();
    writer.write_all(b"application/epub+zip").unwrap();
    writer
        .start_file("META-INF/container.xml", deflated)
        .unwrap();
    writer
        .write_all(
            br#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#,
        )
        .unwrap();
    let mut manifest =
        String::from(r#"<item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/>"#);
    let mut spine = String::from(r#"<itemref idref="cover"/>"#);
    for (position, _) in chapters.iter().enumerate() {
        manifest.push_str(&format!(
            r#"<item id="ch{position}" href="text/ch%20{position}.xhtml" media-type="application/xhtml+xml"/>"#
        ));
        spine.push_str(&format!(r#"<itemref idref="ch{position}"/>"#));
    }
    let opf = format!(
        r#"<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title><dc:creator>鲁迅 &amp; co</dc:creator></metadata>
<manifest>{manifest}<item id="css" href="style.css" media-type="text/css"/></manifest><spine>{spine}</spine></package>"#
    );
    writer.start_file("OEBPS/content.opf", deflated).unwrap();
    writer.write_all(opf.as_bytes()).unwrap();
    writer.start_file("OEBPS/cover.xhtml", deflated).unwrap();
    writer
        .write_all(br#"<html><body><img src="cover.jpg"/></body></html>"#)
        .unwrap();
    for (position, (chapter_title, paragraphs)) in chapters.iter().enumerate() {
        let body: String = paragraphs
            .iter()
            .map(|paragraph| format!("<p>{paragraph}</p>"))
            .collect();
        let xhtml = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title>
<style>p {{ color: red }}</style></head><body><h2>{chapter_title}</h2>{body}<script>var a = 1;</script></body></html>"#
        );
        writer
            .start_file(format!("OEBPS/text/ch {position}.xhtml"), deflated)
            .unwrap();
        writer.write_all(xhtml.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

#[test]
fn spine_order_titles_and_text() {
    let bytes = build_epub(
        "呐喊",
        &[
            (
                "狂人日记",
                &["今天晚上，很好的月光。", "我不见他，已是三十多年"],
            ),
            ("孔乙己", &["鲁镇的酒店的格局"]),
        ],
    );
    let book = parse_epub(&bytes).unwrap();
    assert_eq!(book.title.as_deref(), Some("呐喊"));
    assert_eq!(book.author.as_deref(), Some("鲁迅 & co"));
    assert_eq!(book.chapters.len(), 2);
    assert_eq!(book.chapters[0].title, "狂人日记");
    assert_eq!(
        book.chapters[0].text,
        "今天晚上，很好的月光。\n我不见他，已是三十多年"
    );
    assert_eq!(book.chapters[1].text, "鲁镇的酒店的格局");
    assert_eq!(
        book.warnings,
        ["1 spine items without text (cover, images) were skipped"]
    );
}

#[test]
fn corrupt_archives_are_invalid_input() {
    let error = parse_epub(b"not a zip at all").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error.message().contains("not a valid zip"), "{error}");
    let mut bytes = build_epub("t", &[("a", &["b"])]);
    let cut = bytes.len() / 2;
    bytes.truncate(cut);
    assert_eq!(
        parse_epub(&bytes).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    writer
        .start_file("hello.txt", SimpleFileOptions::default())
        .unwrap();
    writer.write_all(b"hi").unwrap();
    let plain_zip = writer.finish().unwrap().into_inner();
    let error = parse_epub(&plain_zip).unwrap_err();
    assert!(error.message().contains("container.xml"), "{error}");
}

#[test]
fn hrefs_resolve_against_the_package_folder() {
    assert_eq!(
        resolve_href("OEBPS/", "text/ch%201.xhtml#top"),
        "OEBPS/text/ch 1.xhtml"
    );
    assert_eq!(resolve_href("OEBPS/text/", "../ch.xhtml"), "OEBPS/ch.xhtml");
    assert_eq!(resolve_href("", "a.xhtml"), "a.xhtml");
    assert_eq!(percent_decode("%E4%B8%AD%zz"), "中%zz");
}

/// Returns an EPUB whose one chapter is `<b>a</b>` repeated `repeats` times
/// (rounded down to ten thousands): ten million make the reported 117 KB bomb.
pub(crate) fn dom_bomb_epub(repeats: usize) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    writer
        .start_file("META-INF/container.xml", deflated)
        .unwrap();
    writer
        .write_all(
            br#"<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>"#,
        )
        .unwrap();
    writer.start_file("content.opf", deflated).unwrap();
    writer
        .write_all(
            br#"<package><metadata><dc:title>bomb</dc:title></metadata><manifest>
<item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>"#,
        )
        .unwrap();
    writer.start_file("c.xhtml", deflated).unwrap();
    writer.write_all(b"<html><body><p>").unwrap();
    let chunk = "<b>a</b>".repeat(10_000);
    for _ in 0..repeats / 10_000 {
        writer.write_all(chunk.as_bytes()).unwrap();
    }
    writer.write_all(b"</p></body></html>").unwrap();
    writer.finish().unwrap().into_inner()
}

/// Returns an EPUB whose one spine document is `xhtml`.
pub(crate) fn epub_with_document(xhtml: &[u8]) -> Vec<u8> {
    epub_with(
        r#"<package><metadata><dc:title>t</dc:title></metadata><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>"#,
        &[("c.xhtml", xhtml)],
    )
}

/// Returns an EPUB with the given container, package and extra entries.
fn epub_with(opf: &str, entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    writer
        .start_file("META-INF/container.xml", deflated)
        .unwrap();
    writer
        .write_all(
            br#"<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>"#,
        )
        .unwrap();
    writer.start_file("content.opf", deflated).unwrap();
    writer.write_all(opf.as_bytes()).unwrap();
    for (name, bytes) in entries {
        writer.start_file(*name, deflated).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

#[cfg(test)]
fn assert_too_large(bytes: &[u8], fragment: &str) {
    let error = parse_epub(bytes).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TooLarge, "{error}");
    assert!(error.message().contains(fragment), "{error}");
}

#[test]
fn dom_and_zip_bombs_are_refused_by_their_budgets() {
    // 80 MB of markup in one entry: refused on the entry's size, never inflated.
    assert_too_large(
        &dom_bomb_epub(10_000_000),
        "decompresses to more than 16777216 bytes (limit per entry)",
    );
    // 12 MB passes the byte budgets; its 1.5 million elements do not.
    assert_too_large(
        &dom_bomb_epub(1_500_000),
        "has more than 250000 elements (limit per document)",
    );
}

#[test]
fn package_budgets_name_their_limit() {
    let spine: String = (0..=MAX_CHAPTERS)
        .map(|_| r#"<itemref idref="c"/>"#)
        .collect();
    let opf = format!(
        r#"<package><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine>{spine}</spine></package>"#
    );
    assert_too_large(
        &epub_with(&opf, &[("c.xhtml", b"<p>a</p>")]),
        "spine has more than 50000 items",
    );
    let deep = format!("<package>{}</package>", "<x>".repeat(MAX_XML_DEPTH + 1));
    assert_too_large(&epub_with(&deep, &[]), "deeper than 512");
    let wide = format!("<package>{}</package>", "<x/>".repeat(MAX_XML_ELEMENTS));
    assert_too_large(&epub_with(&wide, &[]), "more than 250000 elements");
    let many: Vec<(String, &[u8])> = (0..MAX_ZIP_ENTRIES)
        .map(|position| (format!("f{position}"), &b""[..]))
        .collect();
    let many: Vec<(&str, &[u8])> = many
        .iter()
        .map(|(name, bytes)| (name.as_str(), *bytes))
        .collect();
    assert_too_large(&epub_with("<package/>", &many), "more than 20000 entries");
}

#[test]
fn a_repeated_spine_item_spends_the_book_budgets() {
    // One 3 MB chapter listed 100 times: 300 MB decompressed, 300M characters.
    let chapter = format!("<p>{}</p>", "a".repeat(3 << 20));
    let spine = r#"<itemref idref="c"/>"#.repeat(100);
    let opf = format!(
        r#"<package><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine>{spine}</spine></package>"#
    );
    let error = parse_epub(&epub_with(&opf, &[("c.xhtml", chapter.as_bytes())])).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TooLarge, "{error}");
    assert!(
        error.message().contains("limit per work") || error.message().contains("limit per book"),
        "{error}"
    );
}
