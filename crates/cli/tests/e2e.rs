//! End to end through the binary, on both backends: a small benchmark folder
//! (one registered chapter; a pirated copy, a page quoting it briefly, and a
//! copy behind robots.txt) is crawled on loopback by `copyhound eval`, and the
//! predictions must flag exactly the pirated copy.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::path::Path;

use assert_cmd::Command;
use copyhound_core::test_services;

mod support;

use support::{CHAPTER, PIRATED, filler, page};

fn write_set(dir: &Path) {
    let chapters = dir.join("works/w1/chapters");
    std::fs::create_dir_all(&chapters).unwrap();
    std::fs::write(chapters.join("c1.txt"), CHAPTER).unwrap();
    let meta = serde_json::json!({"work_id": "w1", "title": "二心集", "author": "鲁迅", "publisher_id": "N01",
        "type": "news", "language": "zh", "n_chapters": 1,
        "chapters": [{"chapter_id": "c1", "index": 1, "title": "小引", "file": "chapters/c1.txt", "chars": 858}]});
    std::fs::write(dir.join("works/w1/meta.json"), meta.to_string()).unwrap();
    let site = dir.join("pages/site1");
    std::fs::create_dir_all(site.join("private")).unwrap();
    std::fs::write(
        site.join("robots.txt"),
        "User-agent: *\nDisallow: /private/\n",
    )
    .unwrap();
    std::fs::write(site.join("p1.html"), PIRATED).unwrap();
    let quote: String = CHAPTER.chars().skip(100).take(80).collect();
    let review = format!("{}\n书评：{quote}\n{}", filler(800, 7), filler(800, 11));
    std::fs::write(site.join("p2.html"), page("书评", &review)).unwrap();
    std::fs::write(site.join("p3.html"), page("杂谈", &filler(2000, 3))).unwrap();
    std::fs::write(site.join("private/p4.html"), page("私藏", CHAPTER)).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<html><head><meta charset=\"utf-8\"><title>首页</title></head><body><ul>\
         <li><a href=\"p1.html\">一</a></li><li><a href=\"p2.html\">二</a></li>\
         <li><a href=\"p3.html\">三</a></li><li><a href=\"private/p4.html\">四</a></li>\
         <li><a href=\"missing.html\">五</a></li></ul></body></html>",
    )
    .unwrap();
}

fn run_eval(configure: impl FnOnce(&mut Command)) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path());
    let predictions = dir.path().join("predictions.jsonl");
    let mut command = Command::cargo_bin("copyhound").unwrap();
    command.current_dir(dir.path()).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    command
        .args(["eval", "--set"])
        .arg(dir.path())
        .arg("--out")
        .arg(&predictions);
    configure(&mut command);
    command
        .timeout(std::time::Duration::from_secs(600))
        .assert()
        .success();
    std::fs::read_to_string(&predictions)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn assert_only_the_copy_is_flagged(predictions: &[serde_json::Value]) {
    let pages: Vec<&str> = predictions
        .iter()
        .map(|p| p["page"].as_str().unwrap())
        .collect();
    assert_eq!(pages, ["site1/p1.html"], "{predictions:?}");
    assert_eq!(predictions[0]["work"], "w1");
    assert_eq!(predictions[0]["chapter"], "c1");
    assert!(predictions[0]["score"].as_f64().unwrap() > 0.5);
    assert!(
        !predictions[0]["spans"].as_array().unwrap().is_empty(),
        "evidence spans are reported"
    );
}

#[test]
fn eval_on_the_embedded_default_flags_only_the_copy() {
    assert_only_the_copy_is_flagged(&run_eval(|_| {}));
}

#[test]
fn eval_on_mongodb_and_redis_flags_only_the_copy() {
    const TEST: &str = "eval_on_mongodb_and_redis_flags_only_the_copy";
    let (Some(mongo), Some(redis)) = (
        test_services::service_url(test_services::MONGODB_URL, TEST),
        test_services::service_url(test_services::REDIS_URL, TEST),
    ) else {
        return;
    };
    let predictions = run_eval(|command| {
        command
            .env("COPYHOUND_STORE_URL", &mongo)
            .env("COPYHOUND_INDEX_URL", &redis)
            .env("COPYHOUND_QUEUE_URL", &redis)
            .args(["--backends", "configured"]);
    });
    assert_only_the_copy_is_flagged(&predictions);
}

/// `bench pipeline` drives worker and crawler processes on MongoDB and Redis
/// and reports a row per configuration.
#[test]
fn bench_pipeline_reports_pages_per_second_per_process_count() {
    const TEST: &str = "bench_pipeline_reports_pages_per_second_per_process_count";
    let (Some(mongo), Some(redis)) = (
        test_services::service_url(test_services::MONGODB_URL, TEST),
        test_services::service_url(test_services::REDIS_URL, TEST),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path());
    let mut command = Command::cargo_bin("copyhound").unwrap();
    command.current_dir(dir.path()).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    let output = command
        .env("COPYHOUND_STORE_URL", &mongo)
        .env("COPYHOUND_INDEX_URL", &redis)
        .env("COPYHOUND_QUEUE_URL", &redis)
        .args(["bench", "pipeline", "--set"])
        .arg(dir.path())
        .args(["--workers", "1,2", "--crawlers", "1"])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.len() == 10 && fields[0].parse::<u32>().is_ok())
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    for row in &rows {
        let pages: u64 = row[2].parse().unwrap();
        let rate: f64 = row[4].parse().unwrap();
        assert!(pages >= 3, "the crawls fetched the set's pages: {stdout}");
        assert!(rate > 0.0, "{stdout}");
        assert_eq!(row[9], "0", "no dead task: {stdout}");
    }
}
