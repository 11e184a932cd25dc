//! Regenerates the crate's shipped tables from jieba's bundled data
//! (jieba-rs 0.11 `src/data/idf.txt` and `src/data/dict.txt`, MIT licensed,
//! originally from the Python jieba project).
//!
//! ```text
//! cargo run -p copyhound-fingerprint --example derive_tables -- \
//!     ~/.cargo/registry/src/*/jieba-rs-0.11.0/src/data
//! ```
//!
//! Writes `data/idf.txt` (words with IDF below 10, one decimal) and prints
//! the pinyin-initial reference distribution to paste into `src/dna.rs`.

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

    // Initial distribution: every character of every dictionary word,
    // weighted by the word's corpus frequency.
    let dict = std::fs::read_to_string(format!("{dir}/dict.txt"))?;
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
