//! A disk that fills on demand, for the tests of every embedded database.
//!
//! A real full disk needs a small mount (root) or hours of writing; this
//! backend wraps redb's file backend and fails writes with `StorageFull`
//! while its switch is on, so a test can fill the disk, watch writes fail,
//! free it and watch them resume. It always builds (the stores' tests use it
//! without a feature) and costs nothing unless opened.

use std::fs::OpenOptions;
use std::io;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use redb::backends::FileBackend;
use redb::{BackendError, Database, StorageBackend};

use crate::Opener;

/// The switch of a disk that fills on demand; clones share it.
#[derive(Debug, Clone, Default)]
pub struct FillableDisk {
    full: Arc<AtomicBool>,
}

impl FillableDisk {
    /// Returns an empty disk.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fills the disk (`true`): every write fails, or frees it.
    pub fn set_full(&self, full: bool) {
        self.full.store(full, Ordering::SeqCst);
    }

    /// Returns an opener of `path` on this disk, for [`crate::SharedDb::open_with`].
    pub fn opener(&self, path: impl Into<PathBuf>) -> Opener {
        let path = path.into();
        let full = Arc::clone(&self.full);
        Box::new(move || {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            let backend = FillableBackend {
                inner: FileBackend::new(file)?,
                full: Arc::clone(&full),
            };
            Database::builder().create_with_backend(backend)
        })
    }
}

/// redb's file backend, whose writes fail while the disk is full.
#[derive(Debug)]
struct FillableBackend {
    inner: FileBackend,
    full: Arc<AtomicBool>,
}

impl FillableBackend {
    fn check_space(&self) -> io::Result<()> {
        if self.full.load(Ordering::SeqCst) {
            return Err(io::Error::from(io::ErrorKind::StorageFull));
        }
        Ok(())
    }
}

impl StorageBackend for FillableBackend {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.inner.read(offset, out)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        // Shrinking frees space; growing needs it.
        if len > self.inner.len()? {
            self.check_space()?;
        }
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.check_space()?;
        self.inner.write(offset, data)
    }

    fn close(&self) -> io::Result<()> {
        self.inner.close()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_range(start, end)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        self.inner.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(start, end)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(start, end)
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.query_lock_range(start, end)
    }
}
