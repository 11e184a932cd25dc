//! The embedded index: a multi-index over packed sorted tables in memory,
//! persisted as a snapshot plus a write-ahead log. See `design.md` for the layout.
//!
//! Writes go to a small delta scanned linearly; when it outgrows a threshold
//! (a fraction of the base) a new base is built off the async runtime and
//! swapped in. Every write derives a new immutable [`state::State`] and swaps
//! the `Arc` under a lock held only for the swap, so a query sees one state.
//! With a directory, every write is appended to the log and synced before it
//! is applied, so an acknowledged write survives kill -9; a snapshot (on a
//! clean exit, or when the log outgrows its bound) resets the log.

mod durable;
mod snapshot;
mod state;
mod tables;
mod wal;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry, IndexHit, IndexStats};
use copyhound_core::{Error, ErrorKind, Result};

use durable::Durable;
pub use snapshot::SNAPSHOT_FILE;
use state::{Base, Delta, State};
pub use wal::LOG_FILE;
use wal::LogOp;

use crate::layout::SegmentLayout;

/// Query batches larger than this run on the blocking pool.
const INLINE_QUERIES: usize = 256;

/// The in-memory [`FingerprintIndex`], optionally persisted in a directory.
pub struct MemoryFingerprintIndex {
    layout: SegmentLayout,
    durable: Option<Durable>,
    state: RwLock<Arc<State>>,
    writer: tokio::sync::Mutex<()>,
}

impl fmt::Debug for MemoryFingerprintIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryFingerprintIndex")
            .field("max_distance", &self.layout.max_distance())
            .field("dir", &self.durable.as_ref().map(|durable| &durable.dir))
            .finish_non_exhaustive()
    }
}

impl MemoryFingerprintIndex {
    /// Returns an empty index without a directory (`snapshot` is refused).
    pub fn new(max_distance: u32) -> Result<Self> {
        let layout = SegmentLayout::new(max_distance)?;
        let base = Base::build(&layout, &[], Default::default())?;
        Ok(Self::from_state(empty_state(&layout, base), None))
    }

    /// Opens the index of `dir`: loads its snapshot when present (else starts
    /// empty) and replays its log on top. The tables are rebuilt for
    /// `max_distance`, whatever it was before.
    pub async fn open(dir: impl AsRef<Path>, max_distance: u32) -> Result<Self> {
        let layout = SegmentLayout::new(max_distance)?;
        let dir = dir.as_ref().to_path_buf();
        let (state, durable) =
            tokio::task::spawn_blocking(move || durable::open_blocking(dir, layout))
                .await
                .map_err(join_error)??;
        Ok(Self::from_state(state, Some(durable)))
    }

    fn from_state(state: State, durable: Option<Durable>) -> Self {
        Self {
            layout: state.layout.clone(),
            durable,
            state: RwLock::new(Arc::new(state)),
            writer: tokio::sync::Mutex::new(()),
        }
    }

