//! One writer per embedded database, committing concurrent writes together.
//!
//! redb runs one write transaction at a time, and a durable commit costs an
//! `fdatasync` plus rewriting every B-tree page on the path to what changed.
//! With several workers each committing alone, a page's few writes cost a
//! few syncs each, and the tasks queue on redb's writer lock anyway. So every
//! write goes to one thread that takes all the writes waiting, runs them in
//! order in one transaction, and commits once (group commit, as databases do
//! with their logs). A caller's reply is sent only after the commit that holds
//! its write is durable, so each write is exactly as durable as before.
//!
//! A write that fails must not take the others with it: the transaction is
//! aborted, the writes before it run again in a fresh one (a write is a `Fn`
//! for that reason), the failing one reports its error, and the writes after
//! it go into the next batch. The order the writes ran in is kept, so the
//! result is the same as if each had committed alone in that order.
//!
//! Some writes need not be durable at once: an acknowledgement lost in a
//! crash only means the task runs again, which at-least-once delivery allows.
//! Such a write ([`GroupWriter::write_lazy`]) commits without a sync when its
//! batch holds no durable write; the next durable commit makes it durable,
//! and when none follows within [`LAZY_SYNC_AFTER`] the writer syncs on its
//! own (and always before it stops). A sync was about half of a commit's
//! CPU in the pipeline's profile.
//!
//! An I/O error (a full disk) latches redb's file until it is reopened: the
//! writer then reopens it through [`SharedDb`], and writes answer
//! `Unavailable` until one commits again (see `shared`).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use copyhound_core::stages::{Stage, charge};
use copyhound_core::{Error, ErrorKind, Result};
use redb::{Durability, WriteTransaction};
use tokio::sync::oneshot;
use tracing::warn;

pub mod fault;
mod shared;

pub use shared::{DbHealth, Opener, SharedDb};
use shared::{io_failure, io_failure_in};

/// Most writes committed together.
const MAX_BATCH: usize = 64;

/// Longest a lazy write stays unsynced while the writer is idle.
pub const LAZY_SYNC_AFTER: Duration = Duration::from_millis(50);

/// Maps a redb error to the owning backend's error.
pub type MapError = fn(redb::Error) -> Error;

/// The one writer of a database; cheap to clone.
#[derive(Clone)]
pub struct GroupWriter {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for GroupWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupWriter").finish_non_exhaustive()
    }
}

struct Inner {
    jobs: Option<mpsc::Sender<Box<dyn Job>>>,
    thread: Option<JoinHandle<()>>,
    syncs: Arc<AtomicU64>,
    /// Writes handed to the writer thread (tests wait on it, not on a sleep).
    #[cfg(test)]
    submitted: AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel ends the thread once it has committed what it
        // holds; joining it closes the database before the owner goes away, so
        // the file can be opened again at once.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

impl GroupWriter {
    /// Starts the writer of `db`; its CPU counts toward `stage`.
    pub fn start(db: Arc<SharedDb>, map_error: MapError, stage: Stage) -> Result<Self> {
        Self::start_syncing_after(db, map_error, stage, LAZY_SYNC_AFTER)
    }

