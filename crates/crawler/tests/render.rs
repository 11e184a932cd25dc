//! Sites whose chapters arrive by JavaScript, rendered by headless Chromium:
//! text loaded by `fetch()`, by XHR and written by `document.write` is stored;
//! the browser's requests go through the crawler (robots.txt obeyed, images
//! never fetched). Skipped where no `chromium` is installed, except under CI.
#![allow(clippy::unwrap_used)] // tests may unwrap (STYLE.md rule 16)

mod common;
#[path = "render/isolation.rs"]
mod isolation;
#[path = "render/limits.rs"]
mod limits;
#[path = "render/network.rs"]
mod network;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::IntoResponse;
use common::{RequestLog, harness, serve_logged, site, test_config};
use copyhound_core::model::Render;

const CHAPTER: &str = "叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。";

fn chromium() -> Option<String> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            if dir.join(name).is_file() {
                return Some(dir.join(name).display().to_string());
            }
        }
    }
    assert!(
        std::env::var("CI").is_err(),
        "CI=true: chromium must be installed (deploy/dev/services.sh installs it)"
    );
    None
}

fn page(script: &str) -> String {
    format!(
        "<html><head><title>第一章</title></head><body><nav><a href=\"/1.html\">1</a> <a href=\"/2.html\">2</a> \
         <a href=\"/3.html\">3</a> <a href=\"/4.html\">4</a></nav><img src=\"/cover.png\">\
         <div id=\"content\"></div><script>{script}</script></body></html>"
    )
}

