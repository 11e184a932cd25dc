//! `copyhound sites add` refuses what `POST /api/v1/sites` refuses, and
//! `copyhound crawl` exits with the run's outcome: 3 when nothing was fetched.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use assert_cmd::Command;
use predicates::prelude::*;

fn copyhound(dir: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("copyhound").expect("binary builds");
    command.current_dir(dir).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    command
}

/// Adds the site `mirror` of publisher N01, created on the way.
fn add_site(dir: &std::path::Path, seed: &str) -> Command {
    let publisher_exists = copyhound(dir)
        .args(["publishers", "show", "N01"])
        .output()
        .unwrap()
        .status
        .success();
    if !publisher_exists {
        copyhound(dir)
            .args(["publishers", "add", "N01", "--name", "Novels"])
            .assert()
            .success();
    }
    let mut command = copyhound(dir);
    command.args([
        "sites",
        "add",
        "--publisher",
        "N01",
        "--name",
        "mirror",
        "--id",
        "mirror",
        "--seed",
        seed,
    ]);
    command
}

#[test]
fn sites_add_refuses_private_addresses_and_credentials() {
    let dir = tempfile::tempdir().unwrap();
    add_site(dir.path(), "http://169.254.169.254/latest/meta-data/")
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("seeds[0]")
                .and(predicate::str::contains("not a public address")),
        );
    add_site(dir.path(), "http://alice:hunter2@www.example.com/")
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("credentials").and(predicate::str::contains("hunter2").not()),
        );
    add_site(dir.path(), "http://www.example.com/")
        .args(["--schedule", "0 0 30 2 *"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("never fires"));
    // Loopback stays usable where the crawler is configured for it.
    add_site(dir.path(), "http://127.0.0.1:1/")
        .env("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true")
        .assert()
        .success();
}

#[test]
fn a_crawl_that_fetched_nothing_exits_non_zero_with_the_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    add_site(dir.path(), &format!("http://127.0.0.1:{port}/"))
        .env("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true")
        .assert()
        .success();
    copyhound(dir.path())
        .args(["crawl", "mirror", "--no-compare"])
        .env("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true")
        .assert()
        .code(3)
        .stdout(
            predicate::str::contains("failed").and(predicate::str::contains("robots_unreachable")),
        )
        .stderr(predicate::str::contains("connection refused"));
}
