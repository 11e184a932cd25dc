//! The admin UI in a real headless Chromium, driven over the DevTools protocol:
//! log in with a key, open the dashboard, open a match, confirm it, screenshot.
//!
//! Without a `chromium` binary the test is skipped with a note, unless `CI=true`,
//! where a missing browser fails it.

use serde_json::json;

use super::Harness;
use crate::testsuite::browser::{Browser, chromium_or_skip, screenshot_dir};
use copyhound_core::model::MatchStatus;

/// The console served on a loopback port for a browser test.
struct Console {
    base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<copyhound_core::Result<()>>,
}

impl Console {
    async fn start(harness: &Harness) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::serve_listener(
            harness.state.clone(),
            listener,
            async move {
                let _ = stopped.await;
            },
        ));
        Self { base, stop, server }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.server.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn review_a_match_in_headless_chromium() {
    let Some(binary) = chromium_or_skip("the UI test") else {
        return;
    };
    let harness = Harness::new().await;
    let work = harness.register_work_a("w_ui").await;
    let site = harness.create_site_a().await;
    for (number, age) in [(1, 0), (2, 1), (3, 1), (4, 3), (5, 8)] {
        harness
            .insert_match(
                &work,
                &site,
                &format!("http://pirate.example/book/{number}.html"),
                0.92,
                age,
            )
            .await;
    }
    let console = Console::start(&harness).await;
    let base = console.base.clone();

    let mut browser = Browser::launch(&binary).await;
    browser.navigate(&format!("{base}/")).await;
    browser.wait_for("location.pathname === '/login'").await;
    browser.log_in(&harness.key_a).await;
    browser.wait_for("location.pathname === '/' && document.readyState === 'complete' && !!document.querySelector('#chart svg')").await;
    let bars = browser
        .eval("document.querySelectorAll('#chart rect').length")
        .await;
    assert_eq!(bars, json!(30));
    browser
        .wait_for("document.querySelectorAll('a.match-link').length === 5")
        .await;

    browser
        .eval("document.querySelector('a.match-link').click(); true")
        .await;
    browser.wait_for("location.pathname.startsWith('/ui/matches/') && document.readyState === 'complete' && !!document.getElementById('confirm')").await;
    let marks = browser
        .eval("document.querySelectorAll('#chapter-text mark, #page-text mark').length")
        .await;
    assert_eq!(marks, json!(2));
    let status = browser
        .eval("document.getElementById('match-status').textContent")
        .await;
    assert_eq!(status, json!("new"));
    let match_path = browser.eval("location.pathname").await;

    browser.eval("document.querySelector('input[name=note]').value = '整章复制'; document.getElementById('confirm').click(); true").await;
    browser.wait_for("document.readyState === 'complete' && document.getElementById('match-status')?.textContent === 'confirmed'").await;
    assert_eq!(browser.eval("location.pathname").await, match_path);
    browser.screenshot("match-confirmed.png").await;
    browser.navigate(&format!("{base}/")).await;
    browser.screenshot("dashboard.png").await;
    eprintln!("screenshots in {}", screenshot_dir().display());

    let match_id = match_path
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let stored = harness
        .state
        .ports
        .matches
        .get_match(&harness.publisher_a, &match_id)
        .await
        .unwrap();
    assert_eq!(stored.status, MatchStatus::Confirmed);
    assert_eq!(stored.reviews[0].note.as_deref(), Some("整章复制"));
    assert!(stored.reviews[0].by.starts_with("key_"));

    // A copy deep in a long page: its pane opens at the copied passage.
    let padding = "本站推荐：热门小说免费阅读\n".repeat(120);
    let long_page = format!("{padding}天色已晚，林中起了大风。\n少年背着柴往回走。\n本站域名");
    let deep = harness
        .insert_match_on_page(
            &harness.publisher_a,
            &work,
            &site,
            "http://pirate.example/book/long.html",
            0.9,
            0,
            &long_page,
            u32::try_from(padding.chars().count()).unwrap(),
        )
        .await;
    browser.navigate(&format!("{base}/ui/matches/{deep}")).await;
    browser
        .wait_for(
            "document.readyState === 'complete' && !!document.querySelector('#page-text mark')",
        )
        .await;
    let opened_at_copy = browser
        .eval(
            "(() => { const pane = document.getElementById('page-text'); \
             const mark = pane.querySelector('mark'); \
             const p = pane.getBoundingClientRect(), m = mark.getBoundingClientRect(); \
             return pane.scrollTop > 0 && m.top >= p.top && m.bottom <= p.bottom; })()",
        )
        .await;
    assert_eq!(
        opened_at_copy,
        json!(true),
        "the page pane opens at the copied passage"
    );

    browser.child.kill().await.unwrap();
    console.stop().await;
}

