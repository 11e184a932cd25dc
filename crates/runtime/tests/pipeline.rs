//! The comparison pipeline on the embedded backends: registration, fingerprinting,
//! comparison, back-fill, idempotency and the evidence bar, driven through the
//! worker loop exactly as a worker process runs it.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use copyhound_core::config::{MatcherConfig, QueueConfig};
use copyhound_core::ids::sha256_hex;
use copyhound_core::ids::{ChapterId, PageId, PublisherId, SiteId, WorkId};
use copyhound_core::model::{
    Chapter, FetchMeta, Language, MatchStatus, Page, Pagination, Publisher, PublisherKind, Task,
    TaskKind, Work, WorkKind,
};
use copyhound_fingerprint::{FingerprintConfig, Fingerprinter};
use copyhound_index::MemoryFingerprintIndex;
use copyhound_matcher::{MatcherHandler, MatcherPorts};
use copyhound_queue::LocalTaskQueue;
use copyhound_runtime::{Dispatcher, Worker, WorkerSettings};
use copyhound_store::Stores;

const CHAPTER: &str = include_str!("../../cli/samples/registered-chapter.txt");

struct Harness {
    _dir: tempfile::TempDir,
    stores: Stores,
    worker: Worker,
    queue: Arc<LocalTaskQueue>,
}

async fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::local(dir.path().join("store")).unwrap();
    let queue = Arc::new(
        LocalTaskQueue::open(&dir.path().join("queue"), &QueueConfig::default())
            .await
            .unwrap(),
    );
    let ports = MatcherPorts {
        ports: stores.ports(
            Arc::new(MemoryFingerprintIndex::new(3).unwrap()),
            queue.clone(),
        ),
        fingerprinter: Arc::new(Fingerprinter::new(FingerprintConfig::default()).unwrap()),
        config: MatcherConfig::default(),
    };
    let config = WorkerSettings {
        concurrency: 2,
        visibility: Duration::from_secs(30),
        ..WorkerSettings::default()
    };
    let handler = Dispatcher::default().with_matcher(MatcherHandler::new(ports));
    let worker = Worker::new(queue.clone(), Arc::new(handler), config);
    Harness {
        _dir: dir,
        stores,
        worker,
        queue,
    }
}

