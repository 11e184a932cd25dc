//! `works import` of a folder for a publisher that exists: the publisher keeps
//! its profile, an existing work is edited (chapters the folder dropped leave
//! the store and the index, licensed hosts stay), and a work id of another
//! publisher is refused before anything is written.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use copyhound_core::config::Config;
use copyhound_core::model::{FingerprintOwner, ReportFormat, ReportScheduleSetting};
use copyhound_core::ports::{EntryKind, IndexEntry};
use copyhound_intake::import::{import_works, read_works};
use copyhound_runtime::Node;

fn write_work(dir: &Path, publisher: &str, chapters: &[&str]) {
    let folder = dir.join("works/w1");
    std::fs::create_dir_all(folder.join("chapters")).unwrap();
    let mut listed = Vec::new();
    for (index, id) in chapters.iter().enumerate() {
        let file = format!("chapters/{id}.txt");
        std::fs::write(folder.join(&file), format!("{id}的正文。第二句。")).unwrap();
        listed.push(serde_json::json!({
            "chapter_id": id, "index": index + 1, "title": format!("第{}章", index + 1),
            "file": file, "chars": 8
        }));
    }
    let meta = serde_json::json!({
        "work_id": "w1", "title": "书", "author": "某", "publisher_id": publisher,
        "type": "novel", "language": "zh", "chapters": listed
    });
    std::fs::write(folder.join("meta.json"), meta.to_string()).unwrap();
}

#[tokio::test]
async fn a_reimport_edits_the_work_and_keeps_the_publishers_profile() {
    let data = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: data.path().to_path_buf(),
        ..Config::default()
    };
    let node = Node::build(&config).await.unwrap();
    let backends = node.backends();
    let first = tempfile::tempdir().unwrap();
    write_work(first.path(), "P01", &["c1", "c2"]);
    import_works(&backends.ports(), read_works(first.path()).unwrap(), "test")
        .await
        .unwrap();
    let publisher_id = "P01".parse().unwrap();
    let mut publisher = backends
        .stores
        .publishers
        .get_publisher(&publisher_id)
        .await
        .unwrap();
    publisher.name = "某某文学".into();
    publisher.report_schedules = vec![ReportScheduleSetting {
        cron: "0 6 * * 1".into(),
        format: ReportFormat::Pdf,
        email: false,
    }];
    backends
        .stores
        .publishers
        .put_publisher(&publisher)
        .await
        .unwrap();
    let work_id = "w1".parse().unwrap();
    let mut work = backends.stores.works.get_work_any(&work_id).await.unwrap();
    work.licensed_hosts = vec!["licensed.example".into()];
    backends.stores.works.put_work(&work).await.unwrap();
    let dropped = FingerprintOwner::Chapter {
        work_id: work.id.clone(),
        chapter_id: "c2".parse().unwrap(),
    }
    .index_key();
    backends
        .index
        .insert(&[IndexEntry {
            owner: dropped.clone(),
            kind: EntryKind::Passage,
            ordinal: 0,
            fingerprint: 42,
        }])
        .await
        .unwrap();

    let second = tempfile::tempdir().unwrap();
    write_work(second.path(), "P01", &["c1", "c3"]);
    import_works(
        &backends.ports(),
        read_works(second.path()).unwrap(),
        "test",
    )
    .await
    .unwrap();
    let stored = backends
        .stores
        .publishers
        .get_publisher(&publisher_id)
        .await
        .unwrap();
    assert_eq!(
        stored, publisher,
        "the profile is the publisher's, not the folder's"
    );
    let work = backends.stores.works.get_work_any(&work_id).await.unwrap();
    assert_eq!(work.licensed_hosts, ["licensed.example"]);
    let chapters: Vec<String> = backends
        .stores
        .works
        .list_chapters(&work_id)
        .await
        .unwrap()
        .iter()
        .map(|chapter| chapter.id.to_string())
        .collect();
    assert_eq!(chapters, ["c1", "c3"]);
    assert_eq!(
        backends.index.stats().await.unwrap().entries,
        0,
        "c2 left the index"
    );

    // Another publisher's folder cannot take the id.
    let third = tempfile::tempdir().unwrap();
    write_work(third.path(), "P02", &["c9"]);
    let error = import_works(&backends.ports(), read_works(third.path()).unwrap(), "test")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("belongs to another publisher"), "{error}");
    assert_eq!(
        backends
            .stores
            .works
            .get_work_any(&work_id)
            .await
            .unwrap()
            .publisher_id,
        publisher_id
    );
    assert!(
        backends
            .stores
            .publishers
            .get_publisher(&"P02".parse().unwrap())
            .await
            .is_err(),
        "nothing written"
    );
}
