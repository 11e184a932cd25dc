//! Golden values: a fingerprint change must come with a
//! `FINGERPRINT_VERSION` bump and new values here.
//! Print current values with `GOLDEN_PRINT=1 cargo test --test golden -- --nocapture`.

use copyhound_fingerprint::{
    DocumentFingerprint, FINGERPRINT_VERSION, FingerprintConfig, Fingerprinter,
};

const TEXTS: &[&str] = &[
    "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。时有宦官曹节等弄权，窦武、陈蕃谋诛之，机事不密，反为所害，中涓自此愈横。",
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    "",
];

/// (simhash, shingle_simhash, first DNA code or 0, passages, normalized chars)
const EXPECTED: &[(u64, u64, u64, usize, u32)] = &[
    (0xf5d30fb24e942245, 0x5e4d60340ec69752, 0x6bb410d292, 1, 142),
    (0xc7cdd319ecf2e136, 0x648043823c5d063e, 0x0, 1, 92),
    (0, 0, 0, 0, 0),
];

/// Title of the fixed chapter `TEXTS[0]`, as a page's `<title>` carries it
/// ("chapter title_site name": two parts, two title anchors).
const TITLE: &str = "第一回 宴桃园豪杰三结义_某某小说网";

/// `title_anchors(TITLE)`, ascending.
const TITLE_ANCHORS: &[u64] = &[0xa011d406a5278b21, 0xf4b5c7a8b29bb778];

/// The anchors of `TEXTS[0]` titled `TITLE` (`fingerprint_titled`): the
/// text's and the title's, ascending.
const TITLED_ANCHORS: &[u64] = &[
    0x1472fb03a98189cc,
    0x25934b1b2c30f903,
    0x2e144ad379f1e762,
    0x58f87da6baa06a8d,
    0x6d2800af1181c51f,
    0x8df2f94e83f10fc3,
    0x9a5fe1fac5110de8,
    0xa011d406a5278b21,
    0xab0923d5f4b1bca1,
    0xb30e9d4bf1306e81,
    0xb61f031eb300af56,
    0xbce91294c3e18ef5,
    0xe2919be184302c01,
    0xe51524e4c3b00789,
    0xe5618acfdc50daf4,
    0xf4b5c7a8b29bb778,
    0xfc387bfe24d17d59,
];

#[test]
fn golden_values() {
    // 2: title anchors joined the stored fingerprint (text outputs unchanged).
    assert_eq!(FINGERPRINT_VERSION, 2);
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let print = std::env::var("GOLDEN_PRINT").is_ok();
    for (text, want) in TEXTS.iter().zip(EXPECTED) {
        let f = fp.fingerprint(text);
        assert_eq!(f.version, FINGERPRINT_VERSION);
        let got = (
            f.simhash,
            f.shingle_simhash,
            f.dna.first().copied().unwrap_or(0),
            f.passages.len(),
            f.normalized_chars,
        );
        if print {
            println!(
                "({:#018x}, {:#018x}, {:#x}, {}, {}),",
                got.0, got.1, got.2, got.3, got.4
            );
        } else {
            assert_eq!(
                got,
                *want,
                "text {:?}",
                &text.chars().take(10).collect::<String>()
            );
        }
    }
}

#[test]
fn golden_title_anchors() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let title = fp.title_anchors(TITLE);
    let normalized = fp.normalize(TEXTS[0]);
    let titled = fp.fingerprint_titled(&normalized, TITLE);
    if std::env::var("GOLDEN_PRINT").is_ok() {
        println!("TITLE_ANCHORS {title:#018x?}");
        println!("TITLED_ANCHORS {:#018x?}", titled.anchors);
        return;
    }
    assert_eq!(title, TITLE_ANCHORS);
    assert_eq!(titled.anchors, TITLED_ANCHORS);
    assert_eq!(titled.version, FINGERPRINT_VERSION);
    // The title adds its anchors and changes nothing else.
    let text = fp.fingerprint_normalized(&normalized);
    assert_eq!(fp.titled_anchors(&normalized, TITLE), titled.anchors);
    let mut joined: Vec<u64> = text.anchors.iter().chain(&title).copied().collect();
    joined.sort_unstable();
    assert_eq!(joined, titled.anchors);
    assert_eq!(
        DocumentFingerprint {
            anchors: text.anchors.clone(),
            ..titled.clone()
        },
        text
    );
    // Another chapter title on the same site: the old chapter title's anchor
    // is gone, the site name's stays, the text's are the same.
    let chapter_part = fp.title_anchors("第一回 宴桃园豪杰三结义");
    let site_part = fp.title_anchors("某某小说网");
    assert_eq!(chapter_part, [TITLE_ANCHORS[1]]);
    assert_eq!(site_part, [TITLE_ANCHORS[0]]);
    let retitled = fp.titled_anchors(&normalized, "第二回 张翼德怒鞭督邮_某某小说网");
    assert!(!retitled.contains(&chapter_part[0]));
    assert!(retitled.contains(&site_part[0]));
    assert!(text.anchors.iter().all(|anchor| retitled.contains(anchor)));
    assert_eq!(retitled.len(), TITLED_ANCHORS.len());
}

#[test]
fn dna_is_identical_under_homophones_and_traditional_script() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let base = TEXTS[0].repeat(3);
    // Same-initial homophone swaps (他->她, 是->事, 在->再, 的->地) and the
    // traditional-script rendering of the same text.
    let homophones = base
        .replace('他', "她")
        .replace('是', "事")
        .replace('在', "再")
        .replace('的', "地")
        .replace('天', "添");
    let traditional = base
        .replace('说', "說")
        .replace('势', "勢")
        .replace('国', "國")
        .replace('汉', "漢")
        .replace('争', "爭")
        .replace('为', "為")
        .replace('乱', "亂")
        .replace('时', "時");
    let a = fp.fingerprint(&base);
    assert!(!a.dna.is_empty());
    assert_eq!(a.dna, fp.fingerprint(&homophones).dna);
    assert_eq!(a.dna, fp.fingerprint(&traditional).dna);
    assert_eq!(
        a.shingle_simhash,
        fp.fingerprint(&traditional).shingle_simhash
    );
}

#[test]
fn fingerprint_serde_round_trip() {
    let fp = Fingerprinter::new(FingerprintConfig::default()).expect("default config");
    let f = fp.fingerprint(TEXTS[0]);
    let json = serde_json::to_string(&f).expect("serialize");
    assert_eq!(
        serde_json::from_str::<copyhound_fingerprint::DocumentFingerprint>(&json).expect("parse"),
        f
    );
    let v = fp.verify(&fp.normalize(TEXTS[0]), &fp.normalize(TEXTS[0]));
    let json = serde_json::to_string(&v).expect("serialize");
    assert_eq!(
        serde_json::from_str::<copyhound_fingerprint::Verification>(&json).expect("parse"),
        v
    );
}
