//! A watched site's friend links become suggestions for its publisher; each
//! is checked with robots.txt and one page, nothing more, until an admin
//! accepts it (a watched site with a first crawl queued) or dismisses it.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::Html;
use copyhound_core::config::Config;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{ReasonKind, SuggestionStatus, WorkKind};
use copyhound_core::ports::PageRequest;
use copyhound_core::site::SitePolicy;
use copyhound_crawler::NoProgress;
use copyhound_intake::formats::ChapterDraft;
use copyhound_intake::sites::{SiteSettings, create_site};
use copyhound_intake::suggestions;
use copyhound_intake::works::{Registrant, WorkMeta, register_work};
use copyhound_runtime::Node;

type Log = Arc<Mutex<Vec<String>>>;

/// Serves `home` at `/` (and `/robots.txt` allowing all), logging every path.
async fn serve(home: String) -> (String, Log) {
    let log = Log::default();
    let state = (log.clone(), home);
    let router = axum::Router::new()
        .fallback(
            |State((log, home)): State<(Log, String)>, uri: axum::http::Uri| async move {
                log.lock().unwrap().push(uri.path().to_string());
                match uri.path() {
                    "/" => Html(home).into_response(),
                    "/robots.txt" => "User-agent: *\nAllow: /\n".into_response(),
                    _ => axum::http::StatusCode::NOT_FOUND.into_response(),
                }
            },
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}"), log)
}

use axum::response::IntoResponse;

/// A node on the embedded default with publisher P01 and its work `w1`
/// ("星河彼岸", one chapter of `text`), and a worker that runs every stage.
struct Setup {
    _data: tempfile::TempDir,
    ports: copyhound_core::ports::Ports,
    worker: copyhound_runtime::Worker,
    publisher_id: PublisherId,
    work_id: WorkId,
}