impl Harness {
    async fn register(&self, licensed_hosts: Vec<String>) {
        let publisher_id: PublisherId = "P01".parse().unwrap();
        let publisher = Publisher {
            id: publisher_id.clone(),
            name: "P01".into(),
            kind: PublisherKind::News,
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
        let work = Work {
            id: work_id(),
            publisher_id,
            title: "二心集".into(),
            author: "鲁迅".into(),
            kind: WorkKind::News,
            language: Language::Zh,
            licensed_hosts,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            released_at: None,
            release_schedule: None,
        };
        self.stores.works.put_work(&work).await.unwrap();
        let chapter = Chapter::new(work_id(), chapter_id(), 1, "小引".into(), CHAPTER.into());
        self.stores.works.put_chapters(&[chapter]).await.unwrap();
        self.enqueue(TaskKind::FingerprintWork { work_id: work_id() })
            .await;
    }

    async fn crawl(&self, url: &str, text: &str) -> PageId {
        self.crawl_with(url, text, FetchMeta::default()).await
    }

    async fn crawl_with(&self, url: &str, text: &str, fetch: FetchMeta) -> PageId {
        self.crawl_on("site1", url, text, fetch).await
    }

    async fn crawl_on(&self, site: &str, url: &str, text: &str, fetch: FetchMeta) -> PageId {
        let now = Utc::now();
        let page = Page {
            id: PageId::for_url(url),
            url: url.into(),
            site_id: site.parse::<SiteId>().unwrap(),
            title: "page".into(),
            raw_body: text.as_bytes().to_vec(),
            body_truncated: false,
            body_sha256: sha256_hex(text.as_bytes()),
            charset: "utf-8".into(),
            text: text.into(),
            content_sha256: sha256_hex(text.as_bytes()),
            first_seen: now,
            last_seen: now,
            fetch,
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
        use copyhound_core::ports::TaskQueue;
        self.queue
            .enqueue(vec![Task::new(kind, Utc::now())])
            .await
            .unwrap();
    }

    async fn drain(&self) {
        let outcome = self.worker.drain().await.unwrap();
        assert_eq!(outcome.failed, 0, "{outcome:?}");
    }

    async fn matches_of(&self, page: &PageId) -> Vec<copyhound_core::model::Match> {
        self.stores.matches.matches_of_page(page).await.unwrap()
    }
}

fn work_id() -> WorkId {
    "w1".parse().unwrap()
}

fn chapter_id() -> ChapterId {
    "c1".parse().unwrap()
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
async fn a_copied_page_becomes_one_match_and_recomparing_changes_nothing() {
    let harness = harness().await;
    harness.register(Vec::new()).await;
    let page = harness
        .crawl("http://pirate.example/1.html", &pirated_copy())
        .await;
    harness.drain().await;
    let found = harness.matches_of(&page).await;
    assert_eq!(found.len(), 1);
    let first = &found[0];
    assert_eq!(
        (first.work_id.clone(), first.chapter_id.clone()),
        (work_id(), chapter_id())
    );
    assert_eq!(first.status, MatchStatus::New);
    assert!(first.chapter_coverage > 0.9, "{}", first.chapter_coverage);
    assert!(!first.spans.is_empty() && !first.evidence.is_empty());
    assert!(first.evidence[0].page_excerpt.chars().count() > 20);

    // Re-delivery of the same comparison (at-least-once) converges to the same match.
    let content_sha256 = harness
        .stores
        .pages
        .get_page(&page)
        .await
        .unwrap()
        .content_sha256;
    harness
        .enqueue(TaskKind::ComparePage {
            page_id: page.clone(),
            content_sha256,
        })
        .await;
    harness.drain().await;
    let again = harness.matches_of(&page).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, first.id);
    assert_eq!(again[0].first_seen, first.first_seen);
}

#[tokio::test]
async fn a_work_registered_after_the_crawl_finds_yesterdays_copy() {
    let harness = harness().await;
    let page = harness
        .crawl("http://pirate.example/2.html", &pirated_copy())
        .await;
    harness.drain().await;
    assert!(
        harness.matches_of(&page).await.is_empty(),
        "nothing is registered yet"
    );
    harness.register(Vec::new()).await;
    harness.drain().await;
    let found = harness.matches_of(&page).await;
    assert_eq!(
        found.len(),
        1,
        "the back-fill compares the stored page through the index"
    );
}

#[tokio::test]
async fn a_short_quote_is_not_a_match() {
    let harness = harness().await;
    harness.register(Vec::new()).await;
    let quote: String = CHAPTER.chars().skip(200).take(90).collect();
    let review =
        format!("这是一篇读后感，作者引用了一段原文：{quote}。全文值得一读，我们下次再谈别的书。");
    let page = harness
        .crawl("http://blog.example/review.html", &review)
        .await;
    harness.drain().await;
    assert!(harness.matches_of(&page).await.is_empty());
}

#[tokio::test]
async fn each_page_of_a_chapter_split_over_pages_is_a_copy() {
    let harness = harness().await;
    harness.register(Vec::new()).await;
    // The last page of the split holds fewer characters than the bar.
    let chars: Vec<char> = CHAPTER.chars().collect();
    let cut = chars.len() - 220;
    let (head, tail): (String, String) =
        (chars[..cut].iter().collect(), chars[cut..].iter().collect());
    let urls = vec![
        "http://pirate.example/9.html".to_string(),
        "http://pirate.example/9_2.html".to_string(),
    ];
    let part = |number: u32, joined: Option<String>| FetchMeta {
        pagination: Some(Pagination {
            first_url: urls[0].clone(),
            part: number,
            part_urls: urls.clone(),
            joined_text: joined,
        }),
        ..FetchMeta::default()
    };
    let first = harness
        .crawl_with(&urls[0], &head, part(1, Some(format!("{head}\n{tail}"))))
        .await;
    let second = harness.crawl_with(&urls[1], &tail, part(2, None)).await;
    // The same short text on a page of its own stays below the bar.
    let alone = harness
        .crawl("http://blog.example/excerpt.html", &tail)
        .await;
    harness.drain().await;
    assert_eq!(harness.matches_of(&first).await.len(), 1);
    let found = harness.matches_of(&second).await;
    assert_eq!(found.len(), 1, "the split chapter's last page");
    assert!(found[0].spans[0].page_end > 100, "{:?}", found[0].spans);
    assert!(harness.matches_of(&alone).await.is_empty());
}

#[tokio::test]
async fn copies_on_licensed_hosts_are_recorded_as_licensed() {
    let harness = harness().await;
    harness.register(vec!["partner.example".into()]).await;
    let page = harness
        .crawl("http://partner.example/read/1.html", &pirated_copy())
        .await;
    harness.drain().await;
    let found = harness.matches_of(&page).await;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].status, MatchStatus::Licensed);
}

#[tokio::test]
async fn a_comparison_for_an_outdated_content_hash_is_skipped() {
    let harness = harness().await;
    harness.register(Vec::new()).await;
    harness.drain().await;
    let page = harness
        .crawl("http://pirate.example/3.html", "一段与作品无关的文字。")
        .await;
    harness.drain().await;
    harness
        .enqueue(TaskKind::ComparePage {
            page_id: page.clone(),
            content_sha256: "0".repeat(64),
        })
        .await;
    harness.drain().await;
    assert!(harness.matches_of(&page).await.is_empty());
}

