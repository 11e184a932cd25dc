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
