//! `copyhound bench latency` on a tiny farm (6 sites, 3 works, a 90 s timed
//! phase, copies within 40 s of a release) on the embedded default: the run
//! ends with its one line, copies are alerted at the webhook, and the
//! politeness accounting counts the hosts the product fetched.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::collections::BTreeSet;

use assert_cmd::Command;

/// The number just after `label` in `line` (`missed 3 of 12`: "missed " -> 3).
fn number_after(line: &str, label: &str) -> f64 {
    let at = line
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {line:?}"))
        + label.len();
    line[at..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in {line:?}"))
}

#[test]
fn a_tiny_farm_is_alerted_and_its_hosts_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.tsv");
    let mut command = Command::cargo_bin("copyhound").expect("binary builds");
    command.current_dir(dir.path()).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    let output = command
        .args([
            "bench",
            "latency",
            "--sites",
            "6",
            "--works",
            "3",
            "--minutes",
            "1.5",
            "--max-delay-seconds",
            "40",
            "--seed",
            "36",
            "--requests-log",
        ])
        .arg(&log)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("latency: p50 ")
            && last.contains(" s, p95 ")
            && last.contains(", politeness violations ")
            && last.contains(", fetches per alert "),
        "the final line: {last:?}\n{stdout}"
    );
    // Copies appeared in the timed phase and at least one was alerted.
    let missed = number_after(last, "missed ");
    let copies = number_after(last, " of ");
    assert!(copies >= 1.0, "{stdout}");
    assert!(missed < copies, "no copy was alerted:\n{stdout}\n{stderr}");
    // The copies on the sites before the timed phase were alerted too.
    let initial = stdout
        .lines()
        .find(|line| line.starts_with("copies: "))
        .unwrap();
    assert!(number_after(initial, "(not timed, ") >= 1.0, "{stdout}");

    // Every host of the request log is counted as fetched, and the product
    // fetched every site (each had its first crawl).
    let hosts: BTreeSet<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|line| line.split('\t').nth(1).map(str::to_string))
        .collect();
    assert_eq!(hosts.len(), 6, "{hosts:?}");
    assert!(hosts.iter().all(|host| host.starts_with("127.0.0.")));
    let politeness = stdout
        .lines()
        .find(|line| line.starts_with("politeness: "))
        .unwrap();
    assert_eq!(
        number_after(politeness, " violation(s) on "),
        6.0,
        "{politeness}"
    );
}
