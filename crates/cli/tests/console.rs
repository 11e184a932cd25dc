//! A new publisher's whole journey in the console of a real `copyhound serve`
//! (embedded default: workers and schedulers in the process), driven in
//! headless Chromium with nothing but the UI: the operator creates the
//! publisher and its first admin; the admin uploads a work and retitles it,
//! adds a pirate site and crawls it, confirms what was found, sets an e-mail
//! alert and a report schedule, generates and downloads a report, sorts the
//! matches by score, sets the policy, adds a reviewer, and the alert reaches
//! the SMTP server. Needs Chromium and the test SMTP sink (`deploy/dev/services.sh`);
//! with CI=true a missing one fails the test.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use copyhound_core::test_services::{SMTP_URL, service_url};
use copyhound_server::testsuite::browser::{Browser, chromium_or_skip};
use serde_json::json;
use support::{CHAPTER, PIRATED, filler, free_port, page};

const TEST: &str = "a_new_publisher_goes_from_an_empty_account_to_a_report_and_an_e_mail";
const OPERATOR_KEY: &str = "operator-console-journey";

/// `copyhound serve`, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn write_site(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("copy.html"), PIRATED).unwrap();
    std::fs::write(dir.join("other.html"), page("杂谈", &filler(1500, 3))).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<html><head><meta charset=\"utf-8\"><title>首页</title></head><body><ul>\
         <li><a href=\"copy.html\">小引</a></li><li><a href=\"other.html\">杂谈</a></li>\
         </ul></body></html>",
    )
    .unwrap();
}

fn start_server(dir: &Path, port: u16, smtp: &str) -> Server {
    let (host, smtp_port) = smtp.trim_start_matches("smtp://").rsplit_once(':').unwrap();
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("copyhound"));
    command.current_dir(dir).env_remove("RUST_LOG");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
        command.env_remove(name);
    }
    let child = command
        .args(["--data-dir", "data", "serve"])
        .env("COPYHOUND_SERVER_LISTEN", format!("127.0.0.1:{port}"))
        .env("COPYHOUND_SERVER_ADMIN_KEY", OPERATOR_KEY)
        .env("COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES", "true")
        .env("COPYHOUND_SMTP_HOST", host)
        .env("COPYHOUND_SMTP_PORT", smtp_port)
        .env("COPYHOUND_SMTP_SECURITY", "none")
        .env("COPYHOUND_SMTP_FROM", "CopyHound <alerts@copyhound.test>")
        .env("COPYHOUND_REPORTS_TICK_SECONDS", "1")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    let server = Server(child);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "copyhound serve did not listen within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// Reloads `url` until `expression` holds (60 s at most): background work
