//! The binary as a user runs it: help, configuration checks and error reporting.
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

#[test]
fn help_explains_every_command() {
    let dir = tempfile::tempdir().unwrap();
    copyhound(dir.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("config").and(predicate::str::contains("embedded default")),
        );
}

#[test]
fn config_check_prints_the_embedded_default() {
    let dir = tempfile::tempdir().unwrap();
    copyhound(dir.path())
        .args(["config", "check"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("store: embedded")
                .and(predicate::str::contains("max_distance = 3")),
        );
}

#[test]
fn config_check_masks_secrets_and_honours_precedence() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("copyhound.toml"),
        "[index]\nmax_distance = 2\n",
    )
    .unwrap();
    copyhound(dir.path())
        .args(["config", "check"])
        .env("COPYHOUND_STORE_URL", "mongodb://u:hunter2@db:27017")
        .env("COPYHOUND_INDEX_MAX_DISTANCE", "4")
        .args(["--option", "index.max_distance=5"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("mongodb://u:****@db:27017")
                .and(predicate::str::contains("hunter2").not())
                .and(predicate::str::contains("max_distance = 5")),
        );
}

#[test]
fn a_bad_config_names_the_key_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[queue]\nredis_url = \"redis://x\"\n").unwrap();
    copyhound(dir.path())
        .args(["config", "check", "--config"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("redis_url").and(predicate::str::contains("bad.toml")));
}

#[test]
fn the_compose_file_only_sets_known_configuration_keys() {
    let compose = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docker-compose.yml"
    ))
    .unwrap();
    let variables: Vec<(String, String)> = compose
        .lines()
        .filter_map(|line| {
            line.trim()
                .strip_prefix("COPYHOUND_")
                .map(|rest| format!("COPYHOUND_{rest}"))
        })
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            let value = value.trim().trim_matches('"');
            // `${VAR:-default}` as compose reads it with VAR unset; `${VAR}` as set.
            let value = match value.strip_prefix("${") {
                Some(rest) => rest
                    .trim_end_matches('}')
                    .split_once(":-")
                    .map_or("secret", |(_, default)| default),
                None => value,
            };
            Some((name.trim().to_string(), value.to_string()))
        })
        .collect();
    assert!(variables.len() >= 8, "{variables:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut command = copyhound(dir.path());
    command.args(["config", "check"]);
    for (name, value) in &variables {
        command.env(name, value);
    }
    command
        .assert()
        .success()
        .stdout(predicate::str::contains("mongodb://mongo:27017"));
}

#[test]
fn health_checks_a_server_url_and_the_configured_backends() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1.
    copyhound(dir.path())
        .args(["health", "--url", "http://127.0.0.1:1/health"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("http: FAILED"));
    // The embedded default belongs to its process: named, not opened.
    copyhound(dir.path())
        .arg("health")
        .assert()
        .success()
        .stdout(predicate::str::contains("store: ok, embedded"));
    copyhound(dir.path())
        .arg("health")
        .env("COPYHOUND_QUEUE_URL", "redis://127.0.0.1:1")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("queue: FAILED"));

    const TEST: &str = "health_checks_a_server_url_and_the_configured_backends";
    let (Some(mongo), Some(redis)) = (
        copyhound_core::test_services::service_url(
            copyhound_core::test_services::MONGODB_URL,
            TEST,
        ),
        copyhound_core::test_services::service_url(copyhound_core::test_services::REDIS_URL, TEST),
    ) else {
        return;
    };
    copyhound(dir.path())
        .arg("health")
        .env("COPYHOUND_STORE_URL", &mongo)
        .env("COPYHOUND_INDEX_URL", &redis)
        .env("COPYHOUND_INDEX_PREFIX", "copyhound:test:health:index:")
        .env("COPYHOUND_QUEUE_URL", &redis)
        .env("COPYHOUND_QUEUE_PREFIX", "copyhound:test:health:queue:")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("store: ok, answers")
                .and(predicate::str::contains("index: ok, answers"))
                .and(predicate::str::contains("queue: ok, answers")),
        );
}