    /// [`Self::start`], syncing lazy writes after `sync_after` of idleness.
    pub(crate) fn start_syncing_after(
        db: Arc<SharedDb>,
        map_error: MapError,
        stage: Stage,
        sync_after: Duration,
    ) -> Result<Self> {
        let name = db.name();
        let (jobs, receiver) = mpsc::channel();
        let syncs = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&syncs);
        let thread = std::thread::Builder::new()
            .name(format!("{name}-writer"))
            .spawn(move || run(&db, &receiver, map_error, stage, &counted, sync_after))
            .map_err(|error| {
                Error::with_source(
                    ErrorKind::Internal,
                    format!("failed to start the {name} writer"),
                    error,
                )
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                jobs: Some(jobs),
                thread: Some(thread),
                syncs,
                #[cfg(test)]
                submitted: AtomicU64::new(0),
            }),
        })
    }

    /// Runs `work` in a write transaction and returns once the commit that
    /// holds it is durable; a `work` that fails leaves nothing behind. `work`
    /// may run more than once (when another write of its batch fails), always
    /// on the state the writes before it left.
    pub async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        let reply = self.submit(work, true)?;
        reply.await.unwrap_or_else(|_| Err(writer_gone()))
    }

    /// [`Self::write`] for a write that may be lost in a crash: it returns once
    /// committed and visible, and is durable after the next durable commit,
    /// at the latest [`LAZY_SYNC_AFTER`] after the writer falls idle, or when
    /// the writer stops. For writes whose loss only repeats work.
    pub async fn write_lazy<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        let reply = self.submit(work, false)?;
        reply.await.unwrap_or_else(|_| Err(writer_gone()))
    }

    /// Durable commits made so far (each one sync of the file).
    pub fn syncs(&self) -> u64 {
        self.inner.syncs.load(Ordering::Relaxed)
    }

    /// Writes submitted so far, to the channel the writer thread reads.
    #[cfg(test)]
    pub(crate) fn submitted(&self) -> u64 {
        self.inner.submitted.load(Ordering::SeqCst)
    }

    /// [`Self::write`] for a caller on a blocking thread (never on the async
    /// runtime's own threads).
    pub fn write_blocking<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        let reply = self.submit(work, true)?;
        reply.blocking_recv().unwrap_or_else(|_| Err(writer_gone()))
    }

    fn submit<T, F>(&self, work: F, durable: bool) -> Result<oneshot::Receiver<Result<T>>>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        let (reply, receiver) = oneshot::channel();
        let job = Box::new(Op {
            work,
            durable,
            value: None,
            reply,
        });
        self.inner
            .jobs
            .as_ref()
            .ok_or_else(writer_gone)?
            .send(job)
            .map_err(|_| writer_gone())?;
        #[cfg(test)]
        self.inner.submitted.fetch_add(1, Ordering::SeqCst);
        Ok(receiver)
    }
}

fn writer_gone() -> Error {
    Error::new(ErrorKind::Internal, "the database writer has stopped")
}

/// A write waiting for its commit.
trait Job: Send {
    /// Whether its commit must be synced before it is answered.
    fn durable(&self) -> bool;
    /// Runs the write in `txn`, keeping its value until the commit.
    fn apply(&mut self, txn: &WriteTransaction) -> Result<()>;
    /// Replies: the kept value once committed, or the error.
    fn finish(self: Box<Self>, outcome: Result<()>);
}

struct Op<F, T> {
    work: F,
    durable: bool,
    value: Option<T>,
    reply: oneshot::Sender<Result<T>>,
}

impl<F, T> Job for Op<F, T>
where
    T: Send,
    F: Fn(&WriteTransaction) -> Result<T> + Send,
{
    fn durable(&self) -> bool {
        self.durable
    }

    fn apply(&mut self, txn: &WriteTransaction) -> Result<()> {
        self.value = Some((self.work)(txn)?);
        Ok(())
    }

    fn finish(self: Box<Self>, outcome: Result<()>) {
        let Op { value, reply, .. } = *self;
        let outcome = outcome.and_then(|()| {
            value.ok_or_else(|| Error::new(ErrorKind::Internal, "a write finished without running"))
        });
        // The caller may have stopped waiting; the write stands.
        let _ = reply.send(outcome);
    }
}

fn run(
    db: &SharedDb,
    jobs: &mpsc::Receiver<Box<dyn Job>>,
    map_error: MapError,
    stage: Stage,
    syncs: &AtomicU64,
    sync_after: Duration,
) {
    let mut writer = Writer {
        db,
        map_error,
        syncs,
        unsynced: false,
    };
    let mut pending: VecDeque<Box<dyn Job>> = VecDeque::new();
    loop {
        if pending.is_empty() {
            // Idle: wake to sync lazy commits, or to reopen a failed file
            // (so reads work again without waiting for a write).
            let reopen_in = db.reopen_due_in();
            let wake_in = writer
                .unsynced
                .then_some(sync_after)
                .into_iter()
                .chain(reopen_in)
                .min();
            let next = match wake_in {
                Some(wait) => jobs.recv_timeout(wait),
                None => jobs
                    .recv()
                    .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            };
            match next {
                Ok(job) => pending.push_back(job),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if db.reopen_due_in().is_some_and(|wait| wait.is_zero()) {
                        // A failure is logged and retried after its backoff.
                        let _ = charge(stage, || db.reopen());
                    } else if writer.unsynced {
                        charge(stage, || writer.sync());
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if writer.unsynced {
                        charge(stage, || writer.sync());
                    }
                    return;
                }
            }
        }
        while pending.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => pending.push_back(job),
                Err(_) => break,
            }
        }
        let batch: Vec<_> = pending.drain(..pending.len().min(MAX_BATCH)).collect();
        charge(stage, || writer.commit(batch, &mut pending));
    }
}

