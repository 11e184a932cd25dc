//! `copyhound sites recipients SITE`: who to notify, looked up by RDAP against
//! a local RDAP server (the bootstrap files point every registry at it).
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use assert_cmd::Command;
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use predicates::prelude::*;

const HOSTING: &str = include_str!("../../crawler/tests/fixtures/rdap/ip_hosting.json");

fn copyhound(dir: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("copyhound").expect("binary builds");
    command.current_dir(dir).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    command.env("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true");
    command
}

/// Serves `ip/127.0.0.1` on a loopback port in a thread of its own; returns its base URL.
fn start_rdap_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let router = Router::new().route(
                "/ip/127.0.0.1",
                axum::routing::get(|| async {
                    ([(header::CONTENT_TYPE, "application/rdap+json")], HOSTING).into_response()
                }),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, router).await.unwrap();
        });
    });
    base
}

#[test]
fn sites_recipients_prints_who_to_notify() {
    let dir = tempfile::tempdir().unwrap();
    copyhound(dir.path())
        .args(["publishers", "add", "N01", "--name", "Novels"])
        .assert()
        .success();
    copyhound(dir.path())
        .args([
            "sites",
            "add",
            "--publisher",
            "N01",
            "--name",
            "mirror",
            "--id",
            "mirror",
        ])
        .args(["--seed", "http://127.0.0.1:9/book/"])
        .assert()
        .success();
    copyhound(dir.path())
        .args(["sites", "recipients", "mirror"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("rdap.bootstrap"));

    let bootstrap = dir.path().join("rdap");
    std::fs::create_dir_all(&bootstrap).unwrap();
    let server = start_rdap_server();
    let ipv4 = format!(r#"{{"services": [[["127.0.0.0/8"], ["{server}"]]]}}"#);
    std::fs::write(bootstrap.join("ipv4.json"), ipv4).unwrap();
    std::fs::write(bootstrap.join("dns.json"), r#"{"services": []}"#).unwrap();
    std::fs::write(bootstrap.join("ipv6.json"), r#"{"services": []}"#).unwrap();
    let bootstrap = bootstrap.display().to_string();
    copyhound(dir.path())
        .env("COPYHOUND_RDAP_BOOTSTRAP", &bootstrap)
        .args(["sites", "recipients", "mirror"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("send to: abuse@hosting.example")
                .and(predicate::str::contains(
                    "hosting: 127.0.0.1 EXAMPLE-HOSTING-NET 45.77.0.0/16 (Example Hosting Ltd)",
                ))
                .and(predicate::str::contains(format!(
                    "asked: {server}ip/127.0.0.1"
                ))),
        );
    let output = copyhound(dir.path())
        .env("COPYHOUND_RDAP_BOOTSTRAP", &bootstrap)
        .args(["sites", "recipients", "mirror", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let recipients: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        recipients["hosting"]["abuse_email"],
        "abuse@hosting.example"
    );
    assert_eq!(recipients["registrar"], serde_json::Value::Null);
}
