use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::model::{Task, TaskKind};
use copyhound_core::ports::TaskHandler;
use copyhound_core::{Error, Result};
use copyhound_crawler::CrawlHandler;
use copyhound_matcher::MatcherHandler;
use copyhound_report::ReportHandler;

/// Routes each task to the stage that owns its kind, taking the kind's fields
/// and calling the stage's method for it. Its matches are the one map from
/// kind to stage, and they are exhaustive, so a new task kind does not compile
/// until it has a home; the stages do not match the kind again.
///
/// A process may run only some stages ([`Dispatcher::default`] and the
/// `with_*` methods): a task of a stage it does not run fails as an internal
/// error naming the kind.
#[derive(Debug, Clone, Default)]
pub struct Dispatcher {
    crawl: Option<Arc<CrawlHandler>>,
    matcher: Option<Arc<MatcherHandler>>,
    report: Option<Arc<ReportHandler>>,
}

impl Dispatcher {
    /// Returns the dispatcher over the three stage handlers.
    pub fn new(crawl: CrawlHandler, matcher: MatcherHandler, report: ReportHandler) -> Self {
        Self::default()
            .with_crawl(crawl)
            .with_matcher(matcher)
            .with_report(report)
    }

    /// Runs the crawler stage's tasks (`crawl_site`, `fetch_page`) with `crawl`.
    pub fn with_crawl(mut self, crawl: CrawlHandler) -> Self {
        self.crawl = Some(Arc::new(crawl));
        self
    }

    /// Runs the matcher stage's tasks with `matcher`.
    pub fn with_matcher(mut self, matcher: MatcherHandler) -> Self {
        self.matcher = Some(Arc::new(matcher));
        self
    }

    /// Runs `generate_report` tasks with `report`.
    pub fn with_report(mut self, report: ReportHandler) -> Self {
        self.report = Some(Arc::new(report));
        self
    }

    fn crawl(&self, kind: &TaskKind) -> Result<&CrawlHandler> {
        self.crawl.as_deref().ok_or_else(|| not_run(kind))
    }

    fn matcher(&self, kind: &TaskKind) -> Result<&MatcherHandler> {
        self.matcher.as_deref().ok_or_else(|| not_run(kind))
    }

    fn report(&self, kind: &TaskKind) -> Result<&ReportHandler> {
        self.report.as_deref().ok_or_else(|| not_run(kind))
    }
}

fn not_run(kind: &TaskKind) -> Error {
    Error::internal(format!(
        "this process runs no handler for {} tasks",
        kind.name()
    ))
}

#[async_trait]
impl TaskHandler for Dispatcher {
    async fn handle(&self, task: &Task) -> Result<()> {
        let kind = &task.kind;
        match kind {
            TaskKind::CrawlSite {
                site_id,
                run_id,
                scope,
            } => {
                self.crawl(kind)?
                    .crawl_site(site_id, run_id, scope.as_ref())
                    .await
            }
            TaskKind::FetchPage {
                site_id,
                run_id,
                url,
                depth,
            } => {
                self.crawl(kind)?
                    .fetch_page(site_id, run_id, url, *depth)
                    .await
            }
            TaskKind::RevisitWatch {
                work_id,
                release,
                step,
                ..
            } => {
                self.crawl(kind)?
                    .revisit_watch(work_id, *release, *step)
                    .await
            }
            TaskKind::FingerprintPage {
                page_id,
                content_sha256,
            } => {
                self.matcher(kind)?
                    .fingerprint_page(page_id, content_sha256)
                    .await
            }
            TaskKind::FingerprintWork { work_id } => {
                self.matcher(kind)?.fingerprint_work(work_id).await
            }
            TaskKind::ComparePage {
                page_id,
                content_sha256,
            } => {
                self.matcher(kind)?
                    .compare_page(page_id, content_sha256)
                    .await
            }
            TaskKind::BackfillWork { work_id } => self.matcher(kind)?.backfill_work(work_id).await,
            TaskKind::GenerateReport {
                publisher_id,
                report_id,
            } => {
                self.report(kind)?
                    .generate_report(publisher_id, report_id)
                    .await
            }
            TaskKind::VerifySuggestion {
                publisher_id,
                suggestion_id,
            } => {
                self.crawl(kind)?
                    .verify_suggestion(publisher_id, suggestion_id)
                    .await
            }
        }
    }

    /// Only crawls wait for a turn (their publisher's share of crawl slots).
    async fn admit(&self, task: &Task) -> Result<Option<Duration>> {
        let kind = &task.kind;
        match kind {
            TaskKind::CrawlSite {
                site_id, run_id, ..
            } => self.crawl(kind)?.admit_crawl(site_id, run_id).await,
            TaskKind::RevisitWatch { due, .. } => self.crawl(kind)?.admit_revisit(*due),
            TaskKind::FetchPage { .. }
            | TaskKind::FingerprintPage { .. }
            | TaskKind::FingerprintWork { .. }
            | TaskKind::ComparePage { .. }
            | TaskKind::BackfillWork { .. }
            | TaskKind::GenerateReport { .. }
            | TaskKind::VerifySuggestion { .. } => Ok(None),
        }
    }

    /// A crawl ends its run `failed`, a report is marked failed; a page or
    /// work task has nothing that waits on it.
    async fn abandon(&self, task: &Task, reason: &str) -> Result<()> {
        let kind = &task.kind;
        match kind {
            TaskKind::CrawlSite {
                site_id, run_id, ..
            } => {
                self.crawl(kind)?
                    .abandon_crawl(site_id, run_id, reason)
                    .await
            }
            TaskKind::GenerateReport {
                publisher_id,
                report_id,
            } => {
                self.report(kind)?
                    .abandon_report(publisher_id, report_id, reason)
                    .await
            }
            TaskKind::FetchPage { .. }
            | TaskKind::RevisitWatch { .. }
            | TaskKind::FingerprintPage { .. }
            | TaskKind::FingerprintWork { .. }
            | TaskKind::ComparePage { .. }
            | TaskKind::BackfillWork { .. }
            | TaskKind::VerifySuggestion { .. } => Ok(()),
        }
    }
}
