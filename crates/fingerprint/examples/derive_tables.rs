//! Regenerates the crate's shipped tables from jieba's bundled data
//! (jieba-rs 0.11 `src/data/idf.txt` and `src/data/dict.txt`, MIT licensed,
//! originally from the Python jieba project).
//!
//! ```text
//! cargo run -p copyhound-fingerprint --example derive_tables -- \
//!     ~/.cargo/registry/src/*/jieba-rs-0.11.0/src/data
//! ```
//!
//! Writes `data/idf.txt` (words with IDF below 10, one decimal) and
//! `data/dict.txt` (the segmenter's dictionary: the words made only of CJK
//! ideographs, with their frequencies, after a header with the frequency
//! total of the whole dictionary), and prints the pinyin-initial reference
//! distribution to paste into `src/dna.rs`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use pinyin::ToPinyin;

fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: derive_tables JIEBA_DATA_DIR"))?;
    let idf = std::fs::read_to_string(format!("{dir}/idf.txt"))?;
    let mut kept: BTreeMap<String, f64> = BTreeMap::new();
    for line in idf.lines() {
        let mut it = line.split_whitespace();
        if let (Some(w), Some(v)) = (it.next(), it.next()) {
            let v: f64 = v.parse()?;
            if v < 10.0 {
                kept.insert(w.to_owned(), v);
            }
        }
    }
    let mut out = String::from(
        "# word idf; derived from jieba idf.txt (entries with idf < 10), see examples/derive_tables.rs\n",
    );
    for (w, v) in &kept {
        writeln!(out, "{w} {v:.1}")?;
    }
    let manifest = env!("CARGO_MANIFEST_DIR");
    std::fs::write(format!("{manifest}/data/idf.txt"), out)?;
    println!("idf entries kept: {}", kept.len());

    let dict = std::fs::read_to_string(format!("{dir}/dict.txt"))?;
    write_segmenter_dict(&dict, &format!("{manifest}/data/dict.txt"))?;

    // Initial distribution: every character of every dictionary word,
    // weighted by the word's corpus frequency.
    let mut counts = [0f64; 26];
    let mut total = 0f64;
    for line in dict.lines() {
        let mut it = line.split_whitespace();
        let (Some(w), Some(f)) = (it.next(), it.next()) else {
            continue;
        };
        let f: f64 = f.parse()?;
        for c in w.chars() {
            if let Some(p) = c.to_pinyin() {
                let l = p.plain().as_bytes()[0];
                counts[usize::from(l - b'a')] += f;
                total += f;
            }
        }
    }
    print!("pub(crate) const REFERENCE_INITIALS: [f64; 20] = [");
    for l in "bcdfghjklmnpqrstwxyz".bytes() {
        print!("{:.5}, ", counts[usize::from(l - b'a')] / total);
    }
    println!("];");
    Ok(())
}

/// Keeps the words the segmenter can match: it only ever sees runs of CJK
/// ideographs (jieba's `is_cjk`). The total counts every word, as jieba's
/// route probabilities do.
fn write_segmenter_dict(dict: &str, path: &str) -> anyhow::Result<()> {
    let mut total: u64 = 0;
    let mut out = String::new();
    let mut kept = 0;
    for line in dict.lines() {
        let mut it = line.split_whitespace();
        let (Some(w), Some(f)) = (it.next(), it.next()) else {
            continue;
        };
        let f: u64 = f.parse()?;
        total += f;
        if w.chars().all(is_cjk) {
            writeln!(out, "{w} {f}")?;
            kept += 1;
        }
    }
    let header = format!(
        "# word frequency; jieba dict.txt words of CJK ideographs only, see examples/derive_tables.rs\n# total {total}\n"
    );
    std::fs::write(path, header + &out)?;
    println!("dictionary words kept: {kept}, total frequency {total}");
    Ok(())
}

/// jieba-rs 0.11's `is_cjk`: the ideograph ranges its segmenter joins.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2A6DF}'
        | '\u{2A700}'..='\u{2B73F}'
        | '\u{2B740}'..='\u{2B81F}'
        | '\u{2B820}'..='\u{2CEAF}'
        | '\u{2CEB0}'..='\u{2EBEF}'
        | '\u{2F800}'..='\u{2FA1F}'
    )
}
