//! The embedded index: a multi-index over packed sorted tables in memory,
//! persisted as a snapshot plus a write-ahead log. See `design.md` for the layout.
//!
//! Writes go to a small delta scanned linearly; a full delta becomes a run,
//! and runs merge as a log-structured merge tree (see `state.rs`), off the
//! async runtime. Every write derives a new immutable [`state::State`] and swaps
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
use copyhound_core::stages::{Stage, charge};
use copyhound_core::{Error, ErrorKind, Result};

use durable::Durable;
pub use snapshot::SNAPSHOT_FILE;
use state::{Base, State};
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
        Ok(Self::from_state(State::of_base(&layout, base), None))
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

    /// Folds the delta and every run into one run now (normally automatic).
    pub async fn compact(&self) -> Result<()> {
        let _writer = self.writer.lock().await;
        self.compact_locked().await
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

    /// Compacts the current state into one run and swaps it in. The caller
    /// holds the writer lock.
    async fn compact_locked(&self) -> Result<()> {
        let current = self.current();
        if current.runs.len() <= 1 && current.delta_len() == 0 && current.single_base().is_ok() {
            return Ok(());
        }
        let next =
            tokio::task::spawn_blocking(move || charge(Stage::IndexWrite, || current.compacted()))
                .await
                .map_err(join_error)??;
        self.swap(next);
        Ok(())
    }

    /// Applies `ops` as one write: with a directory, logged as one record
    /// and synced before it is applied.
    async fn write(&self, ops: Vec<LogOp>) -> Result<()> {
        let Some(durable) = &self.durable else {
            return self.apply_unlogged(ops).await;
        };
        let logged = ops
            .into_iter()
            .map(|op| {
                let encoded = wal::encode(&op)?;
                Ok((op, encoded))
            })
            .collect::<Result<Vec<_>>>()?;
        self.write_logged(durable, logged).await
    }

    /// Applies a write without a log (an index without a directory).
    async fn apply_unlogged(&self, ops: Vec<LogOp>) -> Result<()> {
        let _writer = self.writer.lock().await;
        let current = self.current();
        let next = tokio::task::spawn_blocking(move || {
            charge(Stage::IndexWrite, || {
                durable::replay(State::clone(&current), ops)
            })
        })
        .await
        .map_err(join_error)??;
        self.swap(next);
        Ok(())
    }

    /// Runs a batch on one state: inline when small, else on the blocking pool.
    async fn query_many(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
        max_hits: usize,
        owner_prefix: &str,
    ) -> Result<Vec<Option<Vec<IndexHit>>>> {
        let current = self.current();
        if fingerprints.len() <= INLINE_QUERIES {
            return Ok(current.query_many(
                kind,
                fingerprints,
                max_distance,
                max_hits,
                owner_prefix,
            ));
        }
        let fingerprints = fingerprints.to_vec();
        let owner_prefix = owner_prefix.to_owned();
        tokio::task::spawn_blocking(move || {
            charge(Stage::Candidates, || {
                current.query_many(kind, &fingerprints, max_distance, max_hits, &owner_prefix)
            })
        })
        .await
        .map_err(join_error)
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
        self.write(vec![LogOp::Insert(entries.to_vec())]).await
    }

    async fn remove_owners(&self, owners: &[String]) -> Result<()> {
        if owners.is_empty() {
            return Ok(());
        }
        self.write(vec![LogOp::RemoveOwners(owners.to_vec())]).await
    }

    async fn replace_owners(&self, owners: &[String], entries: &[IndexEntry]) -> Result<()> {
        // One write: a crash leaves the old entries or the new ones.
        self.write(vec![
            LogOp::RemoveOwners(owners.to_vec()),
            LogOp::Insert(entries.to_vec()),
        ])
        .await
    }

    async fn query_batch(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
    ) -> Result<Vec<Vec<IndexHit>>> {
        self.layout.check_query_distance(max_distance)?;
        let results = self
            .query_many(kind, fingerprints, max_distance, usize::MAX, "")
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
        self.query_batch_capped_owned(kind, fingerprints, max_distance, max_hits, "")
            .await
    }

    async fn query_batch_capped_owned(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
        max_hits: usize,
        owner_prefix: &str,
    ) -> Result<Vec<Option<Vec<IndexHit>>>> {
        self.layout.check_query_distance(max_distance)?;
        self.query_many(kind, fingerprints, max_distance, max_hits, owner_prefix)
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
