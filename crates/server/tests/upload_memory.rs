//! Peak memory of the upload parsers on hostile files. The workspace forbids
//! `unsafe` code, so instead of a counting allocator the test reads the
//! kernel's high-water mark of resident memory (`VmHWM`), reset before each
//! measurement; the tests of this binary run one at a time.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::io::{Cursor, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use copyhound_core::ErrorKind;
use copyhound_intake::formats::{HeadingPattern, decode_text, parse_epub, split_txt_chapters};
use zip::write::SimpleFileOptions;

static SERIAL: Mutex<()> = Mutex::new(());

/// Returns a `/proc/self/status` field in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(&format!("{field}:")))
        .unwrap();
    let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// Runs `work` and returns its result, the growth of resident memory at its peak, and the time it took.
fn measure<T>(work: impl FnOnce() -> T) -> (T, usize, Duration) {
    // Resets VmHWM to the current resident size (Linux 4.0+); where that is not
    // allowed the mark since start-up is used, which can only over-count.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let baseline = status_bytes("VmRSS");
    let started = Instant::now();
    let result = work();
    let elapsed = started.elapsed();
    let peak = status_bytes("VmHWM").saturating_sub(baseline);
    (result, peak, elapsed)
}

/// Returns an EPUB whose one chapter is `<b>a</b>` repeated `repeats` times.
fn dom_bomb_epub(repeats: usize) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    writer.start_file("mimetype", deflated).unwrap();
    writer.write_all(b"application/epub+zip").unwrap();
    writer
        .start_file("META-INF/container.xml", deflated)
        .unwrap();
    writer
        .write_all(
            br#"<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>"#,
        )
        .unwrap();
    writer.start_file("content.opf", deflated).unwrap();
    writer
        .write_all(
            br#"<package><metadata><dc:title>bomb</dc:title></metadata><manifest>
<item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>"#,
        )
        .unwrap();
    writer.start_file("c.xhtml", deflated).unwrap();
    writer.write_all(b"<html><body><p>").unwrap();
    let chunk = "<b>a</b>".repeat(10_000);
    for _ in 0..repeats / 10_000 {
        writer.write_all(chunk.as_bytes()).unwrap();
    }
    writer.write_all(b"</p></body></html>").unwrap();
    writer.finish().unwrap().into_inner()
}

/// Most heap a refused hostile upload may take while being parsed.
const MAX_PEAK_BYTES: usize = 48 << 20;

#[test]
fn dom_bomb_epubs_are_refused_quickly_in_bounded_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|poison| poison.into_inner());
    // The reported bomb (80 MB of markup in 117 KB) and one small enough to pass
    // every byte budget, so the element budget has to stop it.
    for (repeats, limit) in [(10_000_000, "bytes"), (1_500_000, "elements")] {
        let bomb = dom_bomb_epub(repeats);
        assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
        let (result, peak, elapsed) = measure(|| parse_epub(&bomb).map(|book| book.chapters.len()));
        eprintln!(
            "dom bomb of {repeats} repeats ({} bytes): {} in {elapsed:?}, peak {peak} bytes",
            bomb.len(),
            if result.is_ok() {
                "accepted"
            } else {
                "refused"
            }
        );
        let Err(error) = result else {
            panic!(
                "a dom bomb of {repeats} repeats was accepted in {elapsed:?}, peak {peak} bytes"
            );
        };
        assert_eq!(error.kind(), ErrorKind::TooLarge, "{error}");
        assert!(error.message().contains(limit), "{error}");
        assert!(
            peak < MAX_PEAK_BYTES,
            "{repeats} repeats: peak {peak} bytes (limit {MAX_PEAK_BYTES})"
        );
        assert!(
            elapsed < Duration::from_secs(5),
            "{repeats} repeats: {elapsed:?}"
        );
    }
}

#[test]
fn a_one_line_txt_of_headings_stays_bounded() {
    let _serial = SERIAL.lock().unwrap_or_else(|poison| poison.into_inner());
    // 600k one-line chapters: more chapters than a work may have.
    let text = "第1章\n甲\n".repeat(600_000);
    let (result, peak, elapsed) = measure(|| {
        let decoded = decode_text(text.as_bytes())?;
        split_txt_chapters(&decoded.text, &HeadingPattern::default())
    });
    let error = result.expect_err("too many chapters are refused");
    assert_eq!(error.kind(), ErrorKind::TooLarge, "{error}");
    assert!(error.message().contains("chapters"), "{error}");
    // The parse stops at the heading budget: the decoded copy and 100k headings.
    assert!(
        peak < MAX_PEAK_BYTES,
        "peak {peak} bytes for {} input bytes (limit {MAX_PEAK_BYTES})",
        text.len()
    );
    eprintln!(
        "chapter flood of {} bytes: refused in {elapsed:?}, peak {peak} bytes",
        text.len()
    );
}

