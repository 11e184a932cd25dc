use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{ChapterId, PageId, WorkId};
use crate::ports::{EntryKind, IndexEntry};

/// What a fingerprint record describes: a registered chapter or a crawled page.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum FingerprintOwner {
    /// A registered chapter.
    Chapter {
        /// Its work.
        work_id: WorkId,
        /// The chapter.
        chapter_id: ChapterId,
    },
    /// A crawled page.
    Page {
        /// The page.
        page_id: PageId,
    },
}

impl FingerprintOwner {
    /// Returns the compact key the index stores as owner: `c:<work>/<chapter>` or `p:<page>`.
    pub fn index_key(&self) -> String {
        match self {
            FingerprintOwner::Chapter {
                work_id,
                chapter_id,
            } => format!("{}{work_id}/{chapter_id}", Self::CHAPTER_KEY_PREFIX),
            FingerprintOwner::Page { page_id } => format!("{}{page_id}", Self::PAGE_KEY_PREFIX),
        }
    }

    /// How the index key of every chapter starts.
    pub const CHAPTER_KEY_PREFIX: &str = "c:";
    /// How the index key of every page starts.
    pub const PAGE_KEY_PREFIX: &str = "p:";

    /// Parses a key made by [`FingerprintOwner::index_key`].
    pub fn from_index_key(key: &str) -> Option<Self> {
        if let Some(rest) = key.strip_prefix(Self::CHAPTER_KEY_PREFIX) {
            let (work, chapter) = rest.split_once('/')?;
            return Some(FingerprintOwner::Chapter {
                work_id: work.parse().ok()?,
                chapter_id: chapter.parse().ok()?,
            });
        }
        let page = key.strip_prefix(Self::PAGE_KEY_PREFIX)?;
        Some(FingerprintOwner::Page {
            page_id: page.parse().ok()?,
        })
    }
}

/// Fingerprints of one passage (a window of a few hundred normalized characters).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassageRecord {
    /// Position among the owner's passages.
    pub ordinal: u32,
    /// Start, character offset in the original text.
    pub start: u32,
    /// End (exclusive), character offset in the original text.
    pub end: u32,
    /// SimHash of the passage.
    pub simhash: u64,
    /// Pinyin-initial DNA codes of the passage.
    pub dna: Vec<u64>,
}

/// The stored fingerprints of one text under one fingerprint version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FingerprintRecord {
    /// Chapter or page.
    pub owner: FingerprintOwner,
    /// The fingerprint algorithm version that produced it.
    pub version: u32,
    /// SHA-256 of the fingerprinted text; unchanged text is not fingerprinted again.
    pub content_sha256: String,
    /// Document SimHash over weighted words.
    pub simhash: u64,
    /// Document SimHash over character shingles.
    pub shingle_simhash: u64,
    /// Document DNA codes.
    pub dna: Vec<u64>,
    /// Passage fingerprints.
    pub passages: Vec<PassageRecord>,
    /// Anchors: sampled syllable-run hashes, looked up exactly.
    #[serde(default)]
    pub anchors: Vec<u64>,
    /// Length of the normalized text, characters.
    pub normalized_chars: u32,
    /// When it was computed.
    pub created_at: Timestamp,
}

