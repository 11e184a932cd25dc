//! A database handle that outlives an I/O failure.
//!
//! redb latches its file after a failed read or write: every later call
//! answers `PreviousIo` until the `Database` is dropped and opened again (the
//! open repairs the file). A full disk is such a failure, and one that passes
//! once space is freed, yet every write answered 503 until a restart. So the
//! handle lives in a cell: readers clone the current `Arc` for one operation,
//! and the writer thread, after an I/O error, takes the handle out (no reader
//! gets it again), waits a bounded time for the readers' clones to go (redb
//! locks the file, so the old handle must be closed first) and opens the file
//! again. Until a write commits again the database is degraded: writes answer
//! `Unavailable` with the cause, [`SharedDb::health`] reports it, and a failed
//! reopen is retried after a backoff, so a flood of writes does not spin on it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use copyhound_core::{Error, ErrorKind, Result};
use redb::{Database, DatabaseError, StorageError};
use tracing::{info, warn};

/// Opens the database file: at start, and again after an I/O failure.
pub type Opener = Box<dyn Fn() -> std::result::Result<Database, DatabaseError> + Send + Sync>;

/// Longest a reopen waits for readers to let go of the failed handle.
const READERS_WAIT: Duration = Duration::from_secs(3);
/// Wait before the second reopen; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(250);
/// Longest wait between reopens while the disk stays full.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Whether a database takes writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbHealth {
    /// Writes commit.
    Ok,
    /// Writes fail, for this reason, until one commits again.
    Degraded(String),
}

/// An embedded database's handle, reopened by its writer after an I/O failure.
pub struct SharedDb {
    name: &'static str,
    path: PathBuf,
    open: Opener,
    /// The open handle; `None` during a reopen and after a failed one.
    current: RwLock<Option<Arc<Database>>>,
    /// `state.degraded.is_none()`, read on every commit without the lock.
    healthy: AtomicBool,
    state: Mutex<State>,
    readers_wait: Duration,
}

impl fmt::Debug for SharedDb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedDb")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// Why writes fail, until one commits again.
    degraded: Option<String>,
    /// `current` is latched or absent: the file must be reopened.
    needs_reopen: bool,
    /// When the next reopen may run.
    retry_at: Option<Instant>,
    /// The wait after the next failure; zero while healthy.
    backoff: Duration,
}

impl State {
    /// Schedules the next reopen: at once after the first failure, then
    /// after a doubling wait.
    fn schedule_retry(&mut self) {
        let now = Instant::now();
        self.retry_at = Some(now + self.backoff);
        self.backoff = (self.backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
    }
}

/// An I/O failure in a redb error: the handle that met it is latched.
#[derive(Debug)]
pub(crate) enum IoFailure {
    /// The I/O error, as text.
    Io(String),
    /// `PreviousIo`: an earlier read or write failed.
    Previous,
}

impl SharedDb {
    /// Opens `path` with `Database::create`; `name` names the database in
    /// logs, metrics and its writer thread.
    pub fn create(
        name: &'static str,
        path: impl Into<PathBuf>,
    ) -> std::result::Result<Arc<Self>, DatabaseError> {
        let path = path.into();
        let file = path.clone();
        Self::open_with(name, path, Box::new(move || Database::create(&file)))
    }

    /// Opens the database at `path` with `open`, which also reopens it (tests
    /// pass a failing storage backend).
    pub fn open_with(
        name: &'static str,
        path: impl Into<PathBuf>,
        open: Opener,
    ) -> std::result::Result<Arc<Self>, DatabaseError> {
        let db = open()?;
        Ok(Arc::new(Self {
            name,
            path: path.into(),
            open,
            current: RwLock::new(Some(Arc::new(db))),
            healthy: AtomicBool::new(true),
            state: Mutex::default(),
            readers_wait: READERS_WAIT,
        }))
    }

    /// Returns the database's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Returns the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the open handle for one operation; drop it when done, or a
    /// reopen waits for it. Fails with `Unavailable` while there is none.
    pub fn get(&self) -> Result<Arc<Database>> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current
            .as_ref()
            .map(Arc::clone)
            .ok_or_else(|| self.unavailable())
    }

    /// Returns whether writes commit, or why they fail.
    pub fn health(&self) -> DbHealth {
        if self.healthy.load(Ordering::Acquire) {
            return DbHealth::Ok;
        }
        match &self.state().degraded {
            Some(reason) => DbHealth::Degraded(reason.clone()),
            None => DbHealth::Ok,
        }
    }

    /// The error a write answers while the database is degraded.
    pub(crate) fn unavailable(&self) -> Error {
        let reason = self.state().degraded.clone().unwrap_or_else(|| {
            format!(
                "{} is being reopened after an I/O failure",
                self.path.display()
            )
        });
        Error::new(ErrorKind::Unavailable, reason)
    }

