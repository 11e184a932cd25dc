//! A release sends the crawler back to where the work lives: a site crawled
//! once is known to carry the work through the list page that led to its
//! copy; when the publisher adds a chapter, the first visit of the burst
//! fetches that list page and the one new chapter it links, nothing else,
//! and the copy of the new chapter is matched.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::response::Html;
use copyhound_core::config::Config;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{MatchStatus, WorkKind};
use copyhound_core::ports::{MatchFilter, PageRequest};
use copyhound_core::site::SitePolicy;
use copyhound_crawler::NoProgress;
use copyhound_intake::formats::ChapterDraft;
use copyhound_intake::sites::{SiteSettings, create_site};
use copyhound_intake::works::{Registrant, WorkMeta, register_work};
use copyhound_runtime::Node;

const TEXT: &str = include_str!("../../cli/samples/registered-chapter.txt");

/// The two chapters: the sample's two halves, by paragraph.
fn chapters() -> [String; 2] {
    let lines: Vec<&str> = TEXT
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let half = lines.len() / 2;
    [lines[..half].join("\n"), lines[half..].join("\n")]
}

/// A piracy site: a home page, the book's list page and the chapters it has
/// copied so far; every request is logged.
#[derive(Clone, Default)]
struct Site {
    copied: Arc<Mutex<usize>>,
    requests: Arc<Mutex<Vec<String>>>,
}

