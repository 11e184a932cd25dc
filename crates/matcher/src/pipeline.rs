use std::sync::Arc;

use async_trait::async_trait;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::{Error, ErrorKind, Result};

use crate::context::MatcherPorts;
use crate::worker::TaskHandler;
use crate::{backfill, compare, fingerprinting};

/// The task dispatcher of a worker process: fingerprinting, comparison and
/// back-fill run here; crawl and report tasks go to the handlers plugged in by
/// the binary (the crawler and the report generator live in their own crates).
#[derive(Debug, Clone)]
pub struct Pipeline {
    ports: MatcherPorts,
    crawl: Option<Arc<dyn TaskHandler>>,
    report: Option<Arc<dyn TaskHandler>>,
}

impl Pipeline {
    /// Returns a dispatcher with the comparison handlers only.
    pub fn new(ports: MatcherPorts) -> Self {
        Self {
            ports,
            crawl: None,
            report: None,
        }
    }

    /// Plugs in the handler of `crawl_site` and `fetch_page` tasks.
    pub fn with_crawl_handler(mut self, handler: Arc<dyn TaskHandler>) -> Self {
        self.crawl = Some(handler);
        self
    }

    /// Plugs in the handler of `generate_report` tasks.
    pub fn with_report_handler(mut self, handler: Arc<dyn TaskHandler>) -> Self {
        self.report = Some(handler);
        self
    }

    /// Returns the ports.
    pub fn ports(&self) -> &MatcherPorts {
        &self.ports
    }
}

#[async_trait]
impl TaskHandler for Pipeline {
    async fn handle(&self, task: &Task) -> Result<()> {
        let ports = &self.ports;
        match &task.kind {
            TaskKind::FingerprintPage {
                page_id,
                content_sha256,
            } => fingerprinting::fingerprint_page(ports, page_id, content_sha256).await,
            TaskKind::FingerprintWork { work_id } => {
                fingerprinting::fingerprint_work(ports, work_id).await
            }
            TaskKind::ComparePage {
                page_id,
                content_sha256,
            } => compare::compare_page(ports, page_id, content_sha256).await,
            TaskKind::BackfillWork { work_id } => backfill::backfill_work(ports, work_id).await,
            TaskKind::CrawlSite { .. } | TaskKind::FetchPage { .. } => {
                delegate(&self.crawl, task).await
            }
            TaskKind::GenerateReport { .. } => delegate(&self.report, task).await,
        }
    }
}

async fn delegate(handler: &Option<Arc<dyn TaskHandler>>, task: &Task) -> Result<()> {
    match handler {
        Some(handler) => handler.handle(task).await,
        None => Err(Error::new(
            ErrorKind::Internal,
            format!("this worker has no handler for {} tasks", task.kind.name()),
        )),
    }
}
