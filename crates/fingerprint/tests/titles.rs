//! Title anchors: a page that carries a chapter's title meets the chapter in
//! the index, whatever its site appends or its script.

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter};

#[test]
fn a_page_title_meets_its_chapter_title() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let chapter = fp.title_anchors("卷一·成仙");
    assert_eq!(chapter.len(), 1);
    for page in [
        "卷一·成仙_东森新闻云",
        "卷一·成仙 - 某某小说网",
        "某某读书｜卷一·成仙",
        "捲一·成仙_東森新聞雲",
    ] {
        let anchors = fp.title_anchors(page);
        assert!(
            anchors.iter().any(|a| chapter.contains(a)),
            "{page}: {anchors:?} vs {chapter:?}"
        );
    }
    assert!(
        fp.title_anchors("卷二·狐谐_东森新闻云")
            .iter()
            .all(|a| !chapter.contains(a))
    );
    // Nothing to read: no anchor.
    assert!(fp.title_anchors("").is_empty());
    assert!(fp.title_anchors("_|—").is_empty());
    // Title anchors are apart from the text's own anchors of the same syllables.
    let text = fp.normalize("卷一成仙卷一成仙卷一成仙卷一成仙卷一成仙卷一成仙");
    assert!(fp.anchors(&text).iter().all(|a| !chapter.contains(a)));
}
