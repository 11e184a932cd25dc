//! `copyhound evidence bundle` against a time-stamping authority served over
//! HTTP on 127.0.0.1 (answering with `openssl ts -reply`, a CA made at test
//! time), then `copyhound evidence verify`: the bundle verifies, and a
//! changed byte fails it with what failed.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::Arc;

use assert_cmd::Command;
use axum::body::Bytes;
use copyhound_report::evidence::test_tsa::OpensslTsa;
use predicates::prelude::*;

fn copyhound(dir: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("copyhound").expect("binary builds");
    command.current_dir(dir).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    command
}

/// Serves `tsa` at `http://127.0.0.1:PORT/tsa` from a thread of its own.
fn serve(tsa: OpensslTsa) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let tsa = Arc::new(tsa);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().route(
                "/tsa",
                axum::routing::post(move |body: Bytes| {
                    let tsa = Arc::clone(&tsa);
                    async move {
                        let reply = tokio::task::spawn_blocking(move || tsa.reply(&body))
                            .await
                            .unwrap()
                            .unwrap();
                        ([("content-type", "application/timestamp-reply")], reply)
                    }
                }),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    port
}

#[test]
fn a_bundle_from_the_demo_verifies_and_a_changed_byte_fails_it() {
    let root = tempfile::tempdir().unwrap();
    let tsa_dir = root.path().join("tsa");
    std::fs::create_dir_all(&tsa_dir).unwrap();
    let Some(tsa) = OpensslTsa::new(&tsa_dir) else {
        return;
    };
    let ca = tsa.ca_pem_path();
    let port = serve(tsa);
    let dir = root.path().join("a/b");
    std::fs::create_dir_all(&dir).unwrap();
    copyhound(&dir).args(["demo"]).assert().success();
    let data = ["--data-dir", "copyhound-data/demo/data"];
    // Without a TSA the command names the key to set.
    copyhound(&dir)
        .args(data)
        .args([
            "evidence",
            "bundle",
            "--publisher",
            "sample",
            "--out",
            "e.tar",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("evidence.tsa_url"));
    copyhound(&dir)
        .args(data)
        .env(
            "COPYHOUND_EVIDENCE_TSA_URL",
            format!("http://127.0.0.1:{port}/tsa"),
        )
        .env("COPYHOUND_EVIDENCE_TSA_CERTIFICATES", &ca)
        .env("COPYHOUND_CRAWLER_CHROMIUM", "/nonexistent/chromium")
        .args([
            "evidence",
            "bundle",
            "--publisher",
            "sample",
            "--out",
            "e.tar",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 matches").and(predicate::str::contains("no browser")));
    // Verifying needs no configuration, not even a readable one.
    copyhound(&dir)
        .env("COPYHOUND_CONFIG", "/nonexistent/copyhound.toml")
        .args(["evidence", "verify", "e.tar"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("verified: e.tar")
                .and(predicate::str::contains("evidence.warc"))
                .and(predicate::str::contains("CN=CopyHound Test TSA")),
        );
    let bundle = std::fs::read(dir.join("e.tar")).unwrap();
    let warc_at = bundle.windows(9).position(|w| w == b"WARC/1.1\r").unwrap();
    let mut changed = bundle.clone();
    changed[warc_at + 200] ^= 0x01;
    std::fs::write(dir.join("changed.tar"), &changed).unwrap();
    copyhound(&dir)
        .args(["evidence", "verify", "changed.tar"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "verification failed: evidence.warc: its SHA-256 is not the manifest's",
        ));
}
