//! A process killed with SIGKILL mid-write leaves every committed write intact.
//! The test re-runs this test binary as a child whose concurrent writers
//! write in a loop and print each acknowledged number, kills it, reopens the
//! store and checks every number.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use copyhound_core::ports::PageRequest;

use super::fixtures;
use crate::LocalStore;
use copyhound_core::ports::PublisherStore;

const CHILD_DIR_ENV: &str = "COPYHOUND_STORE_KILL_CHILD_DIR";
/// Concurrent writers in the child.
const WRITERS: u64 = 4;

/// The child: only does something when spawned by the test below.
#[test]
fn kill_child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = LocalStore::open(&dir).unwrap();
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let store = store.clone();
                tokio::spawn(async move {
                    for round in 0_u64.. {
                        let number = round * WRITERS + writer;
                        store
                            .put_publisher(&fixtures::publisher(&format!("pub_{number:08}")))
                            .await
                            .unwrap();
                        println!("committed {number}");
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
    });
}

#[test]
fn committed_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::kill::kill_child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut committed = Vec::new();
    while committed.len() < 200 && Instant::now() < deadline {
        let Some(line) = lines.next() else { break };
        if let Some(number) = line.unwrap().strip_prefix("committed ") {
            committed.push(number.parse::<u64>().unwrap());
        }
    }
    child.kill().unwrap(); // SIGKILL on unix
    child.wait().unwrap();
    assert!(
        committed.len() >= 200,
        "the child committed only {} writes",
        committed.len()
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = LocalStore::open(dir.path()).unwrap();
        for number in &committed {
            store
                .get_publisher(&format!("pub_{number:08}").parse().unwrap())
                .await
                .unwrap();
        }
        let all = store
            .list_publishers(&PageRequest {
                after: None,
                limit: 1000,
            })
            .await
            .unwrap();
        assert!(all.items.len() >= committed.len());
    });
}

const EDIT_CHILD_DIR_ENV: &str = "COPYHOUND_STORE_KILL_EDIT_DIR";

/// Version `v` of work `w1`: its title names the version, and so do its
/// chapters, whose ids differ between even and odd versions.
fn edition(
    v: u64,
) -> (
    copyhound_core::model::Work,
    Vec<copyhound_core::model::Chapter>,
) {
    let mut work = fixtures::work("pub_a", "w1");
    work.title = format!("v{v}");
    let ids: &[u32] = if v.is_multiple_of(2) {
        &[1, 2, 3]
    } else {
        &[1, 4]
    };
    let chapters = ids
        .iter()
        .map(|&index| {
            let mut chapter = fixtures::chapter("w1", index);
            chapter.title = format!("v{v}");
            chapter
        })
        .collect();
    (work, chapters)
}

/// The child: edits one work back and forth between versions with other
/// chapter ids, printing each version once it is committed.
#[test]
fn kill_child_editor() {
    use copyhound_core::ports::WorkStore;
    let Ok(dir) = std::env::var(EDIT_CHILD_DIR_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = LocalStore::open(&dir).unwrap();
        let start = match store.get_work_any(&"w1".parse().unwrap()).await {
            Ok(work) => work.title.trim_start_matches('v').parse::<u64>().unwrap() + 1,
            Err(_) => 0,
        };
        for v in start.. {
            let (work, chapters) = edition(v);
            store.replace_work(&work, &chapters).await.unwrap();
            println!("committed {v}");
        }
    });
}

/// An edit that drops and adds chapters, killed at any moment, leaves the
/// old version or the new one: never no work, never a mix of chapters.
#[test]
fn an_edit_killed_at_any_moment_leaves_one_whole_version() {
    use copyhound_core::ports::WorkStore;
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Kills after a varying number of committed edits, a varying time into the next.
    for (round, edits) in [3_usize, 17, 40, 9, 61, 5, 23, 12, 31, 7]
        .into_iter()
        .enumerate()
    {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::kill::kill_child_editor",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(EDIT_CHILD_DIR_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = None;
        let mut seen = 0;
        while seen < edits && Instant::now() < deadline {
            let Some(line) = lines.next() else { break };
            if let Some(v) = line.unwrap().strip_prefix("committed ") {
                last = Some(v.parse::<u64>().unwrap());
                seen += 1;
            }
        }
        std::thread::sleep(Duration::from_micros(173 * (round as u64 * 7 % 11)));
        child.kill().unwrap();
        child.wait().unwrap();
        let last = last.unwrap_or_else(|| panic!("round {round}: the child committed nothing"));
        runtime.block_on(async {
            let store = LocalStore::open(dir.path()).unwrap();
            let work = store
                .get_work_any(&"w1".parse().unwrap())
                .await
                .unwrap_or_else(|error| panic!("round {round}: the work is gone: {error}"));
            let v: u64 = work.title.trim_start_matches('v').parse().unwrap();
            assert!(v >= last, "round {round}: committed v{last}, found v{v}");
            let (_, expected) = edition(v);
            let stored = store.list_chapters(&work.id).await.unwrap();
            let key = |chapters: &[copyhound_core::model::Chapter]| {
                chapters
                    .iter()
                    .map(|chapter| (chapter.id.to_string(), chapter.title.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(key(&stored), key(&expected), "round {round}: v{v} whole");
        });
    }
}
