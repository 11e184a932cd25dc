//! Runs `generate_report` tasks: the API records a queued report, a worker
//! renders it from the stores, stores the artifact and marks the report ready
//! (or failed, with the reason). Re-running a task renders again and overwrites
//! the artifact, so re-delivery is harmless.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::Result;
use copyhound_core::model::{ReportStatus, Task, TaskKind};
use copyhound_core::ports::{MatchStore, PublisherStore, ReportStore, SiteStore, WorkStore};
use copyhound_matcher::TaskHandler;
use copyhound_report::{build_report_data, load_report_input, render};

use crate::backends::Backends;

/// The report generator as a task handler.
#[derive(Debug)]
pub struct ReportHandler {
    publishers: Arc<dyn PublisherStore>,
    reports: Arc<dyn ReportStore>,
    matches: Arc<dyn MatchStore>,
    works: Arc<dyn WorkStore>,
    sites: Arc<dyn SiteStore>,
}

impl ReportHandler {
    /// Returns the handler over the backends' stores.
    pub fn new(backends: &Backends) -> Self {
        let stores = &backends.stores;
        Self {
            publishers: stores.publishers.clone(),
            reports: stores.reports.clone(),
            matches: stores.matches.clone(),
            works: stores.works.clone(),
            sites: stores.sites.clone(),
        }
    }
}

#[async_trait]
impl TaskHandler for ReportHandler {
    async fn handle(&self, task: &Task) -> Result<()> {
        let TaskKind::GenerateReport {
            publisher_id,
            report_id,
        } = &task.kind
        else {
            return Err(copyhound_core::Error::invalid(format!(
                "not a report task: {}",
                task.kind.name()
            )));
        };
        let mut report = self.reports.get_report(publisher_id, report_id).await?;
        if matches!(report.status, ReportStatus::Ready { .. }) {
            return Ok(());
        }
        let rendered = async {
            let mut input = load_report_input(
                self.matches.as_ref(),
                self.works.as_ref(),
                self.sites.as_ref(),
                &report.scope,
            )
            .await?;
            if let Ok(publisher) = self.publishers.get_publisher(publisher_id).await {
                input.publisher = publisher.name;
            }
            let format = report.format;
            tokio::task::spawn_blocking(move || render(&build_report_data(&input), format))
                .await
                .map_err(|error| {
                    copyhound_core::Error::internal(format!("report rendering panicked: {error}"))
                })?
        }
        .await;
        match rendered {
            Ok(bytes) => {
                self.reports.put_artifact(report_id, &bytes).await?;
                report.status = ReportStatus::Ready {
                    artifact: report_id.to_string(),
                    bytes: bytes.len() as u64,
                };
            }
            Err(error) if error.is_retryable() => return Err(error),
            Err(error) => {
                report.status = ReportStatus::Failed {
                    error: error.to_string(),
                };
            }
        }
        report.finished_at = Some(Utc::now());
        self.reports.put_report(&report).await
    }
}
