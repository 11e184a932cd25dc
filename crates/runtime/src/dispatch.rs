use std::sync::Arc;

use async_trait::async_trait;
use copyhound_core::Result;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::TaskHandler;
use copyhound_crawler::CrawlHandler;
use copyhound_matcher::MatcherHandler;
use copyhound_report::ReportHandler;

/// Routes each task to the handler of the stage that owns its kind. The match
/// is exhaustive, so a new task kind does not compile until it has a home.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    crawl: Arc<dyn TaskHandler>,
    matcher: Arc<dyn TaskHandler>,
    report: Arc<dyn TaskHandler>,
}

impl Dispatcher {
    /// Returns the dispatcher over the three stage handlers.
    pub fn new(crawl: CrawlHandler, matcher: MatcherHandler, report: ReportHandler) -> Self {
        Self {
            crawl: Arc::new(crawl),
            matcher: Arc::new(matcher),
            report: Arc::new(report),
        }
    }

    /// Returns the handler that owns `kind`.
    pub fn handler_of(&self, kind: &TaskKind) -> &Arc<dyn TaskHandler> {
        match kind {
            TaskKind::CrawlSite { .. } | TaskKind::FetchPage { .. } => &self.crawl,
            TaskKind::FingerprintPage { .. }
            | TaskKind::FingerprintWork { .. }
            | TaskKind::ComparePage { .. }
            | TaskKind::BackfillWork { .. } => &self.matcher,
            TaskKind::GenerateReport { .. } => &self.report,
        }
    }
}

#[async_trait]
impl TaskHandler for Dispatcher {
    async fn handle(&self, task: &Task) -> Result<()> {
        self.handler_of(&task.kind).handle(task).await
    }

    async fn admit(&self, task: &Task) -> Result<Option<std::time::Duration>> {
        self.handler_of(&task.kind).admit(task).await
    }

    async fn abandon(&self, task: &Task, reason: &str) -> Result<()> {
        self.handler_of(&task.kind).abandon(task, reason).await
    }
}
