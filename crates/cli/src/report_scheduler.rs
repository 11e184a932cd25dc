//! Scheduled reports and alert webhooks (configured under `[reports]`).
//!
//! A scheduled report gets an id derived from (publisher, cron slot), so two
//! scheduler processes enqueue it once and a restarted one does not repeat it.
//! Alerts compare each publisher's confirmed matches with the time of its last
//! alert, kept in `data_dir/alerts/state.json`; every delivery attempt is
//! appended to `data_dir/alerts/deliveries.jsonl`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::config::{Config, ReportsConfig};
use copyhound_core::ids::{PublisherId, ReportId};
use copyhound_core::model::{
    Match, MatchStatus, Report, ReportScope, ReportStatus, Task, TaskKind, Timestamp,
};
use copyhound_core::ports::{MatchFilter, PageRequest};
use copyhound_core::{ErrorKind, Result as CoreResult};
use copyhound_report::{
    AlertPolicy, RetryPolicy, WebhookTransport, build_alert_payload, deliver_webhook,
    evaluate_alert, sign_webhook,
};
use croner::Cron;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::backends::Backends;

/// How often schedules and alerts are checked.
const TICK: Duration = Duration::from_secs(60);

/// Posts webhooks with reqwest.
#[derive(Debug)]
struct HttpTransport {
    client: reqwest::Client,
}

