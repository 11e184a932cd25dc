//! `copyhound eval` of `../shared/devset-hard` with the index and the queue on
//! a real Redis Cluster and the stores on the MongoDB-compatible server: the
//! same pair F1 as the embedded default, measured in the same run.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use copyhound_core::test_services;
use copyhound_index::testsuite::delete_prefix;

/// The benchmark beside the checkout; on CI it must be there.
fn devset_hard(test: &str) -> Option<PathBuf> {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/devset-hard");
    if set.join("truth.json").is_file() {
        return Some(set);
    }
    let on_ci = std::env::var("CI").is_ok_and(|value| value == "true");
    assert!(!on_ci, "{} is missing but CI=true", set.display());
    eprintln!("skipping {test}: no {}", set.display());
    None
}

/// Runs `eval` and returns the scorer's pair F1 and the prediction count.
fn eval_f1(set: &Path, configure: impl FnOnce(&mut Command)) -> (f64, usize) {
    let dir = tempfile::tempdir().unwrap();
    let predictions = dir.path().join("predictions.jsonl");
    let metrics = dir.path().join("metrics.json");
    let mut command = Command::cargo_bin("copyhound").unwrap();
    command.current_dir(dir.path()).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    command
        .args(["eval", "--set"])
        .arg(set)
        .arg("--out")
        .arg(&predictions)
        .arg("--metrics-json")
        .arg(&metrics);
    configure(&mut command);
    command
        .timeout(std::time::Duration::from_secs(900))
        .assert()
        .success();
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
    let count = std::fs::read_to_string(&predictions)
        .unwrap()
        .lines()
        .count();
    (metrics["pair"]["f1"].as_f64().unwrap(), count)
}

/// Deletes the eval's keys from the cluster when dropped.
struct EvalKeys(String);

impl Drop for EvalKeys {
    fn drop(&mut self) {
        // Index keys start with the prefix, queue keys with its hash tag.
        delete_prefix(&self.0, "copyhound-eval-");
        delete_prefix(&self.0, "{copyhound-eval-");
    }
}

#[test]
fn eval_on_a_redis_cluster_and_mongodb_has_the_embedded_f1() {
    const TEST: &str = "eval_on_a_redis_cluster_and_mongodb_has_the_embedded_f1";
    let (Some(set), Some(mongo), Some(cluster)) = (
        devset_hard(TEST),
        test_services::service_url(test_services::MONGODB_URL, TEST),
        test_services::service_url(test_services::REDIS_CLUSTER_URL, TEST),
    ) else {
        return;
    };
    let _keys = EvalKeys(cluster.clone());
    let (embedded, embedded_count) = eval_f1(&set, |_| {});
    let (distributed, distributed_count) = eval_f1(&set, |command| {
        command
            .env("COPYHOUND_STORE_URL", &mongo)
            .env("COPYHOUND_INDEX_URL", &cluster)
            .env("COPYHOUND_INDEX_CLUSTER", "true")
            .env("COPYHOUND_QUEUE_URL", &cluster)
            .env("COPYHOUND_QUEUE_CLUSTER", "true")
            .args(["--backends", "configured"]);
    });
    assert!(embedded >= 0.97, "embedded F1 {embedded}");
    assert_eq!(
        (distributed, distributed_count),
        (embedded, embedded_count),
        "the cluster run must find what the embedded run finds"
    );
}
