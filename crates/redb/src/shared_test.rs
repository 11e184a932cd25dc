//! A full disk: writes fail with a clear `Unavailable`, the database reports
//! itself degraded, and writes resume once space returns, without a restart.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use super::*;
use crate::fault::FillableDisk;

const COUNTS: TableDefinition<'static, &'static str, u64> = TableDefinition::new("counts");
const BLOBS: TableDefinition<'static, u64, &'static [u8]> = TableDefinition::new("blobs");

fn map_error(error: redb::Error) -> Error {
    Error::with_source(ErrorKind::Internal, format!("test db: {error}"), error)
}

fn bump(txn: &WriteTransaction) -> Result<u64> {
    let mut table = txn.open_table(COUNTS).map_err(|e| map_error(e.into()))?;
    let next = table
        .get("n")
        .map_err(|e| map_error(e.into()))?
        .map_or(0, |v| v.value())
        + 1;
    table.insert("n", next).map_err(|e| map_error(e.into()))?;
    Ok(next)
}

fn count(db: &SharedDb) -> u64 {
    let handle = db.get().unwrap();
    let txn = handle.begin_read().unwrap();
    let table = txn.open_table(COUNTS).unwrap();
    table.get("n").unwrap().map_or(0, |v| v.value())
}

/// Writes until one commits, for up to 20 s (the reopen backs off).
fn write_until_it_commits(writer: &GroupWriter) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match writer.write_blocking(bump) {
            Ok(value) => return value,
            Err(error) if Instant::now() < deadline => {
                assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
                // The reopen's backoff is real time: try again shortly.
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(error) => panic!("writes did not resume: {error}"),
        }
    }
}

fn assert_disk_error(error: &Error, path: &Path) {
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let expected = format!("the disk under {} is full or failing: ", path.display());
    assert!(error.message().starts_with(&expected), "{error}");
}

#[test]
fn a_full_disk_fails_writes_until_space_returns_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.redb");
    let disk = FillableDisk::new();
    let db = SharedDb::open_with("test", &path, disk.opener(&path)).unwrap();
    let writer = GroupWriter::start(Arc::clone(&db), map_error, Stage::StoreWrite).unwrap();
    assert_eq!(writer.write_blocking(bump).unwrap(), 1);
    assert_eq!(db.health(), DbHealth::Ok);

    disk.set_full(true);
    for _ in 0..3 {
        let error = writer.write_blocking(bump).unwrap_err();
        assert_disk_error(&error, &path);
    }
    let DbHealth::Degraded(reason) = db.health() else {
        panic!("a full disk must degrade the database");
    };
    assert!(reason.contains("is full or failing"), "{reason}");

    disk.set_full(false);
    // The write before the disk filled is still there.
    assert_eq!(write_until_it_commits(&writer), 2);
    assert_eq!(db.health(), DbHealth::Ok);
    assert_eq!(count(&db), 2);
    assert_eq!(writer.write_blocking(bump).unwrap(), 3);
}

#[test]
fn a_reopen_waits_for_the_readers_of_the_failed_handle() {
    let dir = tempfile::tempdir().unwrap();
    let db = SharedDb::create("test", dir.path().join("test.redb")).unwrap();
    let reader = db.get().unwrap();
    let old = Arc::as_ptr(&reader);
    let releaser = std::thread::spawn(move || {
        // The reader holds on for a while (the wait is the behaviour under test).
        std::thread::sleep(Duration::from_millis(200));
        drop(reader);
    });
    // Without the wait the open would find the file locked.
    db.reopen().unwrap();
    releaser.join().unwrap();
    assert_ne!(Arc::as_ptr(&db.get().unwrap()), old);
}

#[test]
fn a_reader_that_holds_on_keeps_the_old_handle_and_the_reopen_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = SharedDb::create("test", dir.path().join("test.redb")).unwrap();
    db.set_readers_wait(Duration::from_millis(50));
    let reader = db.get().unwrap();
    db.failed(shared::IoFailure::Io("injected".into()));
    let error = db.reopen().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable);
    // Reads go on from the old handle meanwhile.
    assert!(Arc::ptr_eq(&db.get().unwrap(), &reader));
    assert!(db.reopen_due_in().is_some());
    drop(reader);
    db.reopen().unwrap();
    assert_eq!(db.reopen_due_in(), None);
    // Reopened, but degraded until a write commits.
    assert!(matches!(db.health(), DbHealth::Degraded(_)));
}

/// A tmpfs of `size`, unmounted on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts it, or returns `None` where mounting is not allowed (not root).
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        mounted.then_some(Self { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the disk under `path` with a file of zeros.
fn fill(path: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 16 * 1024];
    while file
        .write_all(&chunk)
        .and_then(|()| file.sync_data())
        .is_ok()
    {}
}

#[test]
fn a_real_full_disk_fails_writes_until_a_file_is_deleted() {
    let Some(disk) = SmallDisk::mount("4m") else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let path = disk.path("test.redb");
    let db = SharedDb::create("test", &path).unwrap();
    let writer = GroupWriter::start(Arc::clone(&db), map_error, Stage::StoreWrite).unwrap();
    assert_eq!(writer.write_blocking(bump).unwrap(), 1);
    fill(&disk.path("filler"));

    let blob = |key: u64| {
        move |txn: &WriteTransaction| -> Result<()> {
            let mut table = txn.open_table(BLOBS).map_err(|e| map_error(e.into()))?;
            let value = vec![7u8; 256 * 1024];
            table
                .insert(key, value.as_slice())
                .map_err(|e| map_error(e.into()))?;
            Ok(())
        }
    };
    let error = (0..64)
        .find_map(|key| writer.write_blocking(blob(key)).err())
        .expect("a write fails on a full disk");
    assert_disk_error(&error, &path);
    assert!(matches!(db.health(), DbHealth::Degraded(_)));

    std::fs::remove_file(disk.path("filler")).unwrap();
    assert_eq!(write_until_it_commits(&writer), 2);
    assert_eq!(db.health(), DbHealth::Ok);
    writer.write_blocking(blob(1000)).unwrap();
    drop(writer);
    drop(db);
}