/// Returns the index key of a DNA code. DNA codes fill only their low 40 bits,
/// and the segment index buckets by bit segments, so raw codes would all share
/// one bucket per table; a bijective mix spreads them over 64 bits. DNA is only
/// ever looked up exactly (distance 0), which the mix preserves.
pub fn dna_index_key(code: u64) -> u64 {
    let mut x = code ^ (code >> 30);
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl FingerprintRecord {
    /// Returns the index entries of this record — the one mapping from stored
    /// fingerprints to the segment index, shared by indexing, rebuilds and back-fills:
    /// `Document` ordinal 0 is the word SimHash and ordinal 1 the shingle SimHash;
    /// `Passage` entries are one per distinct passage SimHash, at the ordinal of the
    /// first passage carrying it (repeated text must not multiply entries and hits);
    /// `Dna` entries are the distinct DNA codes of the document (as
    /// [`dna_index_key`]s) and `Anchor` entries its anchors, in ascending order.
    pub fn index_entries(&self) -> Vec<IndexEntry> {
        let owner = self.owner.index_key();
        let entry = |kind, ordinal, fingerprint| IndexEntry {
            owner: owner.clone(),
            kind,
            ordinal,
            fingerprint,
        };
        let mut entries = vec![
            entry(EntryKind::Document, 0, self.simhash),
            entry(EntryKind::Document, 1, self.shingle_simhash),
        ];
        let mut seen_passages = std::collections::HashSet::with_capacity(self.passages.len());
        for passage in &self.passages {
            if seen_passages.insert(passage.simhash) {
                entries.push(entry(EntryKind::Passage, passage.ordinal, passage.simhash));
            }
        }
        let mut codes = self.dna.clone();
        codes.sort_unstable();
        codes.dedup();
        for (ordinal, code) in codes.into_iter().enumerate() {
            entries.push(entry(
                EntryKind::Dna,
                u32::try_from(ordinal).unwrap_or(u32::MAX),
                dna_index_key(code),
            ));
        }
        for (ordinal, anchor) in self.anchors.iter().enumerate() {
            entries.push(entry(
                EntryKind::Anchor,
                u32::try_from(ordinal).unwrap_or(u32::MAX),
                *anchor,
            ));
        }
        entries
    }
}

super::persisted::persisted_v1!(FingerprintRecord => "fingerprint");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_keys_round_trip() {
        let chapter = FingerprintOwner::Chapter {
            work_id: "w417".parse().unwrap(),
            chapter_id: "c4821".parse().unwrap(),
        };
        assert_eq!(chapter.index_key(), "c:w417/c4821");
        assert_eq!(
            FingerprintOwner::from_index_key(&chapter.index_key()),
            Some(chapter)
        );
        let page = FingerprintOwner::Page {
            page_id: PageId::for_url("http://a/"),
        };
        assert_eq!(
            FingerprintOwner::from_index_key(&page.index_key()),
            Some(page)
        );
        assert_eq!(FingerprintOwner::from_index_key("x:1"), None);
        assert_eq!(FingerprintOwner::from_index_key("c:nowork"), None);
    }

    #[test]
    fn index_entries_cover_every_fingerprint_once() {
        let record = FingerprintRecord {
            owner: FingerprintOwner::Page {
                page_id: PageId::for_url("http://a/"),
            },
            version: 1,
            content_sha256: String::new(),
            simhash: 1,
            shingle_simhash: 2,
            dna: vec![9, 7, 9],
            passages: vec![
                PassageRecord {
                    ordinal: 0,
                    start: 0,
                    end: 5,
                    simhash: 3,
                    dna: vec![7],
                },
                PassageRecord {
                    ordinal: 1,
                    start: 5,
                    end: 10,
                    simhash: 3,
                    dna: vec![7],
                },
            ],
            anchors: vec![11],
            normalized_chars: 5,
            created_at: chrono::Utc::now(),
        };
        let entries = record.index_entries();
        let summary: Vec<(EntryKind, u32, u64)> = entries
            .iter()
            .map(|entry| (entry.kind, entry.ordinal, entry.fingerprint))
            .collect();
        assert_eq!(
            summary,
            [
                (EntryKind::Document, 0, 1),
                (EntryKind::Document, 1, 2),
                (EntryKind::Passage, 0, 3),
                (EntryKind::Dna, 0, dna_index_key(7)),
                (EntryKind::Dna, 1, dna_index_key(9)),
                (EntryKind::Anchor, 0, 11)
            ]
        );
        assert!(
            entries
                .iter()
                .all(|entry| entry.owner == record.owner.index_key())
        );
        // The DNA key is a bijection that fills the high bits.
        let keys: std::collections::BTreeSet<u64> = (0..10_000u64).map(dna_index_key).collect();
        assert_eq!(keys.len(), 10_000);
        assert!(keys.iter().filter(|key| **key >> 48 == 0).count() < 10);
    }
}
