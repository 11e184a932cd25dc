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

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use copyhound_core::stages::{Stage, charge};
use copyhound_core::{Error, ErrorKind, Result};
use redb::{Database, Durability, WriteTransaction};
use tokio::sync::oneshot;

/// Most writes committed together.
const MAX_BATCH: usize = 64;

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
    pub fn start(name: &str, db: Arc<Database>, map_error: MapError, stage: Stage) -> Result<Self> {
        let (jobs, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("{name}-writer"))
            .spawn(move || run(&db, &receiver, map_error, stage))
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
        let reply = self.submit(work)?;
        reply.await.unwrap_or_else(|_| Err(writer_gone()))
    }

    /// [`Self::write`] for a caller on a blocking thread (never on the async
    /// runtime's own threads).
    pub fn write_blocking<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        let reply = self.submit(work)?;
        reply.blocking_recv().unwrap_or_else(|_| Err(writer_gone()))
    }

    fn submit<T, F>(&self, work: F) -> Result<oneshot::Receiver<Result<T>>>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        let (reply, receiver) = oneshot::channel();
        let job = Box::new(Op {
            work,
            value: None,
            reply,
        });
        self.inner
            .jobs
            .as_ref()
            .ok_or_else(writer_gone)?
            .send(job)
            .map_err(|_| writer_gone())?;
        Ok(receiver)
    }
}

fn writer_gone() -> Error {
    Error::new(ErrorKind::Internal, "the database writer has stopped")
}

/// A write waiting for its commit.
trait Job: Send {
    /// Runs the write in `txn`, keeping its value until the commit.
    fn apply(&mut self, txn: &WriteTransaction) -> Result<()>;
    /// Replies: the kept value once committed, or the error.
    fn finish(self: Box<Self>, outcome: Result<()>);
}

struct Op<F, T> {
    work: F,
    value: Option<T>,
    reply: oneshot::Sender<Result<T>>,
}

impl<F, T> Job for Op<F, T>
where
    T: Send,
    F: Fn(&WriteTransaction) -> Result<T> + Send,
{
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

fn run(db: &Database, jobs: &mpsc::Receiver<Box<dyn Job>>, map_error: MapError, stage: Stage) {
    let mut pending: VecDeque<Box<dyn Job>> = VecDeque::new();
    loop {
        if pending.is_empty() {
            match jobs.recv() {
                Ok(job) => pending.push_back(job),
                Err(_) => return,
            }
        }
        while pending.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => pending.push_back(job),
                Err(_) => break,
            }
        }
        let batch: Vec<_> = pending.drain(..pending.len().min(MAX_BATCH)).collect();
        charge(stage, || commit(db, batch, &mut pending, map_error));
    }
}

/// Commits `batch` in one transaction; see the module docs for a failing
/// write. Writes not yet run go back to the front of `pending`.
fn commit(
    db: &Database,
    mut batch: Vec<Box<dyn Job>>,
    pending: &mut VecDeque<Box<dyn Job>>,
    map_error: MapError,
) {
    let txn = match begin(db, map_error) {
        Ok(txn) => txn,
        Err(error) => return fail_all(batch, &error),
    };
    for i in 0..batch.len() {
        let applied = catch_unwind(AssertUnwindSafe(|| batch[i].apply(&txn)))
            .unwrap_or_else(|_| Err(Error::new(ErrorKind::Internal, "a database write panicked")));
        if let Err(error) = applied {
            let _ = txn.abort();
            let rest = batch.split_off(i + 1);
            if let Some(failed) = batch.pop() {
                failed.finish(Err(error));
            }
            for job in rest.into_iter().rev() {
                pending.push_front(job);
            }
            if !batch.is_empty() {
                commit(db, batch, pending, map_error);
            }
            return;
        }
    }
    match txn.commit() {
        Ok(()) => batch.into_iter().for_each(|job| job.finish(Ok(()))),
        Err(error) => fail_all(batch, &map_error(error.into())),
    }
}

fn begin(db: &Database, map_error: MapError) -> Result<WriteTransaction> {
    let mut txn = db.begin_write().map_err(|e| map_error(e.into()))?;
    txn.set_durability(Durability::Immediate)
        .map_err(|e| map_error(e.into()))?;
    Ok(txn)
}

fn fail_all(batch: Vec<Box<dyn Job>>, error: &Error) {
    for job in batch {
        job.finish(Err(Error::new(error.kind(), error.message().to_owned())));
    }
}

#[cfg(test)]
mod tests;
