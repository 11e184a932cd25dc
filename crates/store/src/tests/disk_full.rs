//! The embedded store on a disk that fills: writes answer `Unavailable`
//! naming the disk, `check_connectivity` (so `/health`) reports it, and both
//! recover once space returns, without reopening the store.

use std::time::{Duration, Instant};

use copyhound_core::ErrorKind;
use copyhound_core::ports::PublisherStore;
use copyhound_redb::DbHealth;
use copyhound_redb::fault::FillableDisk;

use super::fixtures::publisher;
use crate::LocalStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_reported_and_writes_resume_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let disk = FillableDisk::new();
    let file = dir.path().join(crate::local::FILE_NAME);
    let store = LocalStore::open_on(dir.path(), disk.opener(&file)).unwrap();
    store.put_publisher(&publisher("pub_a")).await.unwrap();
    store.check_connectivity().await.unwrap();

    disk.set_full(true);
    let expected = format!("the disk under {} is full or failing", file.display());
    let error = store.put_publisher(&publisher("pub_b")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.message().starts_with(&expected), "{error}");
    let error = store.check_connectivity().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.message().starts_with(&expected), "{error}");
    assert!(matches!(store.health(), DbHealth::Degraded(_)));

    disk.set_full(false);
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Err(error) = store.put_publisher(&publisher("pub_b")).await {
        assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
        assert!(Instant::now() < deadline, "writes did not resume: {error}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(store.health(), DbHealth::Ok);
    store.check_connectivity().await.unwrap();
    for id in ["pub_a", "pub_b"] {
        let stored = store.get_publisher(&id.parse().unwrap()).await.unwrap();
        assert_eq!(stored, publisher(id));
    }
}