/// The writer thread's state.
struct Writer<'a> {
    db: &'a SharedDb,
    map_error: MapError,
    syncs: &'a AtomicU64,
    /// A lazy commit is not yet followed by a durable one.
    unsynced: bool,
}

impl Writer<'_> {
    /// Commits `batch` in one transaction, synced when any of its writes is
    /// durable; see the module docs for a failing write. Writes not yet run
    /// go back to the front of `pending`.
    fn commit(&mut self, mut batch: Vec<Box<dyn Job>>, pending: &mut VecDeque<Box<dyn Job>>) {
        let durable = batch.iter().any(|job| job.durable());
        let txn = match self.begin(durable) {
            Ok(txn) => txn,
            Err(error) => return fail_all(batch, &error),
        };
        for i in 0..batch.len() {
            let applied =
                catch_unwind(AssertUnwindSafe(|| batch[i].apply(&txn))).unwrap_or_else(|_| {
                    Err(Error::new(ErrorKind::Internal, "a database write panicked"))
                });
            if let Err(mut error) = applied {
                let _ = txn.abort();
                if let Some(failure) = io_failure_in(&error) {
                    error = self.failed(failure);
                }
                let rest = batch.split_off(i + 1);
                if let Some(failed) = batch.pop() {
                    failed.finish(Err(error));
                }
                for job in rest.into_iter().rev() {
                    pending.push_front(job);
                }
                if !batch.is_empty() {
                    self.commit(batch, pending);
                }
                return;
            }
        }
        match txn.commit() {
            Ok(()) => {
                self.committed(durable);
                batch.into_iter().for_each(|job| job.finish(Ok(())));
            }
            Err(error) => {
                let error = self.translate(error.into());
                fail_all(batch, &error);
            }
        }
    }

    /// Makes the lazy commits durable with an empty durable commit. On
    /// failure they stay pending, and the next durable commit retries.
    fn sync(&mut self) {
        let synced = self
            .begin(true)
            .and_then(|txn| txn.commit().map_err(|e| self.translate(e.into())));
        match synced {
            Ok(()) => self.committed(true),
            // Retried at the next idle wake-up or durable commit.
            Err(error) => warn!(db = self.db.name(), %error, "syncing lazy commits failed"),
        }
    }

    fn committed(&mut self, durable: bool) {
        self.db.committed();
        let kind = if durable { "durable" } else { "lazy" };
        metrics::counter!("copyhound_db_commits_total", "db" => self.db.name(), "kind" => kind)
            .increment(1);
        if durable {
            self.syncs.fetch_add(1, Ordering::Relaxed);
            self.unsynced = false;
        } else {
            self.unsynced = true;
        }
    }

    fn begin(&mut self, durable: bool) -> Result<WriteTransaction> {
        let db = self.db.writable()?;
        let mut txn = db.begin_write().map_err(|e| self.translate(e.into()))?;
        let durability = if durable {
            Durability::Immediate
        } else {
            Durability::None
        };
        txn.set_durability(durability)
            .map_err(|e| self.translate(e.into()))?;
        Ok(txn)
    }

    /// Maps a redb error of the writer's own; an I/O failure degrades the
    /// database until it is reopened.
    fn translate(&mut self, error: redb::Error) -> Error {
        match io_failure(&error) {
            Some(failure) => self.failed(failure),
            None => (self.map_error)(error),
        }
    }

    /// Records an I/O failure; lazy commits on the failed handle are lost,
    /// as in a crash, so there is nothing left to sync.
    fn failed(&mut self, failure: shared::IoFailure) -> Error {
        self.unsynced = false;
        self.db.failed(failure)
    }
}

fn fail_all(batch: Vec<Box<dyn Job>>, error: &Error) {
    for job in batch {
        job.finish(Err(Error::new(error.kind(), error.message().to_owned())));
    }
}

#[cfg(test)]
mod shared_test;
#[cfg(test)]
mod tests;
