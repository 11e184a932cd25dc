//! Title anchors are part of a stored fingerprint: a chapter re-registered
//! with the same text under a new title is re-anchored, and records of an
//! older `FINGERPRINT_VERSION` are fingerprinted anew (chapters at node start,
//! pages when a back-fill compares them) without duplicating their matches.
//! On the embedded backends, through the worker loop.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use copyhound_core::config::{MatcherConfig, QueueConfig};
use copyhound_core::ids::{ChapterId, MatchId, PageId, PublisherId, SiteId, WorkId, sha256_hex};
use copyhound_core::model::{
    Chapter, FetchMeta, FingerprintOwner, FingerprintRecord, FingerprintStatus, Language,
    MatchStatus, Page, Publisher, PublisherKind, Review, Task, TaskKind, Work, WorkKind,
};
use copyhound_core::ports::{EntryKind, FingerprintIndex, TaskQueue};
use copyhound_fingerprint::{FINGERPRINT_VERSION, FingerprintConfig, Fingerprinter};
use copyhound_index::MemoryFingerprintIndex;
use copyhound_matcher::{MATCH_ID_VERSION, MatcherHandler, MatcherPorts, requeue_pending_works};
use copyhound_queue::LocalTaskQueue;
use copyhound_runtime::{Dispatcher, Worker, WorkerSettings};
use copyhound_store::Stores;

const CHAPTER: &str = include_str!("../../cli/samples/registered-chapter.txt");
const OLD_TITLE: &str = "小引";
const NEW_TITLE: &str = "二心集序言";

struct Harness {
    _dir: tempfile::TempDir,
    stores: Stores,
    index: Arc<MemoryFingerprintIndex>,
    queue: Arc<LocalTaskQueue>,
    worker: Worker,
    fingerprinter: Arc<Fingerprinter>,
}

async fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::local(dir.path().join("store")).unwrap();
    let queue = Arc::new(
        LocalTaskQueue::open(&dir.path().join("queue"), &QueueConfig::default())
            .await
            .unwrap(),
    );
    let index = Arc::new(MemoryFingerprintIndex::new(3).unwrap());
    let fingerprinter = Arc::new(Fingerprinter::new(FingerprintConfig::default()).unwrap());
    let ports = MatcherPorts {
        ports: stores.ports(index.clone(), queue.clone()),
        fingerprinter: fingerprinter.clone(),
        config: MatcherConfig::default(),
    };
    let settings = WorkerSettings {
        concurrency: 2,
        visibility: Duration::from_secs(30),
        ..WorkerSettings::default()
    };
    let worker = Worker::new(
        queue.clone(),
        Arc::new(Dispatcher::default().with_matcher(MatcherHandler::new(ports))),
        settings,
    );
    Harness {
        _dir: dir,
        stores,
        index,
        queue,
        worker,
        fingerprinter,
    }
}

fn work_id() -> WorkId {
    "w1".parse().unwrap()
}

fn chapter_id() -> ChapterId {
    "c1".parse().unwrap()
}

fn chapter_owner() -> FingerprintOwner {
    FingerprintOwner::Chapter {
        work_id: work_id(),
        chapter_id: chapter_id(),
    }
}

