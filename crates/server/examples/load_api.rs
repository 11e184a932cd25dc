//! Bounded load test of the API: N concurrent clients listing matches over
//! loopback against the embedded (redb) store. Prints throughput and latency
//! percentiles as a Markdown table row for `docs/performance.md`.
//!
//! `cargo run --release -p copyhound-server --example load_api -- [clients] [requests] [matches]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use copyhound_core::config::ServerConfig;
use copyhound_core::ids::{ChapterId, MatchId, PageId, PublisherId, SiteId, WorkId};
use copyhound_core::model::{CopiedSpan, Match, MatchStatus, Publisher, PublisherKind, Role};
use copyhound_core::site::SitePolicy;
use copyhound_queue::LocalTaskQueue;
use copyhound_server::AppState;
use copyhound_server::auth::issue_key;

fn argument(position: usize, default: usize) -> usize {
    std::env::args()
        .nth(position)
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], share: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * share).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

async fn seed(state: &AppState, matches: usize) -> anyhow::Result<String> {
    let publisher_id: PublisherId = "pub_load".parse()?;
    let publisher = Publisher {
        id: publisher_id.clone(),
        name: "load".into(),
        kind: PublisherKind::Books,
        created_at: Utc::now(),
        policy: Default::default(),
        alerts: Default::default(),
        report_schedules: Vec::new(),
        profile: Default::default(),
    };
    state.ports.publishers.put_publisher(&publisher).await?;
    let issued = issue_key(publisher_id.clone(), Role::Publisher);
    state.ports.publishers.put_api_key(&issued.record).await?;
    let work_id: WorkId = "w_load".parse()?;
    let site_id: SiteId = "site_load".parse()?;
    let chapter_id: ChapterId = "c_0001".parse()?;
    for number in 0..matches {
        let url = format!("http://pirate.example/{number}.html");
        let page_id = PageId::for_url(&url);
        let seen = Utc::now() - chrono::Duration::minutes(number as i64);
        let span = CopiedSpan {
            chapter_start: 0,
            chapter_end: 500,
            page_start: 10,
            page_end: 510,
        };
        let found = Match {
            id: MatchId::for_pair(&publisher_id, &page_id, &work_id, &chapter_id, 1),
            publisher_id: publisher_id.clone(),
            page_id,
            page_url: url,
            site_id: site_id.clone(),
            work_id: work_id.clone(),
            chapter_id: chapter_id.clone(),
            fingerprint_version: 1,
            score: 0.5 + (number % 50) as f32 / 100.0,
            chapter_coverage: 0.9,
            page_coverage: 0.7,
            spans: vec![span],
            evidence: Vec::new(),
            page_body_sha256: String::new(),
            page_reading: Default::default(),
            duplicate_page_ids: Vec::new(),
            status: if number % 3 == 0 {
                MatchStatus::Confirmed
            } else {
                MatchStatus::New
            },
            reviews: Vec::new(),
            first_seen: seen,
            last_seen: seen,
        };
        state.ports.matches.upsert_match(&found).await?;
    }
    Ok(issued.key)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let clients = argument(1, 100);
    let requests = argument(2, 50);
    let matches = argument(3, 5000);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let stores = copyhound_store::Stores::local(dir.path())?;
    copyhound_store::migrate_up(&stores).await?;
    let queue =
        Arc::new(LocalTaskQueue::open(&dir.path().join("queue"), &Default::default()).await?);
    let index = Arc::new(copyhound_index::MemoryFingerprintIndex::new(3)?);
    let state = AppState {
        ports: stores.ports(index, queue),
        config: ServerConfig::default(),
        site_policy: SitePolicy::default(),
        matcher: copyhound_core::config::MatcherConfig::default(),
        mail: None,
        recipients: None,
        evidence: None,
    };
    let seeding = Instant::now();
    let key = seed(&state, matches).await?;
    eprintln!(
        "seeded {matches} matches in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(copyhound_server::serve_listener(
        state,
        listener,
        async move {
            let _ = stop_rx.await;
        },
    ));
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()?;
    let paths = [
        "/api/v1/matches?limit=50",
        "/api/v1/matches?limit=50&status=confirmed",
        "/api/v1/matches?limit=50&min_score=0.8",
    ];
    let started = Instant::now();
    let mut handles = Vec::with_capacity(clients);
    for client_number in 0..clients {
        let (client, base, key) = (client.clone(), base.clone(), key.clone());
        handles.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(requests);
            let mut errors = 0usize;
            let mut cursor: Option<String> = None;
            for request_number in 0..requests {
                let mut url = format!(
                    "{base}{}",
                    paths[(client_number + request_number) % paths.len()]
                );
                if let Some(after) = cursor.take() {
                    url.push_str(&format!("&after={after}"));
                }
                let sent = Instant::now();
                let outcome = client.get(&url).bearer_auth(&key).send().await;
                match outcome {
                    Ok(response) if response.status().is_success() => {
                        let body: serde_json::Value =
                            serde_json::from_slice(&response.bytes().await.unwrap_or_default())
                                .unwrap_or_default();
                        // Every other request follows the cursor: keyset pagination under load.
                        if request_number % 2 == 0 {
                            cursor = body["next"].as_str().map(str::to_string);
                        }
                        latencies.push(sent.elapsed());
                    }
                    _ => errors += 1,
                }
            }
            (latencies, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for handle in handles {
        let (client_latencies, client_errors) = handle.await?;
        latencies.extend(client_latencies);
        errors += client_errors;
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort();
    let total = latencies.len() + errors;
    println!(
        "| clients | requests | matches stored | errors | throughput (req/s) | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {clients} | {total} | {matches} | {errors} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} |",
        total as f64 / elapsed,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
    );
    let _ = stop_tx.send(());
    server.await??;
    Ok(())
}