    /// Records an I/O failure of the current handle and returns the error
    /// to answer; the writer reopens the file when the backoff allows.
    pub(crate) fn failed(&self, failure: IoFailure) -> Error {
        let mut state = self.state();
        let reason = match (failure, state.degraded.take()) {
            (IoFailure::Io(cause), _) => self.disk_failing(&cause),
            (IoFailure::Previous, Some(reason)) => reason,
            (IoFailure::Previous, None) => self.disk_failing("an earlier read or write failed"),
        };
        if self.healthy.swap(false, Ordering::AcqRel) {
            warn!(db = self.name, %reason, "a write failed; writes fail until the file is reopened and one commits");
        }
        state.degraded = Some(reason.clone());
        state.needs_reopen = true;
        state.schedule_retry();
        Error::new(ErrorKind::Unavailable, reason)
    }

    /// Records a commit: the database takes writes again.
    pub(crate) fn committed(&self) {
        if self.healthy.load(Ordering::Acquire) {
            return;
        }
        let mut state = self.state();
        *state = State::default();
        self.healthy.store(true, Ordering::Release);
        info!(
            db = self.name,
            "a write committed again; the database takes writes"
        );
    }

    /// Returns how long until the file should be reopened, if it should.
    pub(crate) fn reopen_due_in(&self) -> Option<Duration> {
        if self.healthy.load(Ordering::Acquire) {
            return None;
        }
        let state = self.state();
        let retry_at = state.retry_at.filter(|_| state.needs_reopen)?;
        Some(retry_at.saturating_duration_since(Instant::now()))
    }

    /// Returns the handle for a write transaction, reopening the file first
    /// when it failed and the backoff allows (writer thread only).
    pub(crate) fn writable(&self) -> Result<Arc<Database>> {
        match self.reopen_due_in() {
            Some(wait) if wait.is_zero() => self.reopen()?,
            Some(_) => return Err(self.unavailable()),
            None => {}
        }
        self.get()
    }

    /// Closes the failed handle once no reader holds it, and opens the file
    /// again (writer thread only).
    pub(crate) fn reopen(&self) -> Result<()> {
        let old = self
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(old) = old
            && let Err(old) = self.close_when_unused(old)
        {
            *self.current.write().unwrap_or_else(PoisonError::into_inner) = Some(old);
            warn!(
                db = self.name,
                "readers still hold the failed database; reopening later"
            );
            self.state().schedule_retry();
            return Err(self.unavailable());
        }
        match (self.open)() {
            Ok(db) => {
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(db));
                self.state().needs_reopen = false;
                info!(db = self.name, "reopened after an I/O failure");
                Ok(())
            }
            Err(error) => {
                let error = redb::Error::from(error);
                let reason = match io_failure(&error) {
                    Some(IoFailure::Io(cause)) => self.disk_failing(&cause),
                    _ => format!(
                        "{} could not be reopened after an I/O failure: {error}",
                        self.path.display()
                    ),
                };
                warn!(db = self.name, %reason, "reopening failed; retrying later");
                let mut state = self.state();
                state.degraded = Some(reason.clone());
                state.schedule_retry();
                Err(Error::new(ErrorKind::Unavailable, reason))
            }
        }
    }

    /// Drops `db` once it is the last clone, or hands it back after
    /// `readers_wait`.
    fn close_when_unused(&self, db: Arc<Database>) -> std::result::Result<(), Arc<Database>> {
        let deadline = Instant::now() + self.readers_wait;
        let mut db = db;
        loop {
            match Arc::try_unwrap(db) {
                Ok(last) => {
                    drop(last);
                    return Ok(());
                }
                Err(shared) if Instant::now() >= deadline => return Err(shared),
                Err(shared) => {
                    db = shared;
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        }
    }

    fn disk_failing(&self, cause: &str) -> String {
        format!(
            "the disk under {} is full or failing: {cause}",
            self.path.display()
        )
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    pub(crate) fn set_readers_wait(self: &mut Arc<Self>, wait: Duration) {
        Arc::get_mut(self)
            .expect("set before the database is shared")
            .readers_wait = wait;
    }
}

/// Returns the I/O failure in `error`, if it is one.
pub(crate) fn io_failure(error: &redb::Error) -> Option<IoFailure> {
    match error {
        redb::Error::Io(io) => Some(IoFailure::Io(io.to_string())),
        redb::Error::PreviousIo => Some(IoFailure::Previous),
        _ => None,
    }
}

/// Returns the I/O failure among the causes of a write's error: a write
/// maps its redb errors before the writer sees them.
pub(crate) fn io_failure_in(error: &Error) -> Option<IoFailure> {
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        if let Some(redb_error) = inner.downcast_ref::<redb::Error>() {
            return io_failure(redb_error);
        }
        match inner.downcast_ref::<StorageError>() {
            Some(StorageError::Io(io)) => return Some(IoFailure::Io(io.to_string())),
            Some(StorageError::PreviousIo) => return Some(IoFailure::Previous),
            _ => {}
        }
        cause = inner.source();
    }
    None
}