#[async_trait]
impl WebhookTransport for HttpTransport {
    async fn post(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> CoreResult<u16> {
        let mut request = self.client.post(url).body(body.to_vec());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|error| {
            copyhound_core::Error::with_source(
                ErrorKind::Transient,
                format!("webhook post to {url} failed"),
                error,
            )
        })?;
        Ok(response.status().as_u16())
    }

    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

/// Runs the `[reports]` schedules and alerts.
#[derive(Debug)]
pub struct ReportScheduler {
    config: ReportsConfig,
    crons: Vec<Cron>,
    backends: Backends,
    state_dir: PathBuf,
    transport: HttpTransport,
}

impl ReportScheduler {
    /// Checks the schedules' cron expressions; `None` when nothing is configured.
    pub fn new(config: &Config, backends: &Backends) -> anyhow::Result<Option<Self>> {
        let reports = config.reports.clone();
        if reports.schedules.is_empty() && reports.alerts.is_empty() {
            return Ok(None);
        }
        let crons = reports
            .schedules
            .iter()
            .map(|schedule| {
                copyhound_crawler::site::parse_schedule(&schedule.cron).with_context(|| {
                    format!(
                        "reports.schedules: cron {:?} of {}",
                        schedule.cron, schedule.publisher
                    )
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(Some(Self {
            config: reports,
            crons,
            backends: backends.clone(),
            state_dir: config.data_dir.join("alerts"),
            transport: HttpTransport { client },
        }))
    }

    /// Checks schedules and alerts every minute until shutdown.
    pub async fn run(&self, mut shutdown: watch::Receiver<bool>) {
        info!(
            schedules = self.config.schedules.len(),
            alerts = self.config.alerts.len(),
            "report scheduler started"
        );
        while !*shutdown.borrow() {
            if let Err(error) = self.tick(Utc::now()).await {
                warn!(error = %format!("{error:#}"), "report scheduler tick failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(TICK) => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    /// Enqueues due reports and sends due alerts.
    pub async fn tick(&self, now: Timestamp) -> anyhow::Result<()> {
        for (schedule, cron) in self.config.schedules.iter().zip(&self.crons) {
            let Some(slot) = copyhound_crawler::site::last_slot(cron, now) else {
                continue;
            };
            let publisher_id: PublisherId = schedule.publisher.parse()?;
            let id =
                ReportId::derive_from(&format!("scheduled/{publisher_id}/{}", slot.to_rfc3339()));
            match self
                .backends
                .stores
                .reports
                .get_report(&publisher_id, &id)
                .await
            {
                Ok(_) => continue,
                Err(error) if error.kind() == ErrorKind::NotFound => {}
                Err(error) => return Err(error.into()),
            }
            let report = Report {
                id: id.clone(),
                scope: ReportScope {
                    publisher_id: publisher_id.clone(),
                    work_id: None,
                    site_id: None,
                    since: None,
                },
                format: schedule.format,
                status: ReportStatus::Queued,
                created_at: now,
                finished_at: None,
            };
            self.backends.stores.reports.put_report(&report).await?;
            let task = Task::new(
                TaskKind::GenerateReport {
                    publisher_id,
                    report_id: id,
                },
                now,
            );
            self.backends.queue.enqueue(vec![task]).await?;
            info!(report_id = %report.id, slot = %slot, "scheduled report queued");
        }
        for hook in &self.config.alerts {
            self.check_alert(hook, now).await?;
        }
        Ok(())
    }

    async fn check_alert(
        &self,
        hook: &copyhound_core::config::AlertHook,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let publisher_id: PublisherId = hook.publisher.parse()?;
        let mut state = self.read_state();
        let last = state.get(publisher_id.as_str()).copied();
        let confirmed = self.confirmed_matches(&publisher_id).await?;
        let decision = evaluate_alert(
            &AlertPolicy {
                threshold_new_confirmed: hook.threshold_new_confirmed,
            },
            &confirmed,
            last,
        );
        if !decision.due {
            return Ok(());
        }
        let payload = build_alert_payload(&publisher_id, &decision, &confirmed, now);
        let request = sign_webhook(&payload, hook.secret.as_bytes())?;
        let log = deliver_webhook(
            &self.transport,
            &hook.webhook_url,
            &request,
            &RetryPolicy::default(),
        )
        .await;
        std::fs::create_dir_all(&self.state_dir)?;
        let mut line = serde_json::to_vec(&log)?;
        line.push(b'\n');
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.state_dir.join("deliveries.jsonl"))?
            .write_all(&line)?;
        info!(publisher_id = %publisher_id, new_confirmed = decision.new_confirmed, outcome = ?log.outcome, "alert sent");
        state.insert(publisher_id.to_string(), now);
        std::fs::write(
            self.state_dir.join("state.json"),
            serde_json::to_vec_pretty(&state)?,
        )?;
        Ok(())
    }

    async fn confirmed_matches(&self, publisher_id: &PublisherId) -> anyhow::Result<Vec<Match>> {
        let filter = MatchFilter {
            publisher_id: publisher_id.clone(),
            work_id: None,
            chapter_id: None,
            site_id: None,
            statuses: vec![MatchStatus::Confirmed],
            min_score: None,
            seen_since: None,
            seen_before: None,
        };
        let mut found = Vec::new();
        let mut request = PageRequest {
            after: None,
            limit: 200,
        };
        loop {
            let batch = self
                .backends
                .stores
                .matches
                .list_matches(&filter, &request)
                .await?;
            found.extend(batch.items);
            match batch.next {
                Some(next) => request.after = Some(next),
                None => return Ok(found),
            }
        }
    }

    fn read_state(&self) -> BTreeMap<String, Timestamp> {
        std::fs::read(self.state_dir.join("state.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use copyhound_core::config::{AlertHook, ReportSchedule};
    use copyhound_core::ids::{ChapterId, MatchId, PageId, SiteId, WorkId};
    use copyhound_core::model::{Publisher, PublisherKind, ReportFormat, Review};

    use super::*;

    type Received = Arc<Mutex<Vec<(Option<String>, Vec<u8>)>>>;

    async fn webhook_receiver() -> (String, Received) {
        let received: Received = Arc::default();
        let sink = received.clone();
        let router = axum::Router::new().route(
            "/hook",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let sink = sink.clone();
                    async move {
                        let signature = headers
                            .get(copyhound_report::SIGNATURE_HEADER)
                            .and_then(|value| value.to_str().ok())
                            .map(str::to_string);
                        sink.lock().unwrap().push((signature, body.to_vec()));
                        "ok"
                    }
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        (format!("http://{address}/hook"), received)
    }

    fn confirmed_match(publisher_id: &PublisherId) -> Match {
        let now = Utc::now();
        let page_id = PageId::for_url("http://pirate.example/1.html");
        let (work_id, chapter_id): (WorkId, ChapterId) =
            ("w1".parse().unwrap(), "c1".parse().unwrap());
        Match {
            id: MatchId::for_pair(publisher_id, &page_id, &work_id, &chapter_id, 1),
            publisher_id: publisher_id.clone(),
            page_id,
            page_url: "http://pirate.example/1.html".into(),
            site_id: "site1".parse::<SiteId>().unwrap(),
            work_id,
            chapter_id,
            fingerprint_version: 1,
            score: 0.9,
            chapter_coverage: 0.95,
            page_coverage: 0.8,
            spans: Vec::new(),
            evidence: Vec::new(),
            page_body_sha256: "00".repeat(32),
            duplicate_page_ids: Vec::new(),
            status: MatchStatus::New,
            reviews: Vec::new(),
            first_seen: now,
            last_seen: now,
        }
    }

    #[tokio::test]
    async fn schedules_enqueue_each_slot_once_and_alerts_post_signed_json_once() {
        let dir = tempfile::tempdir().unwrap();
        let (url, received) = webhook_receiver().await;
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        config.reports.schedules = vec![ReportSchedule {
            publisher: "P01".into(),
            cron: "0 6 * * *".into(),
            format: ReportFormat::Json,
        }];
        config.reports.alerts = vec![AlertHook {
            publisher: "P01".into(),
            webhook_url: url,
            secret: "s3cret".into(),
            threshold_new_confirmed: 1,
        }];
        let backends = Backends::open(&config).await.unwrap();
        let publisher_id: PublisherId = "P01".parse().unwrap();
        let publisher = Publisher {
            id: publisher_id.clone(),
            name: "P01".into(),
            kind: PublisherKind::Books,
            created_at: Utc::now(),
        };
        backends
            .stores
            .publishers
            .put_publisher(&publisher)
            .await
            .unwrap();
        let found = confirmed_match(&publisher_id);
        backends.stores.matches.upsert_match(&found).await.unwrap();
        let review = Review {
            status: MatchStatus::Confirmed,
            by: "test".into(),
            at: Utc::now(),
            note: None,
        };
        backends
            .stores
            .matches
            .review_match(&publisher_id, &found.id, &review)
            .await
            .unwrap();

        let scheduler = ReportScheduler::new(&config, &backends).unwrap().unwrap();
        scheduler.tick(Utc::now()).await.unwrap();
        scheduler.tick(Utc::now()).await.unwrap();

        let stats = backends.queue.stats().await.unwrap();
        assert_eq!(stats.depth, 1, "one report task for the last slot, not two");
        let reports = backends
            .stores
            .reports
            .list_reports(
                &publisher_id,
                &PageRequest {
                    after: None,
                    limit: 10,
                },
            )
            .await
            .unwrap();
        assert_eq!(reports.items.len(), 1);
        let posts = received.lock().unwrap().clone();
        assert_eq!(posts.len(), 1, "one alert for one newly confirmed match");
        let (signature, body) = &posts[0];
        assert!(copyhound_report::verify_signature(
            b"s3cret",
            body,
            signature.as_deref().unwrap()
        ));
        let payload: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(payload["publisher_id"], "P01", "{payload}");
        let log = std::fs::read_to_string(dir.path().join("alerts/deliveries.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 1);
    }

    #[test]
    fn a_bad_cron_is_a_clear_error() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        config.reports.schedules = vec![ReportSchedule {
            publisher: "P01".into(),
            cron: "every monday".into(),
            format: ReportFormat::Html,
        }];
        let backends = runtime.block_on(Backends::open(&config)).unwrap();
        let error = ReportScheduler::new(&config, &backends).unwrap_err();
        assert!(format!("{error:#}").contains("every monday"), "{error:#}");
    }
}
