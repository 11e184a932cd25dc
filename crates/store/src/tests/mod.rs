//! The conformance suite: generic checks over [`Stores`], instantiated for every
//! backend. The MongoDB run needs `COPYHOUND_TEST_MONGODB_URL` (started by
//! `eval "$(deploy/dev/services.sh start)"`); without it the run is skipped, or
//! fails when `CI=true`. Each MongoDB test uses its own database, dropped at the end.

mod disk_full;
pub(crate) mod fixtures;
#[cfg(unix)]
mod kill;
mod suite;

use tempfile::TempDir;

use crate::Stores;

/// A backend under test and what must be torn down after it.
pub(crate) struct Harness {
    pub(crate) stores: Stores,
    _dir: Option<TempDir>,
    #[cfg(feature = "mongodb")]
    mongo: Option<std::sync::Arc<crate::MongoStore>>,
}

impl Harness {
    pub(crate) async fn local() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let stores = Stores::local(dir.path()).unwrap();
        Self {
            stores,
            _dir: Some(dir),
            #[cfg(feature = "mongodb")]
            mongo: None,
        }
    }

    #[cfg(feature = "mongodb")]
    pub(crate) async fn mongo() -> Option<Self> {
        Some(Self::mongo_at(&mongo_url()?, "copyhound_test").await)
    }

    #[cfg(feature = "mongodb")]
    async fn mongo_at(url: &str, prefix: &str) -> Self {
        let database = format!("{prefix}_{}", uuid::Uuid::now_v7().simple());
        let store = std::sync::Arc::new(
            crate::MongoStore::connect(url, &database, crate::StoreLimits::default())
                .await
                .unwrap(),
        );
        Self {
            stores: Stores::from_backend(store.clone()),
            _dir: None,
            mongo: Some(store),
        }
    }

    /// The same server as a replica set: the set name it advertises, majority
    /// write and read concerns, retryable writes.
    #[cfg(feature = "mongodb")]
    pub(crate) async fn mongo_replica_set() -> Option<Self> {
        let url = replica_set_url(&mongo_url()?).await;
        Some(Self::mongo_at(&url, "copyhound_test_rs").await)
    }

    pub(crate) async fn finish(self) {
        #[cfg(feature = "mongodb")]
        if let Some(store) = self.mongo {
            store.drop_database().await.unwrap();
        }
    }
}

/// Returns the test server URL; without one, skips (or fails on CI).
#[cfg(feature = "mongodb")]
pub(crate) fn mongo_url() -> Option<String> {
    use copyhound_core::test_services::{MONGODB_URL, service_url};
    service_url(MONGODB_URL, "the MongoDB run")
}

/// Asks the server for its replica set and returns a URL that connects to it
/// as a set (the driver then refuses a server that is not a member).
///
/// # Panics
/// When the server does not run as a replica set.
#[cfg(feature = "mongodb")]
async fn replica_set_url(url: &str) -> String {
    use mongodb::bson::doc;
    let client = mongodb::Client::with_uri_str(url).await.unwrap();
    let hello = client
        .database("admin")
        .run_command(doc! {"hello": 1})
        .await
        .unwrap();
    let set = hello
        .get_str("setName")
        .unwrap_or_else(|_| panic!("the test server at {url} is not a replica set: {hello}"));
    let base = url.trim_end_matches('/');
    let separator = if base.contains('?') { '&' } else { '?' };
    let path = if base.contains('?') { "" } else { "/" };
    format!(
        "{base}{path}{separator}replicaSet={set}&w=majority&readConcernLevel=majority&retryWrites=true"
    )
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod local_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let harness = super::Harness::local().await;
                    super::suite::$name(&harness.stores).await;
                    harness.finish().await;
                }
            )*
        }

        #[cfg(feature = "mongodb")]
        mod mongo_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(harness) = super::Harness::mongo().await else { return };
                    super::suite::$name(&harness.stores).await;
                    harness.finish().await;
                }
            )*
        }

        #[cfg(feature = "mongodb")]
        mod mongo_replica_set {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(harness) = super::Harness::mongo_replica_set().await else {
                        return;
                    };
                    super::suite::$name(&harness.stores).await;
                    harness.finish().await;
                }
            )*
        }
    };
}

conformance!(
    publishers_sites_and_reports_round_trip,
    upserts_are_idempotent,
    page_history_follows_content_changes,
    match_upsert_keeps_the_review_state,
    matches_never_cross_owners,
    deleting_a_works_matches_spares_the_rest,
    keyset_pagination_spans_several_pages,
    match_filters_select,
    matches_list_by_score_across_pages,
    tenants_never_see_each_other,
    unknown_ids_are_not_found,
    u64_fingerprints_round_trip,
    migrations_run_twice_and_concurrently,
    oversize_page_bodies_are_truncated,
    artifacts_round_trip,
    works_delete_with_their_chapters,
    an_edit_replaces_the_chapters_it_leaves_out,
    chapter_reads_follow_every_write,
    alert_states_swap_once,
    site_suggestions_round_trip_per_publisher_and_status,
);

#[cfg(feature = "mongodb")]
#[tokio::test]
async fn a_mongo_store_that_is_down_is_unavailable() {
    use copyhound_core::ErrorKind;
    // Port 9 (discard) is closed on loopback; selection gives up after 300 ms.
    let url = "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300&connectTimeoutMS=300";
    let stores = Stores::mongo(url, "copyhound_down").await.unwrap();
    let error = stores.check_connectivity().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let error = stores
        .publishers
        .get_publisher(&"pub_a".parse().unwrap())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_second_process_cannot_open_an_open_store() {
    let dir = tempfile::tempdir().unwrap();
    let _first = crate::LocalStore::open(dir.path()).unwrap();
    let error = crate::LocalStore::open(dir.path()).unwrap_err();
    assert_eq!(
        error.kind(),
        copyhound_core::ErrorKind::Unavailable,
        "{error}"
    );
}

/// A chapter write whose caller stops waiting still commits, and the
/// embedded store's decoded copy of the chapter must not outlive it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_chapter_write_still_evicts_the_decoded_chapter() {
    let harness = Harness::local().await;
    let works = &harness.stores.works;
    let mut chapter = fixtures::chapter("w1", 1);
    works
        .put_chapters(std::slice::from_ref(&chapter))
        .await
        .unwrap();
    let read = || works.get_chapter(&chapter.work_id, &chapter.id);
    assert_eq!(read().await.unwrap().text, chapter.text);
    chapter.text = "改过的正文".into();
    {
        let mut write = Box::pin(works.put_chapters(std::slice::from_ref(&chapter)));
        // Submitted, then abandoned.
        assert!(futures_util::poll!(&mut write).is_pending());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while read().await.unwrap().text != chapter.text {
        assert!(
            std::time::Instant::now() < deadline,
            "the abandoned write never showed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    harness.finish().await;
}
