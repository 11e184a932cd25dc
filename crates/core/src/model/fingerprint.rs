use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{ChapterId, PageId, WorkId};

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
            FingerprintOwner::Chapter { work_id, chapter_id } => format!("c:{work_id}/{chapter_id}"),
            FingerprintOwner::Page { page_id } => format!("p:{page_id}"),
        }
    }

    /// Parses a key made by [`FingerprintOwner::index_key`].
    pub fn from_index_key(key: &str) -> Option<Self> {
        if let Some(rest) = key.strip_prefix("c:") {
            let (work, chapter) = rest.split_once('/')?;
            return Some(FingerprintOwner::Chapter {
                work_id: work.parse().ok()?,
                chapter_id: chapter.parse().ok()?,
            });
        }
        let page = key.strip_prefix("p:")?;
        Some(FingerprintOwner::Page { page_id: page.parse().ok()? })
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
    /// Length of the normalized text, characters.
    pub normalized_chars: u32,
    /// When it was computed.
    pub created_at: Timestamp,
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
        assert_eq!(FingerprintOwner::from_index_key(&chapter.index_key()), Some(chapter));
        let page = FingerprintOwner::Page { page_id: PageId::for_url("http://a/") };
        assert_eq!(FingerprintOwner::from_index_key(&page.index_key()), Some(page));
        assert_eq!(FingerprintOwner::from_index_key("x:1"), None);
        assert_eq!(FingerprintOwner::from_index_key("c:nowork"), None);
    }
}