    /// Compacts the index, writes its snapshot atomically and resets its log;
    /// returns the snapshot path. Not needed for durability (the log has
    /// every write): it makes the next open fast.
    pub async fn snapshot(&self) -> Result<PathBuf> {
        let durable = self.durable.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "this in-memory index has no directory to snapshot into",
            )
        })?;
        let _writer = self.writer.lock().await;
        self.snapshot_locked(durable).await
    }

    /// Folds the delta into a new base now (normally automatic).
    pub async fn compact(&self) -> Result<()> {
        let _writer = self.writer.lock().await;
        self.compact_locked(&[]).await
    }

    fn current(&self) -> Arc<State> {
        Arc::clone(
            &self
                .state
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    fn swap(&self, state: State) {
        *self
            .state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(state);
    }

    /// Builds a base from the current state plus `entries` and swaps it in.
    /// The caller holds the writer lock.
    async fn compact_locked(&self, entries: &[IndexEntry]) -> Result<()> {
        let current = self.current();
        if current.delta_len() == 0
            && current.delta.dead_base_owners.is_empty()
            && entries.is_empty()
        {
            return Ok(());
        }
        let entries = entries.to_vec();
        let layout = self.layout.clone();
        let base = tokio::task::spawn_blocking(move || {
            let delta = current.delta_with_inserts(&entries);
            let merged = State {
                layout,
                base: Arc::clone(&current.base),
                delta,
            };
            merged.compact()
        })
        .await
        .map_err(join_error)??;
        self.swap(State {
            layout: self.layout.clone(),
            base: Arc::new(base),
            delta: Delta::default(),
        });
        Ok(())
    }

    /// Runs a batch on one state: inline when small, else on the blocking pool.
    async fn query_many(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
        max_hits: usize,
    ) -> Result<Vec<Option<Vec<IndexHit>>>> {
        let current = self.current();
        if fingerprints.len() <= INLINE_QUERIES {
            return Ok(current.query_many(kind, fingerprints, max_distance, max_hits));
        }
        let fingerprints = fingerprints.to_vec();
        tokio::task::spawn_blocking(move || {
            current.query_many(kind, &fingerprints, max_distance, max_hits)
        })
        .await
        .map_err(join_error)
    }
}

/// Returns how many delta entries a base of `base_entries` tolerates before compaction.
fn delta_limit(base_entries: u64) -> usize {
    (base_entries / 256).clamp(4096, 16_384) as usize
}

/// Returns whether inserting `count` entries into `current` builds a new base.
fn insert_compacts(current: &State, count: usize) -> bool {
    current.delta_len() + count > delta_limit(current.base_len() as u64)
}

/// Returns whether a removal leaving `delta` builds a new base.
fn removal_compacts(current: &State, delta: &Delta) -> bool {
    delta.dead_base_owners.len() > current.base.owners.len() / 8 + 64
}

fn empty_state(layout: &SegmentLayout, base: Base) -> State {
    State {
        layout: layout.clone(),
        base: Arc::new(base),
        delta: Delta::default(),
    }
}

fn join_error(error: tokio::task::JoinError) -> Error {
    Error::internal(format!("index worker task failed: {error}"))
}

#[async_trait]
impl FingerprintIndex for MemoryFingerprintIndex {
    async fn check_connectivity(&self) -> Result<()> {
        Ok(())
    }

    fn max_distance(&self) -> u32 {
        self.layout.max_distance()
    }

    async fn insert(&self, entries: &[IndexEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        if let Some(durable) = &self.durable {
            let record = wal::encode_insert(entries)?;
            return self
                .write_logged(durable, LogOp::Insert(entries.to_vec()), record)
                .await;
        }
        let _writer = self.writer.lock().await;
        let current = self.current();
        if insert_compacts(&current, entries.len()) {
            self.compact_locked(entries).await?;
        } else {
            let delta = current.delta_with_inserts(entries);
            self.swap(State {
                layout: self.layout.clone(),
                base: Arc::clone(&current.base),
                delta,
            });
        }
        Ok(())
    }

    async fn remove_owners(&self, owners: &[String]) -> Result<()> {
        if owners.is_empty() {
            return Ok(());
        }
        if let Some(durable) = &self.durable {
            let record = wal::encode_removal(owners)?;
            return self
                .write_logged(durable, LogOp::RemoveOwners(owners.to_vec()), record)
                .await;
        }
        let _writer = self.writer.lock().await;
        let current = self.current();
        let delta = current.delta_with_removals(owners);
        let compacts = removal_compacts(&current, &delta);
        self.swap(State {
            layout: self.layout.clone(),
            base: Arc::clone(&current.base),
            delta,
        });
        if compacts {
            self.compact_locked(&[]).await?;
        }
        Ok(())
    }

    async fn query_batch(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
    ) -> Result<Vec<Vec<IndexHit>>> {
        self.layout.check_query_distance(max_distance)?;
        let results = self
            .query_many(kind, fingerprints, max_distance, usize::MAX)
            .await?;
        Ok(results
            .into_iter()
            .map(|hits| hits.unwrap_or_default())
            .collect())
    }

    async fn query_batch_capped(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
        max_hits: usize,
    ) -> Result<Vec<Option<Vec<IndexHit>>>> {
        self.layout.check_query_distance(max_distance)?;
        self.query_many(kind, fingerprints, max_distance, max_hits)
            .await
    }

    async fn stats(&self) -> Result<IndexStats> {
        let current = self.current();
        Ok(IndexStats {
            entries: current.entry_count(),
            memory_bytes: current.memory_bytes(),
        })
    }
}

#[cfg(test)]
mod durability_tests;
#[cfg(test)]
mod tests;