/// A router on a fresh embedded store with one publisher key (the API's and a
/// console session's), taking uploads of 64 MiB.
async fn upload_router(dir: &std::path::Path) -> (axum::Router, String, String) {
    use copyhound_core::model::{Publisher, PublisherKind, Role};
    let stores = copyhound_store::Stores::local(dir.join("store")).unwrap();
    copyhound_store::migrate_up(&stores).await.unwrap();
    let queue = copyhound_queue::LocalTaskQueue::open(&dir.join("queue"), &Default::default())
        .await
        .unwrap();
    let index = std::sync::Arc::new(copyhound_index::MemoryFingerprintIndex::new(3).unwrap());
    let state = copyhound_server::AppState {
        ports: stores.ports(index, std::sync::Arc::new(queue)),
        config: copyhound_core::config::ServerConfig {
            max_upload_bytes: 64 << 20,
            ..Default::default()
        },
        site_policy: copyhound_core::site::SitePolicy::new(true),
        matcher: Default::default(),
        mail: None,
        recipients: None,
        evidence: None,
    };
    let publisher_id: copyhound_core::ids::PublisherId = "pub_m".parse().unwrap();
    state
        .ports
        .publishers
        .put_publisher(&Publisher {
            id: publisher_id.clone(),
            name: "m".into(),
            kind: PublisherKind::Books,
            created_at: chrono::Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        })
        .await
        .unwrap();
    let issued = copyhound_server::auth::issue_key(publisher_id, Role::Publisher);
    state
        .ports
        .publishers
        .put_api_key(&issued.record)
        .await
        .unwrap();
    let console = copyhound_server::ui::ConsoleState::default();
    let session = console.sessions.create(&issued.record.id.to_string());
    let router = copyhound_server::router_with_console(state, console);
    (router, issued.key, session)
}

/// Sends `request` on `runtime`; returns the status and the answer.
fn answer(
    runtime: &tokio::runtime::Runtime,
    router: &axum::Router,
    request: axum::http::Request<axum::body::Body>,
) -> (u16, String) {
    use tower::ServiceExt;
    runtime.block_on(async {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    })
}

#[test]
fn sixty_mib_of_tiny_json_chapters_are_refused_without_parsing_them_all() {
    use axum::body::Body;
    use axum::http::{Request, header};
    let _serial = SERIAL.lock().unwrap_or_else(|poison| poison.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (router, key, session) = runtime.block_on(upload_router(dir.path()));
    // 4.8 million chapters of one character: 60 MiB, once 2.5 GB in the console.
    let chapter = r#"{"text":"风"},"#;
    let mut json = String::from(r#"{"title":"大","chapters":["#);
    json.push_str(&chapter.repeat((60 << 20) / chapter.len()));
    json.pop();
    json.push_str("]}");

    let request = Request::post("/api/v1/works")
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json.clone()))
        .unwrap();
    let ((status, body), peak, elapsed) = measure(|| answer(&runtime, &router, request));
    eprintln!("api: {status} in {elapsed:?}, peak {peak} bytes over the body");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("more than 50000 chapters"), "{body}");
    assert!(peak < MAX_PEAK_BYTES, "api: peak {peak} bytes");

    let boundary = "----copyhoundmemory";
    let mut upload = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"work.json\"\r\n\r\n"
    )
    .into_bytes();
    upload.extend_from_slice(json.as_bytes());
    upload.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let upload_bytes = upload.len();
    let request = Request::post("/ui/works/preview")
        .header(
            header::COOKIE,
            format!("{}={session}", copyhound_server::ui::SESSION_COOKIE),
        )
        .header("sec-fetch-site", "same-origin")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(upload))
        .unwrap();
    let ((status, body), peak, elapsed) = measure(|| answer(&runtime, &router, request));
    eprintln!("console: {status} in {elapsed:?}, peak {peak} bytes over the body");
    assert_eq!(status, 400);
    assert!(body.contains("more than 2000 chapters"), "{body}");
    // The multipart reader keeps its own copy of the file; parsing adds little to it.
    assert!(
        peak < upload_bytes + MAX_PEAK_BYTES,
        "console: peak {peak} bytes for {upload_bytes} uploaded"
    );
}
