//! The durable write path of an index with a directory: open (snapshot, then
//! log replay), logged writes with group commit, and snapshots that reset the log.
//!
//! A write is acknowledged only after its log record is synced, and applied to
//! memory only after that, so a query never sees a write a crash could lose.
//! One `fdatasync` costs milliseconds, so writers arriving while one syncs
//! queue up and the next one to take the writer lock commits them all: one
//! record, one sync, then each operation applied in order (group commit).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use copyhound_core::stages::{Stage, charge};
use copyhound_core::{Error, Result};
use tokio::sync::oneshot;

use super::state::{Base, State};
use super::wal::{self, LogOp, WriteAheadLog};
use super::{MemoryFingerprintIndex, join_error, snapshot};
use crate::layout::SegmentLayout;

/// The log is folded into a snapshot once it is larger than this and than
/// the last snapshot, so replay at open stays bounded and snapshots amortize.
const LOG_SNAPSHOT_MIN_BYTES: u64 = 64 << 20;

/// Where an index with a directory persists itself.
#[derive(Debug)]
pub(super) struct Durable {
    pub dir: PathBuf,
    /// Locked on the blocking pool, under the writer lock.
    log: Arc<Mutex<WriteAheadLog>>,
    /// Writes waiting for the next group commit.
    waiting: Mutex<Vec<Waiting>>,
    /// Size of the last snapshot written or read, bytes.
    snapshot_bytes: AtomicU64,
    /// Log size past which a write snapshots (with `snapshot_bytes`).
    pub log_snapshot_min_bytes: u64,
}

#[derive(Debug)]
struct Waiting {
    /// Operations logged together, each with its encoding.
    ops: Vec<(LogOp, Vec<u8>)>,
    done: oneshot::Sender<Result<()>>,
}

/// Loads the snapshot of `dir` and replays its log on top.
pub(super) fn open_blocking(dir: PathBuf, layout: SegmentLayout) -> Result<(State, Durable)> {
    let (base, snapshot_bytes) = match snapshot::read(&dir, &layout)? {
        Some(found) => found,
        None => (Base::build(&layout, &[], Default::default())?, 0),
    };
    let (log, ops) = WriteAheadLog::open(&dir)?;
    let replayed = ops.len();
    let state = replay(State::of_base(&layout, base), ops)?;
    if replayed > 0 {
        tracing::info!(dir = %dir.display(), operations = replayed, "replayed the index log");
    }
    let durable = Durable {
        dir,
        log: Arc::new(Mutex::new(log)),
        waiting: Mutex::new(Vec::new()),
        snapshot_bytes: snapshot_bytes.into(),
        log_snapshot_min_bytes: LOG_SNAPSHOT_MIN_BYTES,
    };
    Ok((state, durable))
}

/// Applies logged writes to `state` as the live write paths do (same
/// runs and merges), on the calling thread. The caller's copy is changed in
/// place: one state copy per group of writes, not one per write.
pub(super) fn replay(mut state: State, ops: Vec<LogOp>) -> Result<State> {
    for op in &ops {
        state.apply(op)?;
    }
    Ok(state)
}

impl MemoryFingerprintIndex {
    /// Logs `ops` (each with its encoding) in one record, syncs, applies
    /// them; with the writes queued meanwhile when this caller leads the
    /// group commit.
    pub(super) async fn write_logged(
        &self,
        durable: &Durable,
        ops: Vec<(LogOp, Vec<u8>)>,
    ) -> Result<()> {
        let (done, mut outcome) = oneshot::channel();
        lock(&durable.waiting).push(Waiting { ops, done });
        let _writer = self.writer.lock().await;
        // A leader before us may have committed our write with its group.
        match outcome.try_recv() {
            Ok(result) => return result,
            Err(oneshot::error::TryRecvError::Closed) => {
                return Err(Error::unavailable(
                    "an index write was interrupted with its group; retry it",
                ));
            }
            Err(oneshot::error::TryRecvError::Empty) => {}
        }
        let group = std::mem::take(&mut *lock(&durable.waiting));
        debug_assert!(!group.is_empty(), "our own write is in the group");
        let mut ops = Vec::with_capacity(group.len());
        let mut encoded = Vec::with_capacity(group.len());
        let mut senders = Vec::with_capacity(group.len());
        for waiting in group {
            for (op, bytes) in waiting.ops {
                ops.push(op);
                encoded.push(bytes);
            }
            senders.push(waiting.done);
        }
        let result = self.commit_group(durable, ops, encoded).await;
        for sender in senders {
            let copy = match &result {
                Ok(()) => Ok(()),
                Err(error) => Err(Error::new(error.kind(), error.to_string())),
            };
            let _receiver_gone = sender.send(copy);
        }
        if result.is_ok() {
            self.snapshot_if_log_full(durable).await;
        }
        outcome
            .try_recv()
            .unwrap_or_else(|_| Err(Error::internal("a group commit lost a write's outcome")))
    }

    /// Appends one record for the group, syncs it, then applies its operations.
    async fn commit_group(
        &self,
        durable: &Durable,
        ops: Vec<LogOp>,
        encoded: Vec<Vec<u8>>,
    ) -> Result<()> {
        let record = wal::frame(&encoded)?;
        let log = Arc::clone(&durable.log);
        let current = self.current();
        let next = tokio::task::spawn_blocking(move || {
            charge(Stage::IndexWrite, || {
                lock(&log).append(&record)?;
                replay(State::clone(&current), ops)
            })
        })
        .await
        .map_err(join_error)??;
        self.swap(next);
        Ok(())
    }

    /// Compacts, writes the snapshot and resets the log; the caller holds the writer lock.
    pub(super) async fn snapshot_locked(&self, durable: &Durable) -> Result<PathBuf> {
        self.compact_locked().await?;
        let run = self.current().single_base()?;
        let dir = durable.dir.clone();
        let log = Arc::clone(&durable.log);
        let (path, bytes) = tokio::task::spawn_blocking(move || {
            let encoded = snapshot::encode(&run.base);
            let path = snapshot::write(&dir, &encoded)?;
            // The snapshot holds every logged write now; replaying them on
            // top of it (a crash before this reset) would converge anyway.
            lock(&log).reset()?;
            Ok::<_, Error>((path, encoded.len() as u64))
        })
        .await
        .map_err(join_error)??;
        durable.snapshot_bytes.store(bytes, Ordering::Relaxed);
        Ok(path)
    }

    /// Snapshots when the log has outgrown its bound. The writes before it are
    /// durable either way, so a failure is logged and retried on a later write.
    async fn snapshot_if_log_full(&self, durable: &Durable) {
        let log_bytes = lock(&durable.log).len();
        let bound = durable
            .log_snapshot_min_bytes
            .max(durable.snapshot_bytes.load(Ordering::Relaxed));
        if log_bytes <= bound {
            return;
        }
        if let Err(error) = self.snapshot_locked(durable).await {
            tracing::warn!(error = %error, log_bytes, "failed to fold the index log into a snapshot");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
