//! Property tests: identity, small edits, unrelated texts, and fuzzing of
//! the normalizer and verifier with arbitrary strings.

use std::sync::OnceLock;

use copyhound_fingerprint::{FingerprintConfig, Fingerprinter, hamming_distance, simhash};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

fn fp() -> &'static Fingerprinter {
    static FP: OnceLock<Fingerprinter> = OnceLock::new();
    FP.get_or_init(|| Fingerprinter::new(FingerprintConfig::default()).expect("default config"))
}

/// Common Han chars, so random texts look like (nonsense) Chinese.
const HAN: &str = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切";

fn han_text(min: usize, max: usize) -> impl Strategy<Value = String> {
    let pool: Vec<char> = HAN.chars().collect();
    prop::collection::vec(prop::sample::select(pool), min..max)
        .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn identity_has_distance_zero(text in han_text(50, 600)) {
        let a = fp().fingerprint(&text);
        let b = fp().fingerprint(&text.clone());
        prop_assert_eq!(hamming_distance(a.simhash, b.simhash), 0);
        prop_assert_eq!(hamming_distance(a.shingle_simhash, b.shingle_simhash), 0);
        prop_assert_eq!(&a, &b);
    }

    #[test]
    fn few_edits_give_small_distance(text in han_text(1500, 2500), edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..200), 1..4)) {
        let mut chars: Vec<char> = text.chars().collect();
        let pool: Vec<char> = HAN.chars().collect();
        for (at, with) in &edits {
            let i = at.index(chars.len());
            chars[i] = pool[*with];
        }
        let edited: String = chars.into_iter().collect();
        let (a, b) = (fp().normalize(&text), fp().normalize(&edited));
        let d = hamming_distance(simhash::shingle_simhash(&a.chars, 3), simhash::shingle_simhash(&b.chars, 3));
        prop_assert!(d <= 12, "shingle distance {d}");
        let v = fp().verify(&a, &b);
        prop_assert!(v.chapter_coverage > 0.95, "coverage {}", v.chapter_coverage);
    }

    #[test]
    fn normalizer_and_verifier_never_panic(a in "\\PC{0,300}", b in "\\PC{0,300}", raw in any::<Vec<u8>>()) {
        let lossy = String::from_utf8_lossy(&raw).into_owned();
        for s in [&a, &b, &lossy] {
            let n = fp().normalize(s);
            prop_assert_eq!(n.chars.len(), n.offsets.len());
            prop_assert!(n.offsets.windows(2).all(|w| w[0] <= w[1]));
            prop_assert!(n.offsets.iter().all(|&o| o < n.original_chars));
            let f = fp().fingerprint_normalized(&n);
            prop_assert_eq!(f.normalized_chars as usize, n.len());
        }
        let (na, nb) = (fp().normalize(&a), fp().normalize(&b));
        let v = fp().verify(&na, &nb);
        prop_assert!((0.0..=1.0).contains(&v.chapter_coverage));
        prop_assert!((0.0..=1.0).contains(&v.page_coverage));
        for s in &v.spans {
            prop_assert!(s.chapter_start <= s.chapter_end && s.page_start <= s.page_end);
        }
    }
}

#[test]
fn unrelated_texts_average_half_the_bits() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (han_text(800, 1200), han_text(800, 1200));
    let mut total = 0u32;
    let n = 40;
    for _ in 0..n {
        let (a, b) = strategy.new_tree(&mut runner).expect("strategy").current();
        let (fa, fb) = (fp().fingerprint(&a), fp().fingerprint(&b));
        total += hamming_distance(fa.shingle_simhash, fb.shingle_simhash);
        let v = fp().verify(&fp().normalize(&a), &fp().normalize(&b));
        assert!(
            v.spans.is_empty(),
            "unrelated random texts produced spans: {:?}",
            v.spans
        );
    }
    let mean = f64::from(total) / f64::from(n);
    assert!((26.0..=38.0).contains(&mean), "mean distance {mean}");
}
