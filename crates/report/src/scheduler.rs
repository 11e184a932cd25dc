//! Scheduled reports and alert webhooks (configured under `[reports]`).
//!
//! A scheduled report gets an id derived from (publisher, cron slot), so two
//! scheduler processes enqueue it once and a restarted one does not repeat it.
//! Alerts compare each publisher's confirmed matches with the time of its last
//! alert, kept in `data_dir/alerts/state.json`; every delivery attempt is
//! appended to `data_dir/alerts/deliveries.jsonl`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use copyhound_core::ErrorKind;
use copyhound_core::config::{Config, ReportsConfig};
use copyhound_core::ids::{PublisherId, ReportId};
use copyhound_core::model::{
    Match, MatchStatus, Report, ReportScope, ReportStatus, Task, TaskKind, Timestamp,
};
use copyhound_core::ports::{MatchFilter, MatchStore, ReportStore, TaskQueue, collect_all};
use copyhound_core::schedule::{Cron, last_slot, parse_schedule};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::{
    AlertPolicy, RetryPolicy, WebhookTransport, build_alert_payload, deliver_webhook,
    evaluate_alert, sign_webhook,
};

/// How often schedules and alerts are checked.
const TICK: Duration = Duration::from_secs(60);

/// Runs the `[reports]` schedules and alerts.
#[derive(Debug)]
pub struct ReportScheduler {
    config: ReportsConfig,
    crons: Vec<Cron>,
    reports: Arc<dyn ReportStore>,
    matches: Arc<dyn MatchStore>,
    queue: Arc<dyn TaskQueue>,
    state_dir: PathBuf,
    transport: Arc<dyn WebhookTransport>,
}

impl ReportScheduler {
    /// Checks the schedules' cron expressions; `None` when nothing is configured.
    /// Webhooks go out through `transport`.
    pub fn new(
        config: &Config,
        reports: Arc<dyn ReportStore>,
        matches: Arc<dyn MatchStore>,
        queue: Arc<dyn TaskQueue>,
        transport: Arc<dyn WebhookTransport>,
    ) -> anyhow::Result<Option<Self>> {
        let settings = config.reports.clone();
        if settings.schedules.is_empty() && settings.alerts.is_empty() {
            return Ok(None);
        }
        let crons = settings
            .schedules
            .iter()
            .map(|schedule| {
                parse_schedule(&schedule.cron).with_context(|| {
                    format!(
                        "reports.schedules: cron {:?} of {}",
                        schedule.cron, schedule.publisher
                    )
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Some(Self {
            config: settings,
            crons,
            reports,
            matches,
            queue,
            state_dir: config.data_dir.join("alerts"),
            transport,
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
            let Some(slot) = last_slot(cron, now) else {
                continue;
            };
            let publisher_id: PublisherId = schedule.publisher.parse()?;
            let id =
                ReportId::derive_from(&format!("scheduled/{publisher_id}/{}", slot.to_rfc3339()));
            match self.reports.get_report(&publisher_id, &id).await {
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
            self.reports.put_report(&report).await?;
            let task = Task::new(
                TaskKind::GenerateReport {
                    publisher_id,
                    report_id: id,
                },
                now,
            );
            self.queue.enqueue(vec![task]).await?;
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
            self.transport.as_ref(),
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
            statuses: vec![MatchStatus::Confirmed],
            ..MatchFilter::of_publisher(publisher_id.clone())
        };
        let filter = &filter;
        Ok(collect_all(200, |request| async move {
            self.matches.list_matches(filter, &request).await
        })
        .await?)
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
    use super::*;

    #[derive(Debug)]
    struct NoTransport;

    #[async_trait::async_trait]
    impl WebhookTransport for NoTransport {
        async fn post(
            &self,
            _: &str,
            _: &[(String, String)],
            _: &[u8],
        ) -> copyhound_core::Result<u16> {
            Ok(200)
        }
        async fn sleep(&self, _: Duration) {}
    }

    #[tokio::test]
    async fn a_bad_cron_is_a_clear_error_and_no_schedule_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
        let queue: Arc<dyn TaskQueue> = Arc::new(
            copyhound_queue::LocalTaskQueue::open(&dir.path().join("queue"), &Default::default())
                .await
                .unwrap(),
        );
        let build = |config: &Config| {
            ReportScheduler::new(
                config,
                stores.reports.clone(),
                stores.matches.clone(),
                queue.clone(),
                Arc::new(NoTransport),
            )
        };
        assert!(build(&config).unwrap().is_none());
        config.reports.schedules = vec![copyhound_core::config::ReportSchedule {
            publisher: "P01".into(),
            cron: "every monday".into(),
            format: copyhound_core::model::ReportFormat::Html,
        }];
        let error = build(&config).unwrap_err();
        assert!(format!("{error:#}").contains("every monday"), "{error:#}");
    }
}
