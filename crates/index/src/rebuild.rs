//! Rebuilding an index from the fingerprint store, and the one mapping from a
//! stored record to its index entries.

use copyhound_core::Result;
use copyhound_core::model::FingerprintRecord;
use copyhound_core::ports::{FingerprintIndex, FingerprintStore, IndexEntry, Pages};

/// Records read from the store per page during a rebuild.
const REBUILD_PAGE: u32 = 500;
/// Entries gathered before one insert: an in-memory index rebuilds its tables
/// once per large insert, so fewer, larger inserts keep a rebuild near linear.
const REBUILD_BATCH_ENTRIES: usize = 262_144;

/// Returns the index entries of a record: document SimHash (ordinal 0), shingle
/// SimHash (ordinal 1), one passage entry per distinct passage SimHash (at the
/// ordinal of its first passage), one DNA entry per distinct document DNA code
/// and one entry per anchor. The matcher uses the same mapping, so
/// what is indexed and what is queried cannot drift apart.
pub fn entries_for_record(record: &FingerprintRecord) -> Vec<IndexEntry> {
    record.index_entries()
}

/// Inserts the entries of every record of `version` into `index`, a few store
/// pages per insert, calling `progress` with the number of records done after
/// each insert. Inserts replace, so a rebuild over a live index converges;
/// stale owners are not removed (rebuild into a fresh index to drop them).
/// Queries during the rebuild see the index before or after each insert, never
/// a torn record.
pub async fn rebuild_index(
    store: &dyn FingerprintStore,
    index: &dyn FingerprintIndex,
    version: u32,
    progress: impl Fn(u64),
) -> Result<u64> {
    rebuild_in_batches(store, index, version, REBUILD_BATCH_ENTRIES, progress).await
}

/// [`rebuild_index`] inserting once at least `batch_entries` entries are gathered.
pub(crate) async fn rebuild_in_batches(
    store: &dyn FingerprintStore,
    index: &dyn FingerprintIndex,
    version: u32,
    batch_entries: usize,
    progress: impl Fn(u64),
) -> Result<u64> {
    let mut done = 0_u64;
    let mut pending = 0_u64;
    let mut entries: Vec<IndexEntry> = Vec::new();
    let mut pages = Pages::new(REBUILD_PAGE);
    while let Some(request) = pages.next_request() {
        let records = pages.advance(store.list_fingerprints(version, &request).await?)?;
        entries.extend(records.iter().flat_map(entries_for_record));
        pending += records.len() as u64;
        let last = pages.is_done();
        if last || entries.len() >= batch_entries {
            index.insert(&entries).await?;
            entries.clear();
            done += pending;
            pending = 0;
            progress(done);
        }
    }
    Ok(done)
}