impl Harness {
    /// Registers (or re-registers) the one chapter under `title`, as a
    /// registration does: chapters `Pending`, then `fingerprint_work`.
    async fn register(&self, title: &str) {
        let publisher_id: PublisherId = "P01".parse().unwrap();
        let publisher = Publisher {
            id: publisher_id.clone(),
            name: "P01".into(),
            kind: PublisherKind::Books,
            created_at: Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        };
        self.stores
            .publishers
            .put_publisher(&publisher)
            .await
            .unwrap();
        let chapter = Chapter::new(work_id(), chapter_id(), 1, title.into(), CHAPTER.into());
        self.stores.works.put_chapters(&[chapter]).await.unwrap();
        let work = Work {
            id: work_id(),
            publisher_id,
            title: "二心集".into(),
            author: "鲁迅".into(),
            kind: WorkKind::Novel,
            language: Language::Zh,
            licensed_hosts: Vec::new(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            released_at: None,
            release_schedule: None,
        };
        self.stores.works.put_work(&work).await.unwrap();
        self.enqueue(TaskKind::FingerprintWork { work_id: work_id() })
            .await;
    }

    async fn crawl(&self, url: &str, title: &str, text: &str) -> PageId {
        let now = Utc::now();
        let page = Page {
            id: PageId::for_url(url),
            url: url.into(),
            site_id: "site1".parse::<SiteId>().unwrap(),
            title: title.into(),
            raw_body: text.as_bytes().to_vec(),
            body_truncated: false,
            body_sha256: sha256_hex(text.as_bytes()),
            charset: "utf-8".into(),
            text: text.into(),
            content_sha256: sha256_hex(text.as_bytes()),
            first_seen: now,
            last_seen: now,
            fetch: FetchMeta::default(),
            previous_versions: Vec::new(),
        };
        self.stores.pages.upsert_page(&page).await.unwrap();
        self.enqueue(TaskKind::FingerprintPage {
            page_id: page.id.clone(),
            content_sha256: page.content_sha256,
        })
        .await;
        page.id
    }

    async fn enqueue(&self, kind: TaskKind) {
        self.queue
            .enqueue(vec![Task::new(kind, Utc::now())])
            .await
            .unwrap();
    }

    async fn drain(&self) {
        let outcome = self.worker.drain().await.unwrap();
        assert_eq!(outcome.failed, 0, "{outcome:?}");
    }

    async fn record(&self, owner: &FingerprintOwner, version: u32) -> Option<FingerprintRecord> {
        match self
            .stores
            .fingerprints
            .get_fingerprint(owner, version)
            .await
        {
            Ok(record) => Some(record),
            Err(error) if error.kind() == copyhound_core::ErrorKind::NotFound => None,
            Err(error) => panic!("{error}"),
        }
    }

    /// Owners the index answers for an exact anchor.
    async fn anchor_owners(&self, anchor: u64) -> Vec<String> {
        self.index
            .query(EntryKind::Anchor, anchor, 0)
            .await
            .unwrap()
            .into_iter()
            .map(|hit| hit.entry.owner)
            .collect()
    }

    async fn chapter_status(&self) -> FingerprintStatus {
        self.stores
            .works
            .get_chapter(&work_id(), &chapter_id())
            .await
            .unwrap()
            .fingerprint_status
    }
}

/// The chapter with every 13th character replaced, between unrelated lines.
fn pirated_copy() -> String {
    let mutated: String = CHAPTER
        .chars()
        .enumerate()
        .map(|(index, c)| {
            if index % 13 == 7 && !c.is_whitespace() {
                '某'
            } else {
                c
            }
        })
        .collect();
    format!("本站域名 www.example.la 手机用户请浏览阅读\n{mutated}\n上一章 目录 下一章")
}

#[tokio::test]
async fn a_chapter_retitled_with_the_same_text_is_re_anchored() {
    let harness = harness().await;
    let old_title = harness.fingerprinter.title_anchors(OLD_TITLE);
    let new_title = harness.fingerprinter.title_anchors(NEW_TITLE);
    assert_eq!((old_title.len(), new_title.len()), (1, 1));
    assert_ne!(old_title, new_title);
    let owner = chapter_owner();

    harness.register(OLD_TITLE).await;
    harness.drain().await;
    let before = harness.record(&owner, FINGERPRINT_VERSION).await.unwrap();
    assert_eq!(before.version, FINGERPRINT_VERSION);
    assert!(before.anchors.contains(&old_title[0]));
    assert!(!before.anchors.contains(&new_title[0]));
    assert_eq!(
        harness.anchor_owners(old_title[0]).await,
        vec![owner.index_key()]
    );

    // Re-registered: the same text (same content hash), a new title.
    harness.register(NEW_TITLE).await;
    harness.drain().await;
    let after = harness.record(&owner, FINGERPRINT_VERSION).await.unwrap();
    assert_eq!(after.content_sha256, before.content_sha256);
    assert!(
        after.anchors.contains(&new_title[0]),
        "the new title's anchor"
    );
    assert!(
        !after.anchors.contains(&old_title[0]),
        "the old title's anchor"
    );
    // Only the title's anchor changed: the text's are the same.
    let text_anchors = |anchors: &[u64], title: u64| -> Vec<u64> {
        anchors.iter().copied().filter(|a| *a != title).collect()
    };
    assert_eq!(
        text_anchors(&after.anchors, new_title[0]),
        text_anchors(&before.anchors, old_title[0])
    );
    assert_eq!(
        (after.simhash, &after.dna, after.normalized_chars),
        (before.simhash, &before.dna, before.normalized_chars)
    );
    // The index follows the record.
    assert!(harness.anchor_owners(old_title[0]).await.is_empty());
    assert_eq!(
        harness.anchor_owners(new_title[0]).await,
        vec![owner.index_key()]
    );
    assert_eq!(
        harness.chapter_status().await,
        FingerprintStatus::Indexed {
            version: FINGERPRINT_VERSION
        }
    );

    // Re-registered again unchanged: the stored record is reused as it is.
    harness.register(NEW_TITLE).await;
    harness.drain().await;
    let again = harness.record(&owner, FINGERPRINT_VERSION).await.unwrap();
    assert_eq!(again.created_at, after.created_at);
}

#[tokio::test]
async fn records_of_an_older_version_are_fingerprinted_anew_and_keep_their_matches() {
    let harness = harness().await;
    harness.register(OLD_TITLE).await;
    let page_id = harness
        .crawl(
            "http://pirate.example/1.html",
            "小引_某某小说网",
            &pirated_copy(),
        )
        .await;
    harness.drain().await;
    let found = harness
        .stores
        .matches
        .matches_of_page(&page_id)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    let publisher_id: PublisherId = "P01".parse().unwrap();
    let match_id = MatchId::for_pair(
        &publisher_id,
        &page_id,
        &work_id(),
        &chapter_id(),
        MATCH_ID_VERSION,
    );
    assert_eq!(found[0].id, match_id);
    let review = Review {
        status: MatchStatus::Confirmed,
        by: "reviewer".into(),
        at: Utc::now(),
        note: None,
    };
    harness
        .stores
        .matches
        .review_match(&publisher_id, &match_id, &review)
        .await
        .unwrap();

    // What the stores held before the bump: records of the previous version,
    // made before titles joined the anchors, and the chapter indexed under it.
    let old_version = FINGERPRINT_VERSION - 1;
    let chapter = chapter_owner();
    let page = FingerprintOwner::Page {
        page_id: page_id.clone(),
    };
    for owner in [&chapter, &page] {
        let mut record = harness.record(owner, FINGERPRINT_VERSION).await.unwrap();
        let text = match owner {
            FingerprintOwner::Chapter {
                work_id,
                chapter_id,
            } => {
                let works = &harness.stores.works;
                works.get_chapter(work_id, chapter_id).await.unwrap().text
            }
            FingerprintOwner::Page { page_id } => {
                harness.stores.pages.get_page(page_id).await.unwrap().text
            }
        };
        record.version = old_version;
        record.anchors = harness
            .fingerprinter
            .anchors(&harness.fingerprinter.normalize(&text));
        harness
            .stores
            .fingerprints
            .delete_fingerprints(owner)
            .await
            .unwrap();
        harness
            .stores
            .fingerprints
            .put_fingerprint(&record)
            .await
            .unwrap();
        harness
            .index
            .replace_owners(&[owner.index_key()], &record.index_entries())
            .await
            .unwrap();
    }
    harness
        .stores
        .works
        .set_fingerprint_status(
            &work_id(),
            &chapter_id(),
            &FingerprintStatus::Indexed {
                version: old_version,
            },
        )
        .await
        .unwrap();
    let title_anchor = harness.fingerprinter.title_anchors(OLD_TITLE)[0];
    assert!(harness.anchor_owners(title_anchor).await.is_empty());

    // A node starts: the outdated chapter's work is enqueued, fingerprinted
    // anew and back-filled; the back-fill's comparison of the page, which
    // has only a record of the previous version, fingerprints it anew too.
    let outcome = requeue_pending_works(
        harness.stores.publishers.as_ref(),
        harness.stores.works.as_ref(),
        harness.queue.as_ref(),
    )
    .await
    .unwrap();
    assert_eq!((outcome.requeued, outcome.outdated), (1, 1));
    harness.drain().await;

    assert_eq!(
        harness.chapter_status().await,
        FingerprintStatus::Indexed {
            version: FINGERPRINT_VERSION
        }
    );
    for owner in [&chapter, &page] {
        let record = harness.record(owner, FINGERPRINT_VERSION).await;
        let record = record.unwrap_or_else(|| panic!("{owner:?} not fingerprinted anew"));
        assert!(record.anchors.contains(&title_anchor), "{owner:?}");
    }
    let mut owners = harness.anchor_owners(title_anchor).await;
    owners.sort();
    let mut expected = vec![chapter.index_key(), page.index_key()];
    expected.sort();
    assert_eq!(owners, expected);
    // The same match, refreshed under the new version, its review kept.
    let found = harness
        .stores
        .matches
        .matches_of_page(&page_id)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, match_id);
    assert_eq!(found[0].fingerprint_version, FINGERPRINT_VERSION);
    assert_eq!(found[0].status, MatchStatus::Confirmed);
    assert_eq!(found[0].reviews.len(), 1);

    // The next start finds nothing outdated.
    let outcome = requeue_pending_works(
        harness.stores.publishers.as_ref(),
        harness.stores.works.as_ref(),
        harness.queue.as_ref(),
    )
    .await
    .unwrap();
    assert_eq!((outcome.requeued, outcome.outdated), (0, 0));
}
