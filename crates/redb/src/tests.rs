use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::*;

const COUNTS: TableDefinition<'static, &'static str, u64> = TableDefinition::new("counts");

fn map_error(error: redb::Error) -> Error {
    Error::with_source(ErrorKind::Unavailable, format!("test db: {error}"), error)
}

fn open(dir: &tempfile::TempDir) -> (Arc<SharedDb>, GroupWriter) {
    let db = SharedDb::create("test", dir.path().join("test.redb")).unwrap();
    let writer = GroupWriter::start(Arc::clone(&db), map_error, Stage::StoreWrite).unwrap();
    (db, writer)
}

/// Adds one to `key` and returns the new count.
fn bump(key: &'static str) -> impl Fn(&WriteTransaction) -> Result<u64> + Send + 'static {
    move |txn| {
        let mut table = txn.open_table(COUNTS).map_err(|e| map_error(e.into()))?;
        let next = table
            .get(key)
            .map_err(|e| map_error(e.into()))?
            .map_or(0, |v| v.value())
            + 1;
        table.insert(key, next).map_err(|e| map_error(e.into()))?;
        Ok(next)
    }
}

fn count(db: &SharedDb, key: &str) -> u64 {
    let txn = db.get().unwrap().begin_read().unwrap();
    match txn.open_table(COUNTS) {
        Ok(table) => table.get(key).unwrap().map_or(0, |v| v.value()),
        Err(_) => 0,
    }
}

/// Holds the writer in its first job until released, so what is submitted
/// meanwhile is committed as one batch.
fn hold(writer: &GroupWriter) -> (std_mpsc::Sender<()>, std::thread::JoinHandle<Result<u64>>) {
    let (release, wait) = std_mpsc::channel::<()>();
    let (started, on_start) = std_mpsc::channel::<()>();
    let wait = Arc::new(Mutex::new(wait));
    let first = {
        let writer = writer.clone();
        std::thread::spawn(move || {
            writer.write_blocking(move |txn| {
                let _ = started.send(());
                let _ = wait.lock().unwrap().recv();
                bump("held")(txn)
            })
        })
    };
    on_start.recv().unwrap();
    (release, first)
}

/// Waits until `count` writes (the held one included) are in the writer's
/// channel: what was submitted meanwhile is queued behind the held write.
fn wait_submitted(writer: &GroupWriter, count: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while writer.submitted() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of {count} writes were submitted",
            writer.submitted()
        );
        std::thread::yield_now();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_all_land_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = open(&dir);
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let writer = writer.clone();
        tasks.push(tokio::spawn(async move { writer.write(bump("n")).await }));
    }
    let mut seen = Vec::new();
    for task in tasks {
        seen.push(task.await.unwrap().unwrap());
    }
    seen.sort_unstable();
    assert_eq!(seen, (1..=200).collect::<Vec<_>>());
    assert_eq!(count(&db, "n"), 200);
}

#[test]
fn a_failing_write_leaves_nothing_and_takes_no_other_write_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = open(&dir);
    let (release, first) = hold(&writer);
    let mut replies = Vec::new();
    for i in 0..9 {
        let writer = writer.clone();
        replies.push(std::thread::spawn(move || {
            if i == 4 {
                // Writes, then fails: its bump must vanish.
                writer.write_blocking(|txn| {
                    bump("n")(txn)?;
                    Err::<u64, _>(Error::new(ErrorKind::Conflict, "refused"))
                })
            } else {
                writer.write_blocking(bump("n"))
            }
        }));
    }
    // The nine queue up behind the held write.
    wait_submitted(&writer, 10);
    release.send(()).unwrap();
    assert_eq!(first.join().unwrap().unwrap(), 1);
    let mut counts = Vec::new();
    let mut refused = 0;
    for reply in replies {
        match reply.join().unwrap() {
            Ok(n) => counts.push(n),
            Err(error) => {
                assert_eq!(error.kind(), ErrorKind::Conflict);
                refused += 1;
            }
        }
    }
    counts.sort_unstable();
    assert_eq!(refused, 1);
    // Every reply is what its write left, as if each had committed alone.
    assert_eq!(counts, (1..=8).collect::<Vec<_>>());
    assert_eq!(count(&db, "n"), 8);
    assert_eq!(count(&db, "held"), 1);
}