#[test]
fn compose_healthchecks_run_the_binary_and_need_no_secret() {
    let compose = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docker-compose.yml"
    ))
    .unwrap();
    // The image's /bin/sh is dash: no /dev/tcp.
    assert!(!compose.contains("/dev/tcp"));
    assert!(compose.contains("[\"CMD\", \"copyhound\", \"health\""));
    // `${VAR:?...}` would make every compose command, `down` included, fail without it.
    assert!(
        !compose.contains(":?"),
        "a variable the compose file requires"
    );
    let ignore =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.dockerignore"))
            .unwrap();
    assert!(ignore.lines().any(|line| line.trim() == "target"));
}

#[test]
fn a_bad_configuration_exits_2_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("copyhound.toml"),
        "[index]\nmax_distanse = 3\n",
    )
    .unwrap();
    for args in [
        vec!["config", "check"],
        vec!["sites", "list"],
        vec!["report", "--publisher", "p01", "--out", "r.html"],
        vec!["worker", "--until-idle"],
    ] {
        copyhound(dir.path())
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("max_distanse"));
    }
}

#[test]
fn a_report_for_an_unknown_publisher_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    copyhound(dir.path())
        .args([
            "--data-dir",
            "data",
            "report",
            "--publisher",
            "p01",
            "--out",
            "r.html",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown publisher `p01`"));
    assert!(!dir.path().join("r.html").try_exists().unwrap());
}

#[test]
fn a_commands_help_lists_the_global_options_apart() {
    let dir = tempfile::tempdir().unwrap();
    let output = copyhound(dir.path())
        .args(["crawl", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(output).unwrap();
    let global = help.find("Global options:").expect("a heading of its own");
    let own = help.find("--no-compare").unwrap();
    let data_dir = help.find("--data-dir").unwrap();
    assert!(own < global && global < data_dir, "{help}");
}

#[test]
fn serve_on_a_port_in_use_says_so_and_never_claims_to_serve() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    copyhound(dir.path())
        .args(["--data-dir", "data", "serve"])
        .env("COPYHOUND_SERVER_LISTEN", &address)
        .env("COPYHOUND_SERVER_ADMIN_KEY", "operator-key")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("serving").not())
        .stderr(predicate::str::contains(format!(
            "cannot listen on {address}"
        )));
}

#[test]
fn an_unreachable_mongodb_is_one_short_sentence_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let output = copyhound(dir.path())
        .args(["--data-dir", "data", "sites", "list"])
        .env(
            "COPYHOUND_STORE_URL",
            "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=500",
        )
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8(output).unwrap();
    assert!(stderr.contains("does not answer"), "{stderr}");
    assert!(stderr.contains("copyhound health"), "{stderr}");
    assert!(stderr.len() < 400, "{} chars: {stderr}", stderr.len());
}

