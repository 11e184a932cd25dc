//! Rebuilding an index from the fingerprint store, and the one mapping from a
//! stored record to its index entries.

use copyhound_core::Result;
use copyhound_core::model::FingerprintRecord;
use copyhound_core::ports::{FingerprintIndex, FingerprintStore, IndexEntry, PageRequest};

/// Records read from the store per page during a rebuild.
const REBUILD_PAGE: u32 = 500;

/// Returns the index entries of a record: document SimHash (ordinal 0), shingle
/// SimHash (ordinal 1), one passage entry per passage (its ordinal) and one DNA
/// entry per distinct document DNA code. The matcher uses the same mapping, so
/// what is indexed and what is queried cannot drift apart.
pub fn entries_for_record(record: &FingerprintRecord) -> Vec<IndexEntry> {
    record.index_entries()
}

/// Inserts the entries of every record of `version` into `index`, page by page,
/// calling `progress` with the number of records done after each page. Inserts
/// replace, so a rebuild over a live index converges; stale owners are not
/// removed (rebuild into a fresh index to drop them). Queries during the
/// rebuild see the index before or after each page, never a torn page.
pub async fn rebuild_index(
    store: &dyn FingerprintStore,
    index: &dyn FingerprintIndex,
    version: u32,
    progress: impl Fn(u64),
) -> Result<u64> {
    let mut request = PageRequest {
        after: None,
        limit: REBUILD_PAGE,
    };
    let mut done = 0_u64;
    loop {
        let page = store.list_fingerprints(version, &request).await?;
        let entries: Vec<IndexEntry> = page.items.iter().flat_map(entries_for_record).collect();
        index.insert(&entries).await?;
        done += page.items.len() as u64;
        progress(done);
        match page.next {
            Some(next) => request.after = Some(next),
            None => return Ok(done),
        }
    }
}