#[test]
fn a_panicking_write_is_an_error_and_the_writer_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = open(&dir);
    let (release, first) = hold(&writer);
    let panicking = {
        let writer = writer.clone();
        std::thread::spawn(move || {
            writer.write_blocking(|txn| -> Result<u64> {
                bump("n")(txn)?;
                panic!("a bug in a write")
            })
        })
    };
    let after = {
        let writer = writer.clone();
        std::thread::spawn(move || writer.write_blocking(bump("n")))
    };
    wait_submitted(&writer, 3);
    release.send(()).unwrap();
    first.join().unwrap().unwrap();
    let error = panicking.join().unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Internal);
    assert_eq!(after.join().unwrap().unwrap(), 1);
    assert_eq!(writer.write_blocking(bump("n")).unwrap(), 2);
    assert_eq!(count(&db, "n"), 2);
}

#[test]
fn dropping_the_writer_closes_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = open(&dir);
    writer.write_blocking(bump("n")).unwrap();
    drop(writer);
    drop(db);
    // Still open somewhere would be `DatabaseAlreadyOpen`.
    let (db, writer) = open(&dir);
    assert_eq!(count(&db, "n"), 1);
    assert_eq!(writer.write_blocking(bump("n")).unwrap(), 2);
}

fn open_syncing_after(dir: &tempfile::TempDir, after: Duration) -> (Arc<SharedDb>, GroupWriter) {
    let db = SharedDb::create("test", dir.path().join("test.redb")).unwrap();
    let writer =
        GroupWriter::start_syncing_after(Arc::clone(&db), map_error, Stage::StoreWrite, after)
            .unwrap();
    (db, writer)
}

#[tokio::test]
async fn a_lazy_write_is_visible_at_once_and_synced_when_the_writer_stops() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = open_syncing_after(&dir, Duration::from_secs(3600));
    writer.write(bump("durable")).await.unwrap();
    assert_eq!(writer.syncs(), 1);
    for expected in 1..=3 {
        assert_eq!(writer.write_lazy(bump("lazy")).await.unwrap(), expected);
        assert_eq!(count(&db, "lazy"), expected);
    }
    // Not synced by their own commits, nor yet by the idle timer.
    assert_eq!(writer.syncs(), 1);
    let probe = writer.clone();
    drop(writer);
    drop(db);
    // The writer still runs (a clone is alive): nothing is synced yet.
    assert_eq!(probe.syncs(), 1);
    let syncs = Arc::clone(&probe.inner.syncs);
    drop(probe);
    // Stopping synced them; the reopened file holds them.
    assert_eq!(syncs.load(Ordering::Relaxed), 2);
    let (db, _writer) = open(&dir);
    assert_eq!(count(&db, "lazy"), 3);
    assert_eq!(count(&db, "durable"), 1);
}

#[tokio::test]
async fn an_idle_writer_syncs_its_lazy_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, writer) = open_syncing_after(&dir, Duration::from_millis(20));
    writer.write_lazy(bump("lazy")).await.unwrap();
    // The idle timer (20 ms) is the behaviour under test: wait it out.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while writer.syncs() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(writer.syncs(), 1);
    // Synced once: an idle writer with nothing unsynced does not sync again.
    // Idleness is the behaviour under test: ten idle periods pass.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(writer.syncs(), 1);
}

#[test]
fn a_lazy_write_batched_with_a_durable_one_is_synced_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = open_syncing_after(&dir, Duration::from_secs(3600));
    let (release, first) = hold(&writer);
    let lazy = {
        let writer = writer.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime.block_on(writer.write_lazy(bump("lazy")))
        })
    };
    let durable = {
        let writer = writer.clone();
        std::thread::spawn(move || writer.write_blocking(bump("durable")))
    };
    wait_submitted(&writer, 3);
    release.send(()).unwrap();
    first.join().unwrap().unwrap();
    assert_eq!(lazy.join().unwrap().unwrap(), 1);
    assert_eq!(durable.join().unwrap().unwrap(), 1);
    // The held write's commit and the batch's: both synced, nothing left over.
    assert_eq!(writer.syncs(), 2);
    let syncs = Arc::clone(&writer.inner.syncs);
    drop(writer);
    drop(db);
    assert_eq!(syncs.load(Ordering::Relaxed), 2);
}