async fn setup(text: &str) -> Setup {
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
    let work_id: WorkId = "w1".parse().unwrap();
    register_work(
        &ports,
        Registrant {
            publisher_id: &publisher_id,
            by: "test",
        },
        WorkMeta::new(
            Some(work_id.clone()),
            "星河彼岸",
            "某",
            WorkKind::Novel,
            None,
            None,
        )
        .unwrap(),
        vec![(
            Some("c1".parse::<ChapterId>().unwrap()),
            ChapterDraft {
                title: "第一章".into(),
                text: text.into(),
            },
        )],
        None,
    )
    .await
    .unwrap();
    Setup {
        _data: data,
        ports,
        worker,
        publisher_id,
        work_id,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn friend_links_are_suggested_checked_once_and_accepted_or_dismissed() {
    let Setup {
        _data,
        ports,
        worker,
        publisher_id,
        work_id,
    } = setup(&"叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。".repeat(10)).await;

    // A mirror that carries the work, and a site that does not answer.
    let (mirror, mirror_log) =
        serve("<html><head><title>星河彼岸最新章节 - 书屋</title></head><body><h1>星河彼岸</h1><a href=\"/book/1/\">目录</a></body></html>".into()).await;
    let gone = "http://127.0.0.1:1";
    let (watched, _) = serve(format!(
        "<html><body><p>友情链接：<a href=\"{mirror}/\">书屋</a> <a href=\"{gone}/x.html\">旧站</a></p></body></html>"
    ))
    .await;
    let site = create_site(
        &ports,
        &publisher_id,
        None,
        SiteSettings {
            name: Some("盗版站".into()),
            seeds: Some(vec![format!("{watched}/")]),
            rate_limit_per_second: Some(0.0),
            ..SiteSettings::default()
        },
        &SitePolicy::new(true),
        "test",
    )
    .await
    .unwrap();
    copyhound_intake::crawls::crawl_now(
        ports.sites.as_ref(),
        ports.queue.as_ref(),
        &site,
        std::time::Duration::from_secs(3600),
    )
    .await
    .unwrap();
    worker.tick_until_idle().await.unwrap();

    let listed = ports
        .sites
        .list_suggestions(
            &publisher_id,
            None,
            &PageRequest {
                after: None,
                limit: 50,
            },
        )
        .await
        .unwrap()
        .items;
    assert_eq!(listed.len(), 2, "{listed:#?}");
    let found = |origin: &str| listed.iter().find(|s| s.origin == origin).unwrap().clone();
    let verified = found(&mirror);
    assert_eq!(verified.status, SuggestionStatus::Verified, "{verified:#?}");
    assert_eq!(verified.reasons[0].kind, ReasonKind::Link);
    assert_eq!(verified.reasons[0].site_id.as_ref(), Some(&site.id));
    let check = verified.verification.as_ref().unwrap();
    assert_eq!(check.status, Some(200));
    assert_eq!(
        check.carries,
        vec![work_id.clone()],
        "the page names the work"
    );
    assert!(check.title.as_deref().unwrap().contains("星河彼岸"));
    assert_eq!(
        *mirror_log.lock().unwrap(),
        ["/robots.txt", "/"],
        "a site nobody accepted gets robots.txt and one page"
    );
    let unreachable = found(gone);
    assert_eq!(unreachable.status, SuggestionStatus::Unreachable);
    assert!(unreachable.verification.unwrap().error.is_some());

    // Crawling again adds nothing new and checks nothing again.
    copyhound_intake::crawls::crawl_now(
        ports.sites.as_ref(),
        ports.queue.as_ref(),
        &site,
        std::time::Duration::from_secs(3600),
    )
    .await
    .unwrap();
    worker.tick_until_idle().await.unwrap();
    assert_eq!(mirror_log.lock().unwrap().len(), 2);

    // Accepted: a watched site crawled from the mirror's home, first crawl queued.
    let (accepted, new_site) = suggestions::accept(
        &ports,
        &publisher_id,
        &verified.id,
        &SitePolicy::new(true),
        "admin",
    )
    .await
    .unwrap();
    assert_eq!(accepted.status, SuggestionStatus::Accepted);
    assert_eq!(new_site.seeds, [format!("{mirror}/")]);
    assert!(new_site.schedule.is_some(), "a watched site has a schedule");
    let again = suggestions::accept(
        &ports,
        &publisher_id,
        &verified.id,
        &SitePolicy::new(true),
        "admin",
    )
    .await
    .unwrap();
    assert_eq!(again.1.id, new_site.id, "accepting twice is one site");
    let run = ports
        .sites
        .list_crawl_runs(
            &new_site.id,
            &PageRequest {
                after: None,
                limit: 5,
            },
        )
        .await
        .unwrap();
    assert_eq!(run.items.len(), 1, "the first crawl is queued");
    // Dismissed: stays dismissed when named again.
    let dismissed = suggestions::dismiss(
        ports.sites.as_ref(),
        &publisher_id,
        &unreachable.id,
        "admin",
    )
    .await
    .unwrap();
    assert_eq!(dismissed.status, SuggestionStatus::Dismissed);
    let error = suggestions::dismiss(ports.sites.as_ref(), &publisher_id, &accepted.id, "admin")
        .await
        .unwrap_err();
    assert_eq!(error.kind(), copyhound_core::ErrorKind::Conflict);
    // Another publisher sees none of it.
    let other: PublisherId = "P02".parse().unwrap();
    assert!(
        ports
            .sites
            .get_suggestion(&other, &verified.id)
            .await
            .is_err()
    );
}

/// A site known from a book-source file keeps its search: a full crawl
/// searches it for the publisher's titles and follows the results to the
/// copy, which its home page never links to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sites_own_search_leads_the_crawl_to_a_copy_its_pages_do_not_link() {
    let text = include_str!("../../cli/samples/registered-chapter.txt");
    let Setup {
        _data,
        ports,
        worker,
        publisher_id,
        ..
    } = setup(text).await;

    let log = Log::default();
    let paragraphs: String = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| format!("<p>{line}</p>"))
        .collect();
    let state = (log.clone(), paragraphs);
    let router = axum::Router::new()
        .fallback(
            |State((log, paragraphs)): State<(Log, String)>, uri: axum::http::Uri| async move {
                log.lock()
                    .unwrap()
                    .push(uri.path_and_query().unwrap().to_string());
                let query = uri.query().unwrap_or_default().to_string();
                match uri.path() {
                    "/" => Html("<html><body><p>首页</p></body></html>".to_string()).into_response(),
                    "/search.php" if query.contains("%E6%98%9F%E6%B2%B3%E5%BD%BC%E5%B2%B8") => Html(
                        "<html><body><a href=\"/book/9/\">星河彼岸</a></body></html>".to_string(),
                    )
                    .into_response(),
                    "/search.php" => Html("<html><body>无结果</body></html>".to_string()).into_response(),
                    "/book/9/" => Html(
                        "<html><body><a href=\"/book/9/1.html\">第一章</a></body></html>".to_string(),
                    )
                    .into_response(),
                    "/book/9/1.html" => Html(format!(
                        "<html><body><h1>第一章</h1><div id=\"content\">{paragraphs}</div></body></html>"
                    ))
                    .into_response(),
                    _ => axum::http::StatusCode::NOT_FOUND.into_response(),
                }
            },
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let sources = format!(
        r#"[{{"bookSourceName": "书屋", "bookSourceUrl": "{origin}", "searchUrl": "/search.php?searchkey={{{{key}}}}"}}]"#
    );
    let (recorded, _) =
        suggestions::import_book_sources(&ports, &publisher_id, "sources.json", sources.as_bytes())
            .await
            .unwrap();
    let (_, site) = suggestions::accept(
        &ports,
        &publisher_id,
        &recorded.new[0],
        &SitePolicy::new(true),
        "admin",
    )
    .await
    .unwrap();
    assert_eq!(
        site.search_url.as_deref(),
        Some(format!("{origin}/search.php?searchkey={{{{key}}}}").as_str())
    );
    worker.tick_until_idle().await.unwrap();

    let requests = log.lock().unwrap().clone();
    assert!(
        requests
            .contains(&"/search.php?searchkey=%E6%98%9F%E6%B2%B3%E5%BD%BC%E5%B2%B8".to_string()),
        "{requests:?}"
    );
    assert!(
        requests.contains(&"/book/9/1.html".to_string()),
        "{requests:?}"
    );
    let matches = ports
        .matches
        .list_matches(
            &copyhound_core::ports::MatchFilter::of_publisher(publisher_id.clone()),
            &PageRequest {
                after: None,
                limit: 10,
            },
        )
        .await
        .unwrap()
        .items;
    assert_eq!(
        matches.len(),
        1,
        "the copy found through the search is matched"
    );
    assert!(matches[0].page_url.ends_with("/book/9/1.html"));
}