/// A news agency counts one copied paragraph of an 860-character article;
/// the installation's default (300 characters) does not.
#[tokio::test]
async fn a_news_agencys_policy_counts_one_copied_paragraph() {
    let harness = harness().await;
    harness.register(Vec::new()).await;
    let paragraph: String = CHAPTER.chars().skip(100).take(200).collect();
    let page_text = |site: &str| {
        format!(
            "{site}新闻频道：今日要闻摘编如下，欢迎读者转发评论。{paragraph}以上内容来自网络，如有侵权请联系删除。本站还提供天气预报、体育比分和财经快讯。"
        )
    };
    let before = harness
        .crawl("http://news-a.example/1.html", &page_text("甲站"))
        .await;
    harness.drain().await;
    assert!(
        harness.matches_of(&before).await.is_empty(),
        "200 characters stay under the default bar"
    );

    let publisher_id: PublisherId = "P01".parse().unwrap();
    let mut publisher = harness
        .stores
        .publishers
        .get_publisher(&publisher_id)
        .await
        .unwrap();
    publisher.policy.news.min_copied_chars = Some(150);
    harness
        .stores
        .publishers
        .put_publisher(&publisher)
        .await
        .unwrap();
    let after = harness
        .crawl("http://news-b.example/1.html", &page_text("乙站"))
        .await;
    harness.drain().await;
    let found = harness.matches_of(&after).await;
    assert_eq!(found.len(), 1, "the news policy's 150 characters count it");
    assert!(found[0].score >= 0.5);
}

/// The same copy on a large site and on a small one: the publisher's
/// estimate of each site's audience ranks the large one first; another
/// publisher's estimate for a site weighs nothing in this one's matches.
#[tokio::test]
async fn a_large_sites_copy_ranks_above_the_same_copy_on_a_small_site() {
    use copyhound_crawler::site::SiteBuilder;
    let harness = harness().await;
    harness.register(Vec::new()).await;
    for (site, owner, audience) in [
        ("site_large", "P01", 20_000_000),
        ("site_small", "P01", 500),
        ("site_foreign", "P02", 20_000_000),
    ] {
        let mut site_record = SiteBuilder::new(
            owner.parse().unwrap(),
            site,
            vec![format!("http://{site}.example/")],
        )
        .id(site.parse().unwrap())
        .build()
        .unwrap();
        site_record.audience = Some(audience);
        harness.stores.sites.put_site(&site_record).await.unwrap();
    }
    let copy = pirated_copy();
    let mut pages = Vec::new();
    for site in ["site_large", "site_small", "site_foreign", "site1"] {
        let url = format!("http://{site}.example/1.html");
        pages.push(
            harness
                .crawl_on(site, &url, &copy, FetchMeta::default())
                .await,
        );
    }
    harness.drain().await;
    let mut scores = Vec::new();
    for page in &pages {
        let found = harness.matches_of(page).await;
        assert_eq!(found.len(), 1, "{page}");
        scores.push(found[0].score);
    }
    let (large, small, foreign, unknown) = (scores[0], scores[1], scores[2], scores[3]);
    assert!(small < unknown && unknown < large, "{scores:?}");
    assert_eq!(
        foreign, unknown,
        "another publisher's estimate weighs nothing here"
    );
    assert!(small >= 0.5, "still an infringement: {small}");
}

/// A page's record is stored with its matches, and also when nothing
/// matched (no candidate at all, or candidates that fall short).
#[tokio::test]
async fn every_fingerprinted_page_keeps_its_record() {
    use copyhound_core::model::FingerprintOwner;
    use copyhound_fingerprint::FINGERPRINT_VERSION;

    let harness = harness().await;
    harness.register(Vec::new()).await;
    let copied = harness
        .crawl("http://pirate.example/1.html", &pirated_copy())
        .await;
    let quote: String = CHAPTER.chars().skip(200).take(90).collect();
    let review = format!("这是一篇读后感，作者引用了一段原文：{quote}。全文值得一读。");
    let quoting = harness
        .crawl("http://blog.example/review.html", &review)
        .await;
    let unrelated = harness
        .crawl(
            "http://blog.example/weather.html",
            &"今天天气晴朗，气温二十度，适合出门散步。".repeat(30),
        )
        .await;
    harness.drain().await;
    assert_eq!(harness.matches_of(&copied).await.len(), 1);
    for page_id in [copied, quoting, unrelated] {
        let record = harness
            .stores
            .fingerprints
            .get_fingerprint(
                &FingerprintOwner::Page {
                    page_id: page_id.clone(),
                },
                FINGERPRINT_VERSION,
            )
            .await
            .unwrap();
        let page = harness.stores.pages.get_page(&page_id).await.unwrap();
        assert_eq!(record.content_sha256, page.content_sha256, "{page_id}");
    }
}
