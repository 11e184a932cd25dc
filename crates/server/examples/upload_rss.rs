//! Peak resident memory of one large JSON upload of many small chapters, the
//! shape that made a 60 MiB console preview peak at 2.5 GB. Run it under
//! `/usr/bin/time -v` and read "Maximum resident set size"; `none` builds the
//! same body and sends nothing, the baseline to subtract.
//!
//! `cargo run --release -p copyhound-server --example upload_rss -- api|console|none [MiB] [tiny|small|large]`

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, header};
use copyhound_core::config::ServerConfig;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{Publisher, PublisherKind, Role};
use copyhound_core::site::SitePolicy;
use copyhound_queue::LocalTaskQueue;
use copyhound_server::AppState;
use copyhound_server::auth::issue_key;
use tower::ServiceExt;

/// A JSON work of about `mib` MiB: `tiny` chapters of one character, `small`
/// ones of a sentence, or `large` ones of 1,950 characters (a valid work).
fn many_chapters(mib: usize, shape: &str) -> Vec<u8> {
    let large = format!(
        r#"{{"title":"第一章","text":"{}"}},"#,
        "天色已晚，林中起了大风。\\n".repeat(150)
    );
    let chapter = match shape {
        "tiny" => r#"{"text":"风"},"#,
        "large" => large.as_str(),
        _ => r#"{"title":"第一章","text":"天色已晚，林中起了大风。"},"#,
    };
    let count = (mib << 20) / chapter.len();
    let mut body = String::with_capacity((mib << 20) + 128);
    body.push_str(r#"{"id":"w_big","title":"大","chapters":["#);
    for _ in 0..count {
        body.push_str(chapter);
    }
    body.pop();
    body.push_str("]}");
    body.into_bytes()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "api".into());
    let mib: usize = std::env::args()
        .nth(2)
        .and_then(|value| value.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir()?;
    let stores = copyhound_store::Stores::local(dir.path().join("store"))?;
    copyhound_store::migrate_up(&stores).await?;
    let queue =
        Arc::new(LocalTaskQueue::open(&dir.path().join("queue"), &Default::default()).await?);
    let index = Arc::new(copyhound_index::MemoryFingerprintIndex::new(3)?);
    let state = AppState {
        ports: stores.ports(index, queue),
        config: ServerConfig {
            max_upload_bytes: 64 << 20,
            ..ServerConfig::default()
        },
        site_policy: SitePolicy::new(true),
        matcher: Default::default(),
        mail: None,
        recipients: None,
        evidence: None,
    };
    let publisher_id: PublisherId = "pub_rss".parse()?;
    state
        .ports
        .publishers
        .put_publisher(&Publisher {
            id: publisher_id.clone(),
            name: "rss".into(),
            kind: PublisherKind::Books,
            created_at: chrono::Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        })
        .await?;
    let issued = issue_key(publisher_id, Role::Publisher);
    state.ports.publishers.put_api_key(&issued.record).await?;
    let console = copyhound_server::ui::ConsoleState::default();
    let session = console.sessions.create(&issued.record.id.to_string());
    let router = copyhound_server::router_with_console(state, console);

    let shape = std::env::args().nth(3).unwrap_or_else(|| "small".into());
    let json = many_chapters(mib, &shape);
    let request = match mode.as_str() {
        "api" => Request::post("/api/v1/works")
            .header(header::AUTHORIZATION, format!("Bearer {}", issued.key))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(json))?,
        "console" => {
            let boundary = "----copyhoundrss";
            let mut body = format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"work.json\"\r\nContent-Type: application/json\r\n\r\n"
            )
            .into_bytes();
            body.extend_from_slice(&json);
            body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
            Request::post("/ui/works/preview")
                .header(
                    header::COOKIE,
                    format!("{}={session}", copyhound_server::ui::SESSION_COOKIE),
                )
                .header("sec-fetch-site", "same-origin")
                .header(
                    header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(Body::from(body))?
        }
        _ => {
            println!("built {} bytes, sent nothing", json.len());
            return Ok(());
        }
    };
    let started = std::time::Instant::now();
    let response = router.oneshot(request).await?;
    let status = response.status();
    let answer = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
    let text = String::from_utf8_lossy(&answer);
    let excerpt: String = text.chars().take(300).collect();
    println!(
        "{mode} {mib} MiB: {status} in {:.1} s: {excerpt}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
