//! End-of-run repair of pagination. Index pages often link every part of a
//! split chapter, so part 2 may be crawled on its own (and taken for the first
//! part of a shorter chain) before, after or while part 1's chain is followed.
//! Whatever the order, once the frontier is drained the chains seen in the run
//! are merged into maximal chains (a part that is some page's "next" is never a
//! first part) and every part whose stored pagination differs is rewritten.
//! The rewrite changes only fetch metadata, so the store reports it unchanged
//! and nothing is fingerprinted again.

use std::collections::{HashMap, HashSet};

use copyhound_core::Result;
use copyhound_core::ids::PageId;
use copyhound_core::model::{Page, Pagination};
use copyhound_core::ports::PageStore;

use super::page::MAX_PARTS;

/// Returns the maximal chains formed by the observed chains.
pub(crate) fn maximal_chains(chains: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut next_of: HashMap<&str, &str> = HashMap::new();
    for chain in chains {
        for pair in chain.windows(2) {
            next_of.entry(pair[0].as_str()).or_insert(pair[1].as_str());
        }
    }
    let has_previous: HashSet<&str> = next_of.values().copied().collect();
    let mut heads: Vec<&str> = next_of
        .keys()
        .copied()
        .filter(|url| !has_previous.contains(url))
        .collect();
    heads.sort_unstable();
    heads
        .into_iter()
        .map(|head| {
            let mut chain = vec![head.to_string()];
            let mut current = head;
            while let Some(next) = next_of.get(current) {
                if chain.len() >= MAX_PARTS || chain.iter().any(|part| part == next) {
                    break;
                }
                chain.push((*next).to_string());
                current = next;
            }
            chain
        })
        .collect()
}

/// Rewrites the pagination of stored parts to match the maximal chains;
/// returns how many pages were rewritten.
pub(crate) async fn reconcile(pages: &dyn PageStore, chains: &[Vec<String>]) -> Result<usize> {
    let mut rewritten = 0;
    for chain in maximal_chains(chains) {
        let mut stored: Vec<Page> = Vec::with_capacity(chain.len());
        for url in &chain {
            match pages.get_page(&PageId::for_url(url)).await {
                Ok(page) => stored.push(page),
                Err(error) if error.kind() == copyhound_core::ErrorKind::NotFound => break,
                Err(error) => return Err(error),
            }
        }
        if stored.len() < 2 {
            continue;
        }
        let part_urls: Vec<String> = stored.iter().map(|page| page.url.clone()).collect();
        let joined: String = stored
            .iter()
            .map(|page| page.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for (index, mut page) in stored.into_iter().enumerate() {
            let desired = Pagination {
                first_url: part_urls[0].clone(),
                part: u32::try_from(index + 1).unwrap_or(u32::MAX),
                part_urls: part_urls.clone(),
                joined_text: (index == 0).then(|| joined.clone()),
            };
            if page.fetch.pagination.as_ref() != Some(&desired) {
                page.fetch.pagination = Some(desired);
                pages.upsert_page(&page).await?;
                rewritten += 1;
            }
        }
    }
    Ok(rewritten)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_chains_merge_into_the_longest() {
        let chains = vec![
            vec!["p2".to_string(), "p3".to_string()],
            vec!["p1".to_string(), "p2".to_string(), "p3".to_string()],
            vec!["q1".to_string(), "q2".to_string()],
        ];
        assert_eq!(
            maximal_chains(&chains),
            vec![vec!["p1", "p2", "p3"], vec!["q1", "q2"]]
        );
        let looped = vec![
            vec!["a".to_string(), "b".to_string()],
            vec!["b".to_string(), "a".to_string()],
        ];
        assert!(
            maximal_chains(&looped).is_empty(),
            "a pure loop has no head"
        );
    }
}