async fn serve(State(log): State<RequestLog>, request: Request) -> axum::response::Response {
    let path = request.uri().path().to_string();
    log.lock().unwrap().push(path.clone());
    let text = CHAPTER.repeat(12);
    let fill = "document.getElementById('content').innerHTML = '<p>' + t + '</p>'";
    let html =
        |body: String| ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    match path.as_str() {
        "/robots.txt" => "User-agent: *\nDisallow: /secret/\n".into_response(),
        "/1.html" => html(page(&format!(
            "fetch('/api/1.json').then(r => r.json()).then(d => {{ const t = d.text; {fill}; }});"
        ))),
        "/2.html" => html(page(&format!(
            "const x = new XMLHttpRequest(); x.open('GET', '/api/2.txt'); \
             x.onload = () => {{ const t = x.responseText; {fill}; }}; x.send();"
        ))),
        "/3.html" => html(format!(
            "<html><body><script>document.write('<div id=\"content\"><p>' + {} + '</p></div>');</script></body></html>",
            serde_json::to_string(&text).unwrap()
        )),
        "/4.html" => html(page(&format!(
            "fetch('/secret/4.json').then(r => r.json()).then(d => {{ const t = d.text; {fill}; }});"
        ))),
        "/api/1.json" | "/secret/4.json" => (
            [(header::CONTENT_TYPE, "application/json")],
            serde_json::json!({ "text": text }).to_string(),
        )
            .into_response(),
        "/api/2.txt" => text.into_response(),
        _ => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

#[tokio::test]
async fn chapters_loaded_by_javascript_are_rendered_through_the_crawler() {
    let Some(chromium) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let (origin, log) = serve_logged(serve).await;
    let mut config = test_config();
    config.chromium = chromium;
    config.total_timeout_ms = 5_000;
    let test = harness(config).await;
    let mut site = site(&format!("{origin}/1.html"));
    site.extraction.render = Render::Chromium;
    test.sites.put_site(&site).await.unwrap();
    test.crawl(&site).await;
    let pages = test.all_pages().await;
    let text_of = |path: &str| {
        pages
            .iter()
            .find(|page| page.url == format!("{origin}{path}"))
            .map(|page| page.text.clone())
            .unwrap_or_else(|| panic!("{path} not stored: {pages:?}"))
    };
    for path in ["/1.html", "/2.html", "/3.html"] {
        assert!(
            text_of(path).contains(&CHAPTER.repeat(3)),
            "{path}: {}",
            text_of(path)
        );
    }
    assert!(
        !text_of("/4.html").contains(CHAPTER),
        "robots.txt keeps /secret/ out"
    );
    let requested = log.lock().unwrap().clone();
    assert!(
        !requested.iter().any(|path| path.starts_with("/secret/")),
        "{requested:?}"
    );
    assert!(
        !requested.contains(&"/cover.png".to_string()),
        "{requested:?}"
    );
    assert_eq!(
        requested
            .iter()
            .filter(|path| *path == "/api/1.json")
            .count(),
        1,
        "{requested:?}"
    );
}

/// A chapter shipped as a base64 blob that the page's own script decodes
/// (reprint sites' cipher): rendered although the site is not marked
/// `render = "chromium"`; an ordinary page of the same site is not.
#[tokio::test]
async fn a_page_that_decodes_its_chapter_by_script_is_rendered_unasked() {
    use base64::Engine;
    let Some(chromium) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let text = CHAPTER.repeat(20);
    let blob = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let ciphered = format!(
        "<html><body><div id=\"c\">内容加载中…</div><script>var d=\"{blob}\";\
         var b=atob(d),u=new Uint8Array(b.length);for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);\
         document.getElementById('c').innerHTML='<p>'+new TextDecoder().decode(u)+'</p>';</script>\
         <a href=\"/plain.html\">下一章</a></body></html>"
    );
    let plain = format!(
        "<html><body><div id=\"c\"><p>{}</p></div><script>document.getElementById('c').innerHTML='<p>改写</p>';</script></body></html>",
        "路上行人欲断魂。".repeat(20)
    );
    let origin = common::serve_at(move |_| {
        let html = |body: String| {
            move || async move {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
            }
        };
        axum::Router::new()
            .route("/c.html", axum::routing::get(html(ciphered)))
            .route("/plain.html", axum::routing::get(html(plain)))
    })
    .await;
    let mut config = test_config();
    config.chromium = chromium;
    config.total_timeout_ms = 5_000;
    let test = harness(config).await;
    let site = site(&format!("{origin}/c.html"));
    assert_eq!(site.extraction.render, Render::Auto);
    test.sites.put_site(&site).await.unwrap();
    let run = test.crawl(&site).await;
    assert_eq!(run.counters.rendered, 1, "only the ciphered page: {run:?}");
    assert!(run.counters.render_ms > 0, "{run:?}");
    assert!(run.counters.unreadable.is_empty(), "{run:?}");
    let pages = test.all_pages().await;
    let text_of = |path: &str| {
        pages
            .iter()
            .find(|page| page.url == format!("{origin}{path}"))
            .map(|page| page.text.clone())
            .unwrap_or_else(|| panic!("{path} not stored: {pages:?}"))
    };
    assert!(
        text_of("/c.html").contains(&CHAPTER.repeat(3)),
        "{}",
        text_of("/c.html")
    );
    assert!(
        text_of("/plain.html").contains("路上行人欲断魂"),
        "an ordinary page is read as served: {}",
        text_of("/plain.html")
    );
}

/// Paragraphs shipped shuffled and put back in order by the page's script,
/// no cipher in sight: the text as served is a placeholder, so `render =
/// "auto"` renders it; `render = "never"` stores it and reports it unreadable
/// with the reason instead of passing it off as a clean page.
#[tokio::test]
async fn a_thin_page_written_by_script_is_rendered_in_auto_and_unreadable_in_never() {
    let Some(chromium) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let paragraphs: Vec<String> = (0..6).map(|n| format!("\"{n}{}\"", CHAPTER)).collect();
    let shuffled = format!(
        "<html><body><div id=\"c\">加载中</div><script>var p=[{}],o=[5,4,3,2,1,0];\
         o.forEach(function(i){{document.getElementById('c').insertAdjacentHTML('beforeend','<p>'+p[i]+'</p>')}});\
         </script></body></html>",
        paragraphs.join(",")
    );
    let origin = common::serve_at(move |_| {
        let body = shuffled.clone();
        axum::Router::new().route(
            "/s.html",
            axum::routing::get(move || async move {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
            }),
        )
    })
    .await;
    for (render, rendered) in [(Render::Auto, true), (Render::Never, false)] {
        let mut config = test_config();
        config.chromium = chromium.clone();
        config.total_timeout_ms = 5_000;
        let test = harness(config).await;
        let mut site = site(&format!("{origin}/s.html"));
        site.extraction.render = render;
        test.sites.put_site(&site).await.unwrap();
        let run = test.crawl(&site).await;
        let pages = test.all_pages().await;
        let page = &pages[0];
        assert_eq!(
            page.text.contains(CHAPTER),
            rendered,
            "{render:?}: {}",
            page.text
        );
        assert_eq!(page.fetch.reading.rendered, rendered, "{render:?}");
        assert_eq!(
            run.counters.rendered,
            u64::from(rendered),
            "{render:?}: {run:?}"
        );
        if rendered {
            assert!(run.counters.unreadable.is_empty(), "{run:?}");
            assert!(page.fetch.reading.unreadable.is_none());
        } else {
            assert_eq!(
                run.counters.unreadable.get("script_not_run"),
                Some(&1),
                "{run:?}"
            );
            assert_eq!(
                page.fetch.reading.unreadable.as_deref(),
                Some("script_not_run")
            );
            assert!(
                run.recent_errors
                    .iter()
                    .any(|error| error.contains("unreadable") && error.contains("/s.html")),
                "{run:?}"
            );
        }
    }
}

/// Text left in private-use code points (a site font that was not decoded)
/// is stored, counted unreadable and named; no browser is involved.
#[tokio::test]
async fn text_left_in_private_use_code_points_is_reported_unreadable() {
    let coded: String = (0xE000u32..0xE0C0).filter_map(char::from_u32).collect();
    let body = format!("<html><body><div id=\"c\"><p>{coded}</p></div></body></html>");
    let origin = common::serve_at(move |_| {
        let body = body.clone();
        axum::Router::new().route(
            "/f.html",
            axum::routing::get(move || async move {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
            }),
        )
    })
    .await;
    let test = harness(test_config()).await;
    let site = site(&format!("{origin}/f.html"));
    test.sites.put_site(&site).await.unwrap();
    let run = test.crawl(&site).await;
    assert_eq!(
        run.counters.unreadable.get("private_use"),
        Some(&1),
        "{run:?}"
    );
    assert_eq!(run.counters.rendered, 0);
    let pages = test.all_pages().await;
    assert_eq!(
        pages[0].fetch.reading.unreadable.as_deref(),
        Some("private_use")
    );
}
