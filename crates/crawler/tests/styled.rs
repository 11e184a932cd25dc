//! Pages are stored as a reader sees them: decoys hidden by the page's own CSS
//! and by same-site sheets are not in the text, flex chunks are in reading
//! order, and each sheet is fetched once per run (never from another host).
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use common::{harness, serve, site, test_config};

const PARAGRAPH: &str = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。";

fn chapter(number: usize) -> String {
    // Every few characters a decoy that a linked sheet hides (.dk) or the
    // page's own style block hides (.zx); the second paragraph in flex chunks.
    let decoyed: String = PARAGRAPH
        .chars()
        .enumerate()
        .map(|(at, c)| match at % 5 {
            2 => format!("{c}<i class=\"dk\">假</i>"),
            4 => format!("{c}<b class=\"zx\">伪</b>"),
            _ => c.to_string(),
        })
        .collect();
    format!(
        "<html><head><link rel=\"stylesheet\" href=\"/css/site.css\">\
         <link rel=\"stylesheet\" href=\"http://192.0.2.1/cdn.css\"></head><body>\
         <style>.zx{{font-size:0}} .q{{display:inline-flex}}</style><div id=\"content\">\
         <p>{decoyed}</p><p>{}</p><p><span class=\"q\"><span style=\"order:2\">行至街上，</span>\
         <span style=\"order:1\">出了酒店，</span></span></p>\
         <a href=\"/{}.html\">下一章</a></div></body></html>",
        PARAGRAPH.repeat(4),
        number + 1
    )
}

#[tokio::test]
async fn pages_are_stored_as_read_through_their_css() {
    let sheet_fetches = Arc::new(AtomicUsize::new(0));
    let counter = sheet_fetches.clone();
    let router = Router::new()
        .route(
            "/css/site.css",
            get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                async {
                    (
                        [(header::CONTENT_TYPE, "text/css")],
                        ".dk { display: none }",
                    )
                }
            }),
        )
        .route(
            "/{page}",
            get(
                |axum::extract::Path(page): axum::extract::Path<String>| async move {
                    let number: usize = page.trim_end_matches(".html").parse().unwrap_or(1);
                    let body = if number <= 3 {
                        chapter(number)
                    } else {
                        String::new()
                    };
                    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
                },
            ),
        );
    let address = serve(router).await;
    let test = harness(test_config()).await;
    let site = site(&format!("http://{address}/1.html"));
    test.sites.put_site(&site).await.unwrap();
    test.crawl(&site).await;
    let pages = test.all_pages().await;
    let chapters: Vec<_> = pages
        .iter()
        .filter(|page| page.text.contains("叔宝"))
        .collect();
    assert_eq!(chapters.len(), 3, "{pages:?}");
    for page in chapters {
        assert!(
            !page.text.contains('假') && !page.text.contains('伪'),
            "{}",
            page.text
        );
        assert!(page.text.starts_with(PARAGRAPH), "{}", page.text);
        assert!(page.text.contains("出了酒店，行至街上，"), "{}", page.text);
    }
    assert_eq!(sheet_fetches.load(Ordering::SeqCst), 1, "one fetch per run");
}

#[tokio::test]
async fn a_page_whose_css_runs_out_of_time_is_read_as_markup_and_counted() {
    // 300 rules that each walk the ancestors per ancestor, over 300 nested
    // divs: tens of seconds of matching, cut at the budget.
    let mut selector = String::from("span");
    for _ in 0..2 {
        selector = format!(":is({selector} div)");
    }
    let css: String = (0..300)
        .map(|index| format!("{selector} {{ color: #00{index:04} }}\n"))
        .collect();
    let page = format!(
        "<html><body><style>.dk{{display:none}}\n{css}</style>{}<p>{PARAGRAPH}<i class=\"dk\">假</i></p>{}</body></html>",
        "<div>".repeat(300),
        "</div>".repeat(300)
    );
    let router = Router::new().route(
        "/1.html",
        get(move || async move {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
        }),
    );
    let address = serve(router).await;
    let test = harness(test_config()).await;
    let site = site(&format!("http://{address}/1.html"));
    test.sites.put_site(&site).await.unwrap();
    let run = test.crawl(&site).await;
    assert_eq!(
        run.counters
            .skipped
            .get(copyhound_crawler::crawl::CSS_BUDGET),
        Some(&1),
        "{run:?}"
    );
    assert_eq!(run.counters.fetched, 1);
    assert_eq!(run.status.as_str(), "succeeded");
    let pages = test.all_pages().await;
    assert!(
        pages[0].text.contains(&format!("{PARAGRAPH}假")),
        "{pages:?}"
    );
}