/// A publisher's admin runs the console alone: registers a work by upload
/// (previewing and retitling a chapter), adds a site and crawls it, reviews
/// two matches at once, and generates and downloads a report.
#[tokio::test]
async fn a_publisher_runs_the_console_flows_in_headless_chromium() {
    let Some(binary) = chromium_or_skip("the console flows") else {
        return;
    };
    let harness = Harness::new().await;
    let admin = harness.admin_key("pub_a", "Wang Fang").await;
    let console = Console::start(&harness).await;
    let base = console.base.clone();
    let mut browser = Browser::launch(&binary).await;
    browser.navigate(&format!("{base}/login")).await;
    browser.log_in(&admin).await;
    browser
        .wait_for("location.pathname === '/' && document.readyState === 'complete'")
        .await;

    // Register a work by upload: preview, retitle chapter one, confirm.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("风起青萍.txt");
    std::fs::write(
        &file,
        "第一章 风起\n天色已晚，林中起了大风。\n第二章 云涌\n少年背着柴往回走。\n",
    )
    .unwrap();
    browser.navigate(&format!("{base}/ui/works")).await;
    browser.set_file("#upload-file", &file).await;
    browser
        .eval("document.querySelector('#upload-form input[name=title]').value = '风起青萍'; document.getElementById('upload-form').submit(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && document.getElementById('preview-count')?.textContent === '2'")
        .await;
    browser.screenshot("console-upload-preview.png").await;
    browser
        .eval("document.querySelector('input[name=title_0]').value = '第一章 大风'; document.getElementById('confirm-upload').click(); true")
        .await;
    browser
        .wait_for(
            "document.readyState === 'complete' && location.pathname.startsWith('/ui/works/w')",
        )
        .await;
    let work_path = browser.eval("location.pathname").await;
    let work_id = work_path
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let chapters = harness
        .state
        .ports
        .works
        .list_chapters(&work_id.parse().unwrap())
        .await
        .unwrap();
    assert_eq!(chapters.len(), 2);
    assert_eq!(chapters[0].title, "第一章 大风");

    // Add a site, then crawl it now: a queued run appears.
    browser.navigate(&format!("{base}/ui/sites")).await;
    browser
        .eval("const f = document.getElementById('site-form'); f.name.value = '盗版小说网'; f.seeds.value = 'http://127.0.0.1:8001/'; f.submit(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && !!document.getElementById('crawl-now')")
        .await;
    browser
        .eval("document.getElementById('crawl-now').click(); true")
        .await;
    browser
        .wait_for(
            "document.readyState === 'complete' && document.body.textContent.includes('queued')",
        )
        .await;
    let site_path = browser.eval("location.pathname").await;
    let site_id: copyhound_core::ids::SiteId = browser
        .eval("location.pathname.split('/').pop()")
        .await
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    // Two matches on the site, reviewed at once from the list.
    let work: copyhound_core::ids::WorkId = work_id.parse().unwrap();
    for number in 1..=3 {
        harness
            .insert_match(
                &work,
                &site_id,
                &format!("http://127.0.0.1:8001/{number}.html"),
                0.9,
                0,
            )
            .await;
    }
    browser
        .navigate(&format!("{base}/ui/matches?status=new"))
        .await;
    browser
        .eval("const picks = document.querySelectorAll('input.pick'); picks[0].click(); picks[1].click(); document.querySelector('#bulk-form input[name=note]').value = '整章复制'; document.getElementById('bulk-confirm').click(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && document.querySelectorAll('input.pick').length === 1")
        .await;
    browser.navigate(&format!("{base}/ui/matches")).await;
    // The page's own inline handlers run under its Content-Security-Policy.
    let all_picked = browser
        .eval("document.getElementById('select-all').click(); [...document.querySelectorAll('input.pick')].every(box => box.checked)")
        .await;
    assert_eq!(all_picked, json!(true));
    browser.screenshot("console-matches.png").await;
    let confirmed = browser
        .eval("[...document.querySelectorAll('#matches .status')].filter(s => s.textContent === 'confirmed').length")
        .await;
    assert_eq!(confirmed, json!(2));
    browser
        .navigate(&format!("{base}{}", site_path.as_str().unwrap()))
        .await;
    assert_eq!(
        browser
            .eval("document.getElementById('copied-pages').textContent")
            .await,
        json!("3")
    );
    browser.screenshot("console-site.png").await;

    // Generate a report; a worker renders it; download it.
    browser.navigate(&format!("{base}/ui/reports")).await;
    browser
        .eval("document.getElementById('report-format').value = 'html'; document.getElementById('generate').click(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && document.querySelectorAll('#reports .report-status').length === 1")
        .await;
    harness.render_queued_reports().await;
    browser.navigate(&format!("{base}/ui/reports")).await;
    browser
        .wait_for("!!document.querySelector('a.download')")
        .await;
    browser.screenshot("console-reports.png").await;
    let download = browser
        .eval_async("fetch(document.querySelector('a.download').href).then(async r => [r.status, r.headers.get('content-disposition'), (await r.text()).includes('127.0.0.1:8001')])")
        .await;
    assert_eq!(download[0], json!(200), "{download}");
    assert_eq!(
        download[2],
        json!(true),
        "the report lists the pages: {download}"
    );
    assert!(
        download[1]
            .as_str()
            .unwrap()
            .starts_with("attachment; filename=\"copyhound-"),
        "{download}"
    );

    // The same console in Chinese, kept by the switch link's cookie.
    browser.navigate(&format!("{base}/ui/lang/zh")).await;
    browser
        .navigate(&format!("{base}{}", site_path.as_str().unwrap()))
        .await;
    assert_eq!(
        browser
            .eval("document.querySelector('header a[href=\"/ui/works\"]').textContent")
            .await,
        json!("作品")
    );
    browser.screenshot("console-site-zh.png").await;
    eprintln!("screenshots in {}", screenshot_dir().display());

    browser.child.kill().await.unwrap();
    console.stop().await;
}