#[test]
fn an_empty_site_list_says_so_and_points_at_the_demos_data() {
    let dir = tempfile::tempdir().unwrap();
    copyhound(dir.path())
        .args(["--data-dir", "data", "sites", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no sites").and(predicate::str::contains("demo").not()));
    std::fs::create_dir_all(dir.path().join("data/demo/data")).unwrap();
    copyhound(dir.path())
        .args(["--data-dir", "data", "sites", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "--data-dir data/demo/data sites list",
        ));
}

#[test]
fn the_demos_sites_are_its_publishers_and_its_evidence_package_holds_each_capture() {
    let root = tempfile::tempdir().unwrap();
    // Two levels down: the demo looks for `../shared/devset` and
    // `../../shared/devset` first, and a temporary directory's parent may
    // hold one; this test is about the bundled sample.
    let dir = root.path().join("a/b");
    std::fs::create_dir_all(&dir).unwrap();
    // It ends with how to browse its results in the console, and that works.
    copyhound(&dir).args(["demo"]).assert().success().stdout(
        predicate::str::contains("next: browse these results in the console")
            .and(predicate::str::contains(
                "copyhound-data/demo/data keys create sample --role admin",
            ))
            .and(predicate::str::contains("copyhound-data/demo/data serve"))
            .and(predicate::str::contains("http://127.0.0.1:8080/"))
            .and(predicate::str::contains("COPYHOUND_SERVER_ADMIN_KEY=")),
    );
    let key = copyhound(&dir)
        .args(["--data-dir", "copyhound-data/demo/data"])
        .args(["keys", "create", "sample", "--role", "admin"])
        .output()
        .unwrap();
    assert!(key.status.success(), "{key:?}");
    assert!(String::from_utf8_lossy(&key.stdout).starts_with("chk_"));
    // The demo's publisher watches the demo's sites (its users see them).
    copyhound(&dir)
        .args([
            "--data-dir",
            "copyhound-data/demo/data",
            "sites",
            "show",
            "site1",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"publisher_id\": \"sample\""));
    copyhound(&dir)
        .args([
            "--data-dir",
            "copyhound-data/demo/data",
            "report",
            "--publisher",
            "sample",
            "--format",
            "warc",
            "--out",
            "evidence/sample.warc",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 captures for 1 matches"));
    let warc = std::fs::read(dir.join("evidence/sample.warc")).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("evidence/sample.warc.manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["warc_bytes"], warc.len());
    let captures = manifest["captures"].as_array().unwrap();
    assert_eq!(captures.len(), 1);
    // Crawled by this version: the header fields as the site sent them.
    assert_eq!(captures[0]["headers"], "captured");
    assert_eq!(captures[0]["matches"].as_array().unwrap().len(), 1);
    let text = String::from_utf8_lossy(&warc);
    assert!(
        text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
        "{text}"
    );
    let payload = captures[0]["payload_sha256"].as_str().unwrap();
    assert!(text.contains(&format!("WARC-Payload-Digest: sha256:{payload}")));
    assert!(text.to_ascii_lowercase().contains("\r\netag: "), "{text}");

    // Takedown notices list confirmed matches by default; the demo's is unreviewed.
    let report = |extra: &[&str]| {
        let mut command = copyhound(&dir);
        command.args([
            "--data-dir",
            "copyhound-data/demo/data",
            "report",
            "--publisher",
            "sample",
        ]);
        command.args(extra);
        command
    };
    report(&["--format", "takedown", "--out", "notices/none.txt"])
        .assert()
        .success()
        .stdout(predicate::str::contains("review scope confirmed"));
    let none = std::fs::read_to_string(dir.join("notices/none.txt")).unwrap();
    assert!(none.contains("No page to list"), "{none}");
    report(&[
        "--format",
        "takedown",
        "--review",
        "confirmed-and-unreviewed",
        "--since",
        "2000-01-01",
        "--out",
        "notices/sample.txt",
    ])
    .assert()
    .success();
    let notices = std::fs::read_to_string(dir.join("notices/sample.txt")).unwrap();
    let url = captures[0]["url"].as_str().unwrap();
    assert!(notices.contains(url), "{url} in {notices}");
    assert!(notices.contains("Infringing pages") && notices.contains("侵权网页清单"));
    report(&[
        "--format",
        "takedown-email",
        "--review",
        "all",
        "--out",
        "notices/sample.mbox",
    ])
    .assert()
    .success();
    let mbox = std::fs::read_to_string(dir.join("notices/sample.mbox")).unwrap();
    assert!(mbox.starts_with("From copyhound "), "{mbox}");
    report(&[
        "--since",
        "2026-02-01",
        "--until",
        "2026-01-01",
        "--out",
        "notices/x.html",
    ])
    .assert()
    .failure()
    .stderr(predicate::str::contains("--until must come after --since"));
}

#[test]
fn works_list_and_sites_add_refuse_an_unknown_publisher_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let refused = || {
        predicate::str::contains("unknown publisher `N01`").and(predicate::str::contains(
            "copyhound publishers add N01 --name NAME",
        ))
    };
    copyhound(dir.path())
        .args(["--data-dir", "data", "works", "list", "--publisher", "N01"])
        .assert()
        .code(1)
        .stderr(refused());
    copyhound(dir.path())
        .args(["--data-dir", "data", "sites", "add", "--publisher", "N01"])
        .args(["--name", "mirror", "--seed", "http://www.example.com/"])
        .assert()
        .code(1)
        .stderr(refused());
    copyhound(dir.path())
        .args(["--data-dir", "data", "sites", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no sites"));
    copyhound(dir.path())
        .args(["--data-dir", "data", "publishers", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no publishers"));
}

/// Status and body of one `GET` with a bearer key (`Connection: close`).
fn get(port: u16, path: &str, key: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Authorization: Bearer {key}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).unwrap().parse().unwrap();
    (status, response)
}

#[test]
fn publishers_and_keys_made_on_the_command_line_work_at_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = copyhound(dir.path())
            .args(["--data-dir", "data"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    run(&["publishers", "add", "N01", "--name", "Acme Books"]);
    copyhound(dir.path())
        .args([
            "--data-dir",
            "data",
            "publishers",
            "add",
            "N01",
            "--name",
            "x",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("publisher N01 exists"));
    copyhound(dir.path())
        .args([
            "--data-dir",
            "data",
            "publishers",
            "add",
            "N02",
            "--name",
            " ",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`name` must not be empty"));
    assert!(run(&["publishers", "list"]).contains("N01  Acme Books  books"));
    // The key alone on stdout, printed once; the listing never shows a secret.
    let admin = run(&[
        "keys", "create", "N01", "--role", "admin", "--name", "Li Wei",
    ]);
    let admin = admin.trim().to_string();
    assert!(admin.starts_with("chk_key_"), "{admin}");
    let reviewer = run(&["keys", "create", "N01"]).trim().to_string();
    let listed = run(&["keys", "list", "N01"]);
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(
        listed.contains("admin") && listed.contains("Li Wei"),
        "{listed}"
    );
    let secret = |key: &str| key.rsplit_once('_').unwrap().1.to_string();
    assert!(!listed.contains(&secret(&admin)) && !listed.contains(&secret(&reviewer)));
    let reviewer_id = reviewer
        .trim_start_matches("chk_")
        .rsplit_once('_')
        .unwrap()
        .0;
    assert!(run(&["keys", "revoke", reviewer_id]).contains("revoked key"));
    assert!(run(&["keys", "list", "N01"]).contains("revoked"));
    assert!(run(&["publishers", "show", "N01"]).contains("2 keys (1 active)"));

    // The server takes the key the CLI minted and refuses the revoked one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin("copyhound"))
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .env_remove("COPYHOUND_SERVER_ADMIN_KEY")
        .args(["--data-dir", "data", "serve"])
        .env("COPYHOUND_SERVER_LISTEN", format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (status, body) = get(port, "/api/v1/admin/publishers/N01/keys", &admin);
    let revoked = get(port, "/api/v1/works", &reviewer).0;
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"Li Wei\"") && body.contains("\"revoked\":true"),
        "{body}"
    );
    assert_eq!(revoked, 401);
}

#[test]
fn book_sources_on_the_command_line_become_suggestions_to_accept_or_dismiss() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = copyhound(dir.path())
            .args(["--data-dir", "data"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    run(&["publishers", "add", "N01", "--name", "Acme Books"]);
    std::fs::write(
        dir.path().join("sources.json"),
        r#"[{"bookSourceName": "书屋", "bookSourceUrl": "https://shuwu.example", "searchUrl": "/s?q={{key}}"},
            {"bookSourceName": "顶点", "bookSourceUrl": "https://dingdian.example"},
            {"bookSourceName": "坏的", "bookSourceUrl": "not a url"}]"#,
    )
    .unwrap();
    let imported = run(&[
        "sites",
        "import-sources",
        "--publisher",
        "N01",
        "sources.json",
    ]);
    assert!(
        imported.contains("2 new suggested site(s), 0 updated, 1 entries skipped"),
        "{imported}"
    );
    let listed = run(&[
        "sites",
        "suggestions",
        "--publisher",
        "N01",
        "--status",
        "pending",
    ]);
    let ids: Vec<&str> = listed
        .lines()
        .map(|line| line.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(listed.contains("https://shuwu.example") && listed.contains("not checked yet"));
    let accepted = run(&["sites", "accept", "--publisher", "N01", ids[0]]);
    assert!(accepted.contains("first crawl queued"), "{accepted}");
    let dismissed = run(&["sites", "dismiss", "--publisher", "N01", ids[1]]);
    assert!(dismissed.starts_with("dismissed"), "{dismissed}");
    let sites = run(&["sites", "list"]);
    assert_eq!(sites.lines().count(), 1, "{sites}");
    copyhound(dir.path())
        .args([
            "--data-dir",
            "data",
            "sites",
            "import-sources",
            "--publisher",
            "N01",
            "missing.json",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot read missing.json"));
}
