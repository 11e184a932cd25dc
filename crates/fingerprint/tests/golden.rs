//! Golden values: a fingerprint change must come with a
//! `FINGERPRINT_VERSION` bump and new values here.
//! Print current values with `GOLDEN_PRINT=1 cargo test --test golden -- --nocapture`.

use copyhound_fingerprint::{FINGERPRINT_VERSION, FingerprintConfig, Fingerprinter};

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

#[test]
fn golden_values() {
    assert_eq!(FINGERPRINT_VERSION, 1);
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
