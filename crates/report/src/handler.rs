//! Runs `generate_report` tasks: the API records a queued report, a worker
//! renders it from the stores, stores the artifact and marks the report ready
//! (or failed, with the reason). Re-running a task renders again and overwrites
//! the artifact, so re-delivery is harmless.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use copyhound_core::model::ReportFormat;
use copyhound_core::model::{ReportStatus, Task, TaskKind};
use copyhound_core::ports::{
    MatchStore, PageStore, PublisherStore, ReportStore, SiteStore, TaskHandler, WorkStore,
};
use copyhound_core::{Error, Result};

use crate::{build_report_data, load_report_input, render};

/// The report generator's task handler.
#[derive(Debug, Clone)]
pub struct ReportHandler {
    publishers: Arc<dyn PublisherStore>,
    reports: Arc<dyn ReportStore>,
    matches: Arc<dyn MatchStore>,
    works: Arc<dyn WorkStore>,
    sites: Arc<dyn SiteStore>,
    pages: Arc<dyn PageStore>,
}

impl ReportHandler {
    /// Returns the handler over the store ports it reads and writes.
    pub fn new(
        publishers: Arc<dyn PublisherStore>,
        reports: Arc<dyn ReportStore>,
        matches: Arc<dyn MatchStore>,
        works: Arc<dyn WorkStore>,
        sites: Arc<dyn SiteStore>,
        pages: Arc<dyn PageStore>,
    ) -> Self {
        Self {
            publishers,
            reports,
            matches,
            works,
            sites,
            pages,
        }
    }

    /// Whether this stage owns `kind`.
    pub fn owns(kind: &TaskKind) -> bool {
        matches!(kind, TaskKind::GenerateReport { .. })
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
            return Err(Error::internal(format!(
                "the report generator does not handle {} tasks",
                task.kind.name()
            )));
        };
        let mut report = self.reports.get_report(publisher_id, report_id).await?;
        if matches!(report.status, ReportStatus::Ready { .. }) {
            return Ok(());
        }
        // A report stored without a review scope gets its format's default.
        let format = report.format;
        report.scope.review = Some(report.scope.review_for(format));
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
                input.profile = publisher.profile;
            }
            if format == ReportFormat::Warc {
                let file = format!("{report_id}.warc");
                let package = crate::warc::evidence_for(
                    self.pages.as_ref(),
                    &input.matches,
                    &file,
                    Utc::now(),
                )
                .await?;
                return Ok(package.warc);
            }
            // Rendering is CPU work, and a PDF waits for a browser.
            tokio::task::spawn_blocking(move || render(&build_report_data(&input), format))
                .await
                .map_err(|error| Error::internal(format!("report rendering panicked: {error}")))?
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

    async fn abandon(&self, task: &Task, reason: &str) -> Result<()> {
        let TaskKind::GenerateReport {
            publisher_id,
            report_id,
        } = &task.kind
        else {
            return Ok(());
        };
        let mut report = self.reports.get_report(publisher_id, report_id).await?;
        if !matches!(report.status, ReportStatus::Queued) {
            return Ok(());
        }
        report.status = ReportStatus::Failed {
            error: reason.chars().take(500).collect(),
        };
        report.finished_at = Some(Utc::now());
        self.reports.put_report(&report).await
    }
}
