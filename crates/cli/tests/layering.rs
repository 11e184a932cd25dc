//! Enforces the dependency rule of docs/ARCHITECTURE.md with `cargo metadata`, so
//! the layering cannot rot: the fingerprint engine stays pure, the backends never
//! know each other, and only the runtime (and the tooling above it) names
//! concrete backends; the server never links the evaluation tooling.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Layers, bottom up; a crate may depend only on workspace crates of lower layers.
const LAYERS: &[&[&str]] = &[
    &["copyhound-fingerprint"],
    &["copyhound-core"],
    &["copyhound-redis", "copyhound-redb", "copyhound-intake"],
    &[
        "copyhound-store",
        "copyhound-index",
        "copyhound-queue",
        "copyhound-crawler",
    ],
    &["copyhound-matcher"],
    &["copyhound-report"],
    &["copyhound-runtime", "copyhound-server"],
    &["copyhound-bench"],
    &["copyhound-cli"],
];

/// Crates holding backend implementations: only the runtime (which resolves the
/// configuration), the tooling and the CLI may depend on them (tests may).
const BACKEND_CRATES: &[&str] = &["copyhound-store", "copyhound-index", "copyhound-queue"];

/// The fingerprint engine is pure: none of these, directly.
const ASYNC_OR_IO: &[&str] = &[
    "tokio",
    "async-trait",
    "futures",
    "async-std",
    "reqwest",
    "hyper",
    "axum",
    "redis",
    "mongodb",
    "redb",
    "rusqlite",
    "mio",
    "tracing-subscriber",
];

/// Returns each workspace package's normal (non-dev) dependency names.
fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let mut result = BTreeMap::new();
    for package in metadata["packages"].as_array().expect("packages array") {
        let name = package["name"].as_str().expect("package name").to_string();
        let deps = package["dependencies"]
            .as_array()
            .expect("dependencies array")
            .iter()
            .filter(|dep| dep["kind"].is_null() || dep["kind"] == "build")
            .map(|dep| dep["name"].as_str().expect("dependency name").to_string())
            .collect();
        result.insert(name, deps);
    }
    result
}

fn layer_of(name: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&name))
}

#[test]
fn every_workspace_crate_has_a_layer() {
    for name in normal_dependencies().keys() {
        assert!(
            layer_of(name).is_some(),
            "{name} is not placed in a layer of docs/ARCHITECTURE.md"
        );
    }
}

#[test]
fn dependencies_point_down_the_layers() {
    for (name, deps) in normal_dependencies() {
        let own = layer_of(&name).expect("placed");
        for dep in deps.iter().filter(|dep| dep.starts_with("copyhound-")) {
            let theirs = layer_of(dep).expect("placed");
            assert!(
                theirs < own,
                "{name} depends on {dep}, which is not in a lower layer"
            );
        }
    }
}

#[test]
fn the_fingerprint_engine_is_pure() {
    let deps = &normal_dependencies()["copyhound-fingerprint"];
    for dep in deps {
        assert!(
            !dep.starts_with("copyhound-"),
            "copyhound-fingerprint depends on workspace crate {dep}"
        );
        assert!(
            !ASYNC_OR_IO.contains(&dep.as_str()),
            "copyhound-fingerprint depends on async/IO crate {dep}"
        );
    }
}

/// Crates allowed to name backend crates.
const RESOLVERS: &[&str] = &["copyhound-runtime", "copyhound-bench", "copyhound-cli"];

#[test]
fn only_the_runtime_and_tooling_name_concrete_backends() {
    for (name, deps) in normal_dependencies() {
        if RESOLVERS.contains(&name.as_str()) {
            continue;
        }
        for backend in BACKEND_CRATES {
            assert!(
                !deps.contains(*backend),
                "{name} depends on backend crate {backend}; take the core port instead"
            );
        }
    }
}

/// What enters the system goes through intake: the HTTP crate neither fetches
/// nor crawls, so it never links the crawler (or its HTTP client and browser).
#[test]
fn the_server_is_http_over_intake_not_the_crawler() {
    let deps = normal_dependencies();
    let server = &deps["copyhound-server"];
    assert!(server.contains("copyhound-intake"), "{server:?}");
    for linked in ["copyhound-crawler", "reqwest"] {
        assert!(!server.contains(linked), "the server links {linked}");
    }
}

#[test]
fn the_rule_checker_catches_violations() {
    // The checks above must be able to fail: a crate depending on a higher layer is flagged.
    assert!(
        layer_of("copyhound-server").expect("placed")
            > layer_of("copyhound-store").expect("placed")
    );
    assert!(layer_of("copyhound-store") == layer_of("copyhound-index"));
    assert!(layer_of("not-a-crate").is_none());
}

/// Returns the rows of the markdown table under `heading` in docs/ARCHITECTURE.md.
fn architecture_table(heading: &str) -> Vec<Vec<String>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let section = text
        .split("\n## ")
        .find(|section| section.starts_with(heading))
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no section {heading:?}"));
    section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            line.trim_matches('|')
                .split(" | ")
                .map(|cell| cell.trim().to_string())
                .collect()
        })
        .collect()
}

fn backticked(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_crate_table_of_the_architecture_doc_is_the_workspace() {
    let metadata = normal_dependencies();
    let mut documented = BTreeMap::new();
    for row in architecture_table("Crates") {
        let name = format!("copyhound-{}", row[0].trim_matches('`'));
        let deps: BTreeSet<String> = backticked(&row[2])
            .into_iter()
            .map(|dep| format!("copyhound-{dep}"))
            .collect();
        documented.insert(name, deps);
    }
    let actual: BTreeMap<String, BTreeSet<String>> = metadata
        .into_iter()
        .map(|(name, deps)| {
            let ours = deps
                .into_iter()
                .filter(|dep| dep.starts_with("copyhound-"))
                .collect();
            (name, ours)
        })
        .collect();
    assert_eq!(
        documented.keys().collect::<Vec<_>>(),
        actual.keys().collect::<Vec<_>>(),
        "crates in docs/ARCHITECTURE.md vs the workspace"
    );
    for (name, deps) in &actual {
        assert_eq!(
            &documented[name], deps,
            "docs/ARCHITECTURE.md: `depends on` of {name}"
        );
    }
}

#[test]
fn every_task_kind_names_code_that_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rows = architecture_table("Tasks and the code that runs them");
    let kinds: BTreeSet<String> = rows
        .iter()
        .map(|row| row[0].trim_matches('`').to_string())
        .collect();
    let task_source = std::fs::read_to_string(root.join("crates/core/src/model/task.rs")).unwrap();
    for kind in &kinds {
        assert!(
            task_source.contains(&format!("\"{kind}\"")),
            "{kind} is not a task kind name"
        );
    }
    let variants = task_source.matches("{ .. } => \"").count();
    assert_eq!(
        kinds.len(),
        variants,
        "every task kind has a row: {kinds:?}"
    );
    for row in &rows {
        let path = row[2].split('`').nth(1).unwrap();
        assert!(
            root.join(path).is_file(),
            "{}: {path} does not exist",
            row[0]
        );
    }
}
