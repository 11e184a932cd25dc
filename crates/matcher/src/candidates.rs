//! Candidate chapters of a page, by votes over index hits.
//!
//! Candidates come from four kinds of index hits on the page's fingerprints —
//! whole-document SimHash (verbatim or lightly edited copies), passage SimHash
//! (a chapter inside a page full of other text), pinyin DNA codes (homophones
//! and traditional script leave DNA untouched) and anchors (short syllable runs
//! that survive rewriting). Codes and anchors can be shared by unrelated texts,
//! so each one's vote is divided by the number of chapters it hits. Lookups are
//! bounded ([`crate::lookup`]): each distinct fingerprint is asked once, too
//! common ones vote for nothing, and hits are folded into votes chunk by chunk.

use std::collections::{BTreeSet, HashMap};

use copyhound_core::Result;
use copyhound_core::ids::{ChapterId, PageId, WorkId};
use copyhound_core::model::{FingerprintOwner, FingerprintRecord, dna_index_key};
use copyhound_core::ports::{EntryKind, IndexHit};

use crate::context::MatcherPorts;
use crate::lookup::{HitBudget, distinct, for_each_hits};

const DOCUMENT_VOTE: f32 = 8.0;
const PASSAGE_VOTE: f32 = 2.0;
/// DNA codes and anchors hitting more chapters than this carry no information.
const SHARED_CODE_MAX_CHAPTERS: usize = 64;

/// Candidate chapters in vote order, and near-duplicate pages.
pub(crate) struct Candidates {
    pub(crate) chapters: Vec<(WorkId, ChapterId)>,
    pub(crate) near_duplicates: Vec<PageId>,
}

/// Returns the best `max_candidates` chapters for a page's fingerprints.
///
/// Votes are kept by index key and only the winners parsed: with many mirrors
/// of a site, most hits are other pages, and parsing each was most of the cost.
pub(crate) async fn candidates(
    ports: &MatcherPorts,
    record: &FingerprintRecord,
) -> Result<Candidates> {
    let max_distance = ports.index.max_distance();
    let index = ports.index.as_ref();
    let mut budget = HitBudget::per_task();
    let mut votes: HashMap<String, f32> = HashMap::new();
    let mut near_duplicates = BTreeSet::new();
    let own_key = record.owner.index_key();
    let documents = distinct([record.simhash, record.shingle_simhash]);
    for_each_hits(
        index,
        EntryKind::Document,
        &documents,
        max_distance,
        "",
        &mut budget,
        |hits| {
            for hit in hits {
                let key = &hit.entry.owner;
                if is_chapter_key(key) {
                    add_vote(&mut votes, key, DOCUMENT_VOTE);
                } else if *key != own_key
                    && let Some(FingerprintOwner::Page { page_id }) =
                        FingerprintOwner::from_index_key(key)
                {
                    near_duplicates.insert(page_id);
                }
            }
        },
    )
    .await?;
    let passages = distinct(record.passages.iter().map(|passage| passage.simhash));
    for_each_hits(
        index,
        EntryKind::Passage,
        &passages,
        max_distance,
        CHAPTER_KEY_PREFIX,
        &mut budget,
        |hits| {
            for chapter in chapters_hit(hits) {
                add_vote(&mut votes, chapter, PASSAGE_VOTE);
            }
        },
    )
    .await?;
    let codes = distinct(record.dna.iter().map(|code| dna_index_key(*code)));
    let anchors = distinct(record.anchors.iter().copied());
    for (kind, fingerprints) in [(EntryKind::Dna, &codes), (EntryKind::Anchor, &anchors)] {
        for_each_hits(
            index,
            kind,
            fingerprints,
            0,
            CHAPTER_KEY_PREFIX,
            &mut budget,
            |hits| shared_code_vote(&mut votes, hits),
        )
        .await?;
    }
    let mut ranked: Vec<((WorkId, ChapterId), f32)> = votes
        .into_iter()
        .filter_map(|(key, vote)| match FingerprintOwner::from_index_key(&key) {
            Some(FingerprintOwner::Chapter {
                work_id,
                chapter_id,
            }) => Some(((work_id, chapter_id), vote)),
            _ => None,
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(ports.config.max_candidates as usize);
    Ok(Candidates {
        chapters: ranked.into_iter().map(|(chapter, _)| chapter).collect(),
        near_duplicates: near_duplicates.into_iter().collect(),
    })
}

fn add_vote(votes: &mut HashMap<String, f32>, key: &str, vote: f32) {
    match votes.get_mut(key) {
        Some(total) => *total += vote,
        None => {
            votes.insert(key.to_owned(), vote);
        }
    }
}

const CHAPTER_KEY_PREFIX: &str = FingerprintOwner::CHAPTER_KEY_PREFIX;

/// Whether an index key is a chapter's.
fn is_chapter_key(key: &str) -> bool {
    key.starts_with(CHAPTER_KEY_PREFIX)
}

/// A code's vote, divided among the chapters it hits.
fn shared_code_vote(votes: &mut HashMap<String, f32>, hits: &[IndexHit]) {
    let chapters = chapters_hit(hits);
    if chapters.is_empty() || chapters.len() > SHARED_CODE_MAX_CHAPTERS {
        return;
    }
    let weight = 1.0 / chapters.len() as f32;
    for chapter in chapters {
        add_vote(votes, chapter, weight);
    }
}

/// The distinct chapter keys among one query's hits.
fn chapters_hit(hits: &[IndexHit]) -> BTreeSet<&str> {
    hits.iter()
        .map(|hit| hit.entry.owner.as_str())
        .filter(|key| is_chapter_key(key))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapter_keys_are_told_from_page_keys() {
        let chapter = FingerprintOwner::Chapter {
            work_id: "w1".parse().expect("id"),
            chapter_id: "c1".parse().expect("id"),
        };
        let page = FingerprintOwner::Page {
            page_id: PageId::for_url("http://example.com/c:1"),
        };
        assert!(is_chapter_key(&chapter.index_key()));
        assert!(!is_chapter_key(&page.index_key()));
    }
}
