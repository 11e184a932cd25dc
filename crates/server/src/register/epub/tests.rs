use std::io::Write;

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