/// (a crawl, a report) shows on a page only once it is done. A timeout shows
/// the server's log.
async fn reload_until(browser: &mut Browser, url: &str, expression: &str, log: &Path) {
    let started = Instant::now();
    loop {
        browser.navigate(url).await;
        if browser.eval(expression).await == json!(true) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "`{expression}` never held on {url}; server log:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Messages in the sink's Maildir addressed to `recipient`.
fn delivered_to(maildir: &Path, recipient: &str) -> Vec<String> {
    std::fs::read_dir(maildir.join("new"))
        .map(|entries| {
            entries
                .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path()).ok())
                .filter(|message| message.contains(recipient))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_publisher_goes_from_an_empty_account_to_a_report_and_an_e_mail() {
    let Some(chromium) = chromium_or_skip(TEST) else {
        return;
    };
    let Some(smtp) = service_url(SMTP_URL, TEST) else {
        return;
    };
    let maildir = std::path::PathBuf::from(std::env::var("COPYHOUND_TEST_SMTP_MAILDIR").unwrap());
    let dir = tempfile::tempdir().unwrap();
    write_site(&dir.path().join("pages/site1"));
    let sites = copyhound_bench::static_sites::StaticSites::serve(&dir.path().join("pages"))
        .await
        .unwrap();
    let site_url = format!("{}/index.html", sites.sites[0].base_url);
    let port = free_port();
    let _server = start_server(dir.path(), port, &smtp);
    let log = dir.path().join("serve.log");
    let base = format!("http://127.0.0.1:{port}");
    let mut browser = Browser::launch(&chromium).await;

    // The operator creates the publisher and its first admin, whose key is shown once.
    browser.navigate(&format!("{base}/login")).await;
    browser.log_in(OPERATOR_KEY).await;
    browser
        .wait_for("location.pathname === '/ui/operator' && document.readyState === 'complete'")
        .await;
    browser
        .eval("const f = document.getElementById('publisher-form'); f.name.value = '青萍文学'; f.kind.value = 'books'; f.id.value = 'pub_qp'; f.holder.value = 'Wang Fang'; f.submit(); true")
        .await;
    browser
        .wait_for(
            "document.readyState === 'complete' && !!document.getElementById('new-key-secret')",
        )
        .await;
    browser.screenshot("console-operator.png").await;
    let secret = browser
        .eval("document.getElementById('new-key-secret').textContent")
        .await
        .as_str()
        .unwrap()
        .to_string();
    browser
        .eval("document.querySelector('form[action=\"/logout\"]').submit(); true")
        .await;
    browser
        .wait_for("location.pathname === '/login' && document.readyState === 'complete'")
        .await;

    // The new admin registers a work by upload.
    browser.log_in(&secret).await;
    browser
        .wait_for("location.pathname === '/' && document.readyState === 'complete'")
        .await;
    let work_file = dir.path().join("二心集.txt");
    std::fs::write(
        &work_file,
        format!("第一章 小引\n{CHAPTER}\n第二章 杂记\n{}", filler(900, 5)),
    )
    .unwrap();
    browser.navigate(&format!("{base}/ui/works")).await;
    browser.set_file("#upload-file", &work_file).await;
    browser
        .eval("document.querySelector('#upload-form input[name=title]').value = '二心集'; document.getElementById('upload-form').submit(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && document.getElementById('preview-count')?.textContent === '2'")
        .await;
    browser
        .eval("document.getElementById('confirm-upload').click(); true")
        .await;
    browser
        .wait_for(
            "document.readyState === 'complete' && location.pathname.startsWith('/ui/works/w')",
        )
        .await;
    // ...and retitles it in the editor.
    browser.click_and_load("#edit-work").await;
    browser
        .eval("document.querySelector('#confirm-form input[name=title]').value = '二心集（校订本）'; true")
        .await;
    browser.click_and_load("#save-work").await;
    assert_eq!(
        browser
            .eval("document.querySelector('h1').textContent.includes('二心集（校订本）')")
            .await,
        json!(true)
    );

    // Adds the pirate site and crawls it now; the in-process workers find the copy.
    browser.navigate(&format!("{base}/ui/sites")).await;
    let add_site = format!(
        "const f = document.getElementById('site-form'); f.name.value = '盗版小说网'; f.seeds.value = {}; f.rate_limit_per_second.value = '20'; f.audience.value = '2000000'; f.submit(); true",
        json!(site_url)
    );
    browser.eval(&add_site).await;
    browser
        .wait_for("document.readyState === 'complete' && !!document.getElementById('crawl-now')")
        .await;
    // Its audience estimate (for the score's site reach) is kept with the site.
    assert_eq!(
        browser
            .eval("document.querySelector('#edit-site-form input[name=audience]').value")
            .await,
        json!("2000000")
    );
    browser.click_and_load("#crawl-now").await;
    reload_until(
        &mut browser,
        &format!("{base}/ui/matches?status=new"),
        "document.querySelectorAll('input.pick').length === 1",
        &log,
    )
    .await;

    // Confirms it, then asks for an e-mail at the first confirmed match.
    browser
        .eval("document.querySelector('input.pick').click(); document.querySelector('#bulk-form input[name=note]').value = '整章复制'; document.getElementById('bulk-confirm').click(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && document.querySelectorAll('input.pick').length === 0")
        .await;
    let recipient = format!("legal+{}@qingping.example", std::process::id());
    browser.navigate(&format!("{base}/ui/alerts")).await;
    let alerts = format!(
        "const f = document.getElementById('alerts-form'); f.email_to.value = {}; f.threshold_new_confirmed.value = '1'; f.submit(); true",
        json!(recipient)
    );
    browser.eval(&alerts).await;
    browser
        .wait_for("document.readyState === 'complete' && !!document.getElementById('alerts-saved')")
        .await;

    // A weekly CSV report on a schedule, and an HTML report now; both are downloaded.
    browser.navigate(&format!("{base}/ui/reports")).await;
    browser
        .eval("const f = document.getElementById('schedule-form'); f.cron_0.value = '0 6 * * 1'; f.format_0.value = 'csv'; f.submit(); true")
        .await;
    browser
        .wait_for(
            "document.readyState === 'complete' && !!document.getElementById('schedules-saved')",
        )
        .await;
    browser
        .eval("document.getElementById('report-format').value = 'html'; true")
        .await;
    browser.click_and_load("#generate").await;
    reload_until(
        &mut browser,
        &format!("{base}/ui/reports"),
        "document.querySelectorAll('a.download').length === 2",
        &log,
    )
    .await;
    browser.screenshot("console-reports-scheduled.png").await;
    let downloads = browser
        .eval_async("Promise.all([...document.querySelectorAll('a.download')].map(a => fetch(a.href).then(async r => [r.status, r.headers.get('content-disposition'), (await r.text()).includes('copy.html')])))")
        .await;
    let downloads = downloads.as_array().unwrap();
    assert_eq!(downloads.len(), 2);
    for download in downloads {
        assert_eq!(download[0], json!(200), "{download}");
        assert_eq!(
            download[2],
            json!(true),
            "the report lists the copy: {download}"
        );
    }
    let names: Vec<&str> = downloads.iter().map(|d| d[1].as_str().unwrap()).collect();
    assert!(
        names.iter().any(|name| name.ends_with(".csv\"")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|name| name.ends_with(".html\"")),
        "{names:?}"
    );

    // Sorts the matches by score, sets the news policy, and adds a reviewer.
    browser
        .navigate(&format!("{base}/ui/matches?sort=score"))
        .await;
    assert_eq!(
        browser
            .eval("document.getElementById('sort').value === 'score' && document.querySelectorAll('.status').length === 1")
            .await,
        json!(true)
    );
    browser.navigate(&format!("{base}/ui/policy")).await;
    browser
        .eval("const f = document.getElementById('policy-form'); f.news_min_copied_chars.value = '150'; f.submit(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && !!document.getElementById('policy-saved')")
        .await;
    browser.navigate(&format!("{base}/ui/keys")).await;
    browser
        .eval("const f = document.getElementById('key-form'); f.name.value = 'Li Wei'; f.role.value = 'publisher'; f.submit(); true")
        .await;
    browser
        .wait_for("document.readyState === 'complete' && document.getElementById('new-key-secret')?.textContent.startsWith('chk_')")
        .await;

    // The alert e-mail arrives once, naming the copy.
    let started = Instant::now();
    let mut delivered = delivered_to(&maildir, &recipient);
    while delivered.is_empty() && started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(250)).await;
        delivered = delivered_to(&maildir, &recipient);
    }
    assert_eq!(delivered.len(), 1, "one e-mail for one alert");
    assert!(delivered[0].contains("/copy.html"), "{}", delivered[0]);
    // Named by the publisher's name and the work's title, not their ids
    // (quoted-printable: 青萍文学, 二心集).
    assert!(
        delivered[0].contains("=E9=9D=92=E8=90=8D=E6=96=87=E5=AD=A6"),
        "{}",
        delivered[0]
    );
    assert!(
        delivered[0].contains("=E4=BA=8C=E5=BF=83=E9=9B=86"),
        "{}",
        delivered[0]
    );
    assert!(!delivered[0].contains("pub_qp"), "{}", delivered[0]);

    browser.child.kill().await.unwrap();
}
