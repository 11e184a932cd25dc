//! Compiles `data/dict.txt` into the segmenter's double-array trie, so a
//! process starts with the dictionary ready instead of building it (jieba's
//! load was 70% of a short run's start-up).
//!
//! Blob layout, all little-endian u32 unless noted:
//! `total: u64`, `classes`, `slots`, `supplementary`, then
//! `freq[classes]` (the distinct word frequencies, ascending; class ids start
//! at 1), `bmp_codes[BMP_LEN]` (u16, for U+3400..=U+9FFF),
//! `supplementary × (char, code)` sorted by char, and
//! `slots × (base, check, class)` (class 0: no word ends at the slot).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::io::Write as _;

const BMP_FIRST: u32 = 0x3400;
const BMP_LEN: usize = 0x9FFF - 0x3400 + 1;
const EMPTY: u32 = u32::MAX;

fn main() {
    println!("cargo:rerun-if-changed=data/dict.txt");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string("data/dict.txt").expect("data/dict.txt");
    let mut total: u64 = 0;
    let mut words: Vec<(Vec<char>, u32)> = Vec::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("# total ") {
            total = t.trim().parse().expect("total");
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let mut it = line.split(' ');
        let (Some(w), Some(f)) = (it.next(), it.next()) else {
            continue;
        };
        let f: u32 = f.parse().expect("frequency");
        assert!(f > 0, "zero frequency for {w}");
        words.push((w.chars().collect(), f));
    }
    assert!(total > 0, "dict.txt lacks its `# total` header");

    // Characters frequent in text (by the frequencies of the words holding
    // them) get small codes: the children text visits most pack together.
    let mut counts: HashMap<char, u64> = HashMap::new();
    for (w, f) in &words {
        for &c in w {
            *counts.entry(c).or_default() += u64::from(*f);
        }
    }
    let mut by_count: Vec<(char, u64)> = counts.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert!(by_count.len() < usize::from(u16::MAX));
    let code: HashMap<char, u32> = by_count
        .iter()
        .enumerate()
        .map(|(i, &(c, _))| (c, i as u32 + 1))
        .collect();

    // Word ids in file order, from 1; keys as code sequences, sorted.
    let mut keys: Vec<(Vec<u32>, u32)> = words
        .iter()
        .enumerate()
        .map(|(i, (w, _))| (w.iter().map(|c| code[c]).collect(), i as u32 + 1))
        .collect();
    keys.sort();
    for pair in keys.windows(2) {
        assert!(pair[0].0 != pair[1].0, "duplicate dictionary word");
    }

    let freqs: Vec<u64> = keys
        .iter()
        .map(|k| u64::from(words[k.1 as usize - 1].1))
        .collect();
    let mut slots = build_double_array(&keys, &freqs);

    // Words keep only their frequency class: 5,087 distinct frequencies, so
    // the scores fit in cache and a slot in eight bytes.
    let mut classes: Vec<u32> = words.iter().map(|w| w.1).collect();
    classes.sort_unstable();
    classes.dedup();
    for s in &mut slots {
        if s[2] != 0 {
            let freq = words[s[2] as usize - 1].1;
            s[2] = classes.partition_point(|&f| f < freq) as u32 + 1;
        }
    }

    let mut blob = Vec::new();
    blob.extend_from_slice(&total.to_le_bytes());
    let supplementary: BTreeMap<u32, u32> = code
        .iter()
        .filter(|&(&c, _)| !(BMP_FIRST..BMP_FIRST + BMP_LEN as u32).contains(&u32::from(c)))
        .map(|(&c, &k)| (u32::from(c), k))
        .collect();
    for n in [classes.len(), slots.len(), supplementary.len()] {
        blob.extend_from_slice(&(n as u32).to_le_bytes());
    }
    for f in &classes {
        blob.extend_from_slice(&f.to_le_bytes());
    }
    let mut bmp = vec![0u16; BMP_LEN];
    for (&c, &k) in &code {
        let c = u32::from(c);
        if (BMP_FIRST..BMP_FIRST + BMP_LEN as u32).contains(&c) {
            bmp[(c - BMP_FIRST) as usize] = k as u16;
        }
    }
    for k in bmp {
        blob.extend_from_slice(&k.to_le_bytes());
    }
    for (c, k) in supplementary {
        blob.extend_from_slice(&c.to_le_bytes());
        blob.extend_from_slice(&k.to_le_bytes());
    }
    for s in &slots {
        for v in s {
            blob.extend_from_slice(&v.to_le_bytes());
        }
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let mut f = std::fs::File::create(out.join("segdict.bin")).expect("create blob");
    f.write_all(&blob).expect("write blob");
}

/// Places the trie of `keys` (sorted) in one array of `[base, check, word]`:
/// the child of slot `s` by code `c` is slot `base[s] + c` when that slot's
/// `check` is `s`. Slot 0 is the root. Nodes are placed in order of the
/// total frequency of the words below them, so the ones text walks through
/// most often share a few hundred kilobytes at the front of the array.
fn build_double_array(keys: &[(Vec<u32>, u32)], freqs: &[u64]) -> Vec<[u32; 3]> {
    let mut weight = vec![0u64; keys.len() + 1];
    for (i, f) in freqs.iter().enumerate() {
        weight[i + 1] = weight[i] + f;
    }
    let mut slots: Vec<[u32; 3]> = vec![[0, EMPTY, 0]; 1 << 16];
    slots[0][1] = 0;
    // Free slots, so that placing a node skips the filled part of the array.
    let mut free: BTreeSet<usize> = (1..slots.len()).collect();
    // (slot, depth, range of keys sharing the slot's prefix)
    let mut queue = BinaryHeap::from([(
        weight[keys.len()],
        Reverse((0usize, 0usize, 0usize, keys.len())),
    )]);
    let mut children: Vec<(u32, usize, usize)> = Vec::new();
    while let Some((_, Reverse((slot, depth, lo, hi)))) = queue.pop() {
        children.clear();
        let mut i = lo;
        while i < hi {
            let key = &keys[i].0;
            if key.len() == depth {
                slots[slot][2] = keys[i].1;
                i += 1;
                continue;
            }
            let c = key[depth];
            let start = i;
            while i < hi && keys[i].0.len() > depth && keys[i].0[depth] == c {
                i += 1;
            }
            children.push((c, start, i));
        }
        let (Some(first), Some(last)) = (children.first(), children.last()) else {
            continue;
        };
        let (first, last) = (first.0 as usize, last.0 as usize);
        let fits = |slots: &[[u32; 3]], base: usize| {
            children
                .iter()
                .all(|&(c, _, _)| slots.get(base + c as usize).is_none_or(|s| s[1] == EMPTY))
        };
        let base = free
            .range(first + 1..)
            .map(|&p| p - first)
            .find(|&base| fits(&slots, base))
            .unwrap_or_else(|| slots.len().max(first + 1) - first);
        if base + last >= slots.len() {
            let old = slots.len();
            let new = (base + last + 1).max(old * 2);
            slots.resize(new, [0, EMPTY, 0]);
            free.extend(old..new);
        }
        slots[slot][0] = base as u32;
        for &(c, start, end) in &children {
            let t = base + c as usize;
            slots[t][1] = slot as u32;
            free.remove(&t);
            queue.push((
                weight[end] - weight[start],
                Reverse((t, depth + 1, start, end)),
            ));
        }
    }
    while slots.last().is_some_and(|s| s[1] == EMPTY) {
        slots.pop();
    }
    slots
}
