use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use super::*;

const COUNTS: TableDefinition<'static, &'static str, u64> = TableDefinition::new("counts");

fn map_error(error: redb::Error) -> Error {
    Error::with_source(ErrorKind::Unavailable, format!("test db: {error}"), error)
}

fn open(dir: &tempfile::TempDir) -> (Arc<Database>, GroupWriter) {
    let db = Arc::new(Database::create(dir.path().join("test.redb")).unwrap());
    let writer = GroupWriter::start("test", Arc::clone(&db), map_error, Stage::StoreWrite).unwrap();
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

fn count(db: &Database, key: &str) -> u64 {
    let txn = db.begin_read().unwrap();
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
    // Let the nine queue up behind the held write.
    std::thread::sleep(std::time::Duration::from_millis(200));
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
    std::thread::sleep(std::time::Duration::from_millis(200));
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