async fn home(State(site): State<Site>) -> Html<String> {
    site.requests.lock().unwrap().push("/".into());
    Html(r#"<html><body><a href="/book/7/">某小说</a></body></html>"#.into())
}

async fn list(State(site): State<Site>) -> Html<String> {
    site.requests.lock().unwrap().push("/book/7/".into());
    let copied = *site.copied.lock().unwrap();
    let links: String = (1..=copied)
        .map(|n| format!(r#"<li><a href="/book/7/{n}.html">第{n}章</a></li>"#))
        .collect();
    Html(format!(
        "<html><body><h1>某小说 目录</h1><ul>{links}</ul></body></html>"
    ))
}

async fn chapter(State(site): State<Site>, Path(file): Path<String>) -> Html<String> {
    site.requests
        .lock()
        .unwrap()
        .push(format!("/book/7/{file}"));
    let number: usize = file.trim_end_matches(".html").parse().unwrap_or(0);
    let text = chapters()
        .get(number.wrapping_sub(1))
        .cloned()
        .unwrap_or_default();
    let paragraphs: String = text.lines().map(|line| format!("<p>{line}</p>")).collect();
    Html(format!(
        "<html><body><h1>第{number}章</h1><div id=\"content\">{paragraphs}</div></body></html>"
    ))
}

async fn serve(site: Site) -> String {
    let router = axum::Router::new()
        .route("/", axum::routing::get(home))
        .route("/book/7/", axum::routing::get(list))
        .route("/book/7/{file}", axum::routing::get(chapter))
        .with_state(site);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{address}")
}

fn draft(number: usize) -> (Option<ChapterId>, ChapterDraft) {
    (
        Some(format!("c{number}").parse().unwrap()),
        ChapterDraft {
            title: format!("第{number}章"),
            text: chapters()[number - 1].clone(),
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_chapter_is_found_by_revisiting_the_list_page_that_led_to_the_last_one() {
    let data = tempfile::tempdir().unwrap();
    let mut config = Config {
        data_dir: data.path().to_path_buf(),
        ..Config::default()
    };
    config.crawler.allow_private_addresses = true;
    let node = Node::build(&config).await.unwrap();
    let ports = node.backends().ports();
    let worker = node.worker(Some(2), Arc::new(NoProgress)).unwrap();

    let publisher_id: PublisherId = "P01".parse().unwrap();
    copyhound_intake::import::ensure_publisher(&ports, &publisher_id, WorkKind::Novel)
        .await
        .unwrap();
    let by = Registrant {
        publisher_id: &publisher_id,
        by: "test",
    };
    let work_id: WorkId = "w1".parse().unwrap();
    let meta = || {
        WorkMeta::new(
            Some(work_id.clone()),
            "某小说",
            "某",
            WorkKind::Novel,
            None,
            None,
        )
        .unwrap()
    };
    register_work(&ports, by, meta(), vec![draft(1)], None)
        .await
        .unwrap();

    // The site has copied chapter 1; one full crawl finds it.
    let site = Site::default();
    *site.copied.lock().unwrap() = 1;
    let base = serve(site.clone()).await;
    let watched_site = create_site(
        &ports,
        &publisher_id,
        None,
        SiteSettings {
            name: Some("盗版站".into()),
            seeds: Some(vec![format!("{base}/")]),
            rate_limit_per_second: Some(0.0),
            ..SiteSettings::default()
        },
        &SitePolicy::new(true),
        "test",
    )
    .await
    .unwrap();
    worker.tick_until_idle().await.unwrap();
    copyhound_intake::crawls::crawl_now(
        ports.sites.as_ref(),
        ports.queue.as_ref(),
        &watched_site,
        std::time::Duration::from_secs(3600),
    )
    .await
    .unwrap();
    worker.tick_until_idle().await.unwrap();
    let matched = |chapter: &str| {
        let ports = ports.clone();
        let filter = MatchFilter {
            chapter_id: Some(chapter.parse().unwrap()),
            statuses: vec![MatchStatus::New],
            ..MatchFilter::of_publisher(publisher_id.clone())
        };
        async move {
            ports
                .matches
                .list_matches(
                    &filter,
                    &PageRequest {
                        after: None,
                        limit: 10,
                    },
                )
                .await
                .unwrap()
                .items
        }
    };
    assert_eq!(
        matched("c1").await.len(),
        1,
        "the full crawl matched chapter 1"
    );
    let watched = copyhound_intake::watch::watched_pages(&ports, &work_id)
        .await
        .unwrap();
    assert_eq!(watched.len(), 1, "{watched:?}");
    assert_eq!(watched[0].url, format!("{base}/book/7/"));
    assert_eq!(watched[0].chapters, 1);

    // The publisher releases chapter 2; the site copies it at once.
    *site.copied.lock().unwrap() = 2;
    site.requests.lock().unwrap().clear();
    let stored = ports.works.get_work_any(&work_id).await.unwrap();
    let released = register_work(&ports, by, meta(), vec![draft(1), draft(2)], Some(stored))
        .await
        .unwrap();
    let release = released
        .work
        .released_at
        .expect("a new chapter is a release");
    worker.tick_until_idle().await.unwrap();

    assert_eq!(
        matched("c2").await.len(),
        1,
        "the burst found chapter 2's copy"
    );
    let requests = site.requests.lock().unwrap().clone();
    assert_eq!(
        requests,
        ["/book/7/", "/book/7/2.html"],
        "only the list page and the new chapter are fetched"
    );
    let runs = ports
        .sites
        .list_crawl_runs(
            &watched_site.id,
            &PageRequest {
                after: None,
                limit: 10,
            },
        )
        .await
        .unwrap()
        .items;
    let burst = runs
        .iter()
        .find(|run| run.scope.is_some())
        .expect("the burst's targeted run is recorded");
    assert!(
        burst
            .scope
            .as_ref()
            .unwrap()
            .reason
            .contains("release burst"),
        "{burst:?}"
    );

    // The next visit waits for its turn on the curve, 20 s after the release.
    let stats = ports.queue.stats().await.unwrap();
    assert_eq!(stats.depth + stats.in_flight, 1, "{stats:?}");

    // Registering the same chapters again is no release: no new burst.
    let stored = ports.works.get_work_any(&work_id).await.unwrap();
    let again = register_work(&ports, by, meta(), vec![draft(1), draft(2)], Some(stored))
        .await
        .unwrap();
    assert_eq!(again.work.released_at, Some(release));
    let stats = ports.queue.stats().await.unwrap();
    assert_eq!(
        stats.depth + stats.in_flight,
        2,
        "fingerprinting only: {stats:?}"
    );
}
