use serde::{Deserialize, Serialize};

use super::{RunScope, Timestamp};
use crate::ids::{CrawlRunId, PageId, PublisherId, ReportId, SiteId, TaskId, WorkId};

/// The work a task asks for. Each kind has one handler; the pipeline order is
/// crawl site -> fetch page -> fingerprint page -> compare page, and
/// fingerprint work -> back-fill work for registrations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TaskKind {
    /// Start a crawl run of a site: fetch its seeds.
    CrawlSite {
        /// The site.
        site_id: SiteId,
        /// The run this crawl belongs to.
        run_id: CrawlRunId,
        /// What a targeted run crawls, carried with the task as well as on
        /// the run: a run whose record was lost before it started still
        /// crawls only its scope, never the whole site.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<RunScope>,
    },
    /// Fetch one page of a crawl run (and follow its links).
    FetchPage {
        /// The site.
        site_id: SiteId,
        /// The run.
        run_id: CrawlRunId,
        /// Normalized URL.
        url: String,
        /// Link depth from a seed.
        depth: u32,
    },
    /// One visit of a release burst or of quiet watching: revisit the pages
    /// that list `work_id`'s chapters on every site that carries it.
    RevisitWatch {
        /// The work.
        work_id: WorkId,
        /// When the release that started the burst happened.
        release: Timestamp,
        /// Which visit of the curve this is (0: at once).
        step: u32,
        /// When the visit is due; delivered earlier, it waits.
        due: Timestamp,
    },
    /// Fingerprint a stored page at a content hash.
    FingerprintPage {
        /// The page.
        page_id: PageId,
        /// The text content hash the task is for; a newer content makes it stale.
        content_sha256: String,
    },
    /// Fingerprint and index every chapter of a work.
    FingerprintWork {
        /// The work.
        work_id: WorkId,
    },
    /// Compare a fingerprinted page against the registered works.
    ComparePage {
        /// The page.
        page_id: PageId,
        /// The content hash it was fingerprinted at.
        content_sha256: String,
    },
    /// Compare a newly registered or changed work against pages already crawled.
    BackfillWork {
        /// The work.
        work_id: WorkId,
    },
    /// Render a requested report.
    GenerateReport {
        /// The publisher that requested it (reports are stored per tenant).
        publisher_id: PublisherId,
        /// The report.
        report_id: ReportId,
    },
    /// Check a suggested site cheaply: its robots.txt and one page.
    VerifySuggestion {
        /// Whose suggestion it is.
        publisher_id: PublisherId,
        /// The suggestion.
        suggestion_id: String,
    },
}

impl TaskKind {
    /// Returns the stable name of the kind (metrics, logs, dead-letter listings).
    pub fn name(&self) -> &'static str {
        match self {
            TaskKind::CrawlSite { .. } => "crawl_site",
            TaskKind::FetchPage { .. } => "fetch_page",
            TaskKind::RevisitWatch { .. } => "revisit_watch",
            TaskKind::FingerprintPage { .. } => "fingerprint_page",
            TaskKind::FingerprintWork { .. } => "fingerprint_work",
            TaskKind::ComparePage { .. } => "compare_page",
            TaskKind::BackfillWork { .. } => "backfill_work",
            TaskKind::GenerateReport { .. } => "generate_report",
            TaskKind::VerifySuggestion { .. } => "verify_suggestion",
        }
    }

    /// Returns the idempotency key: two tasks with equal keys do the same work.
    pub fn idempotency_key(&self) -> String {
        match self {
            TaskKind::CrawlSite {
                site_id, run_id, ..
            } => format!("crawl_site/{site_id}/{run_id}"),
            TaskKind::FetchPage { run_id, url, .. } => format!("fetch_page/{run_id}/{url}"),
            TaskKind::FingerprintPage {
                page_id,
                content_sha256,
            } => {
                format!("fingerprint_page/{page_id}/{content_sha256}")
            }
            TaskKind::FingerprintWork { work_id } => format!("fingerprint_work/{work_id}"),
            TaskKind::RevisitWatch {
                work_id,
                release,
                step,
                ..
            } => format!("revisit_watch/{work_id}/{}/{step}", release.timestamp()),
            TaskKind::ComparePage {
                page_id,
                content_sha256,
            } => {
                format!("compare_page/{page_id}/{content_sha256}")
            }
            TaskKind::BackfillWork { work_id } => format!("backfill_work/{work_id}"),
            TaskKind::GenerateReport { report_id, .. } => format!("generate_report/{report_id}"),
            TaskKind::VerifySuggestion {
                publisher_id,
                suggestion_id,
            } => format!("verify_suggestion/{publisher_id}/{suggestion_id}"),
        }
    }
}

/// A unit of queued work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Derived from the idempotency key.
    pub id: TaskId,
    /// What to do.
    #[serde(flatten)]
    pub kind: TaskKind,
    /// When it was first enqueued.
    pub enqueued_at: Timestamp,
}

impl Task {
    /// Returns a task for `kind` with its derived id.
    pub fn new(kind: TaskKind, enqueued_at: Timestamp) -> Self {
        Self {
            id: TaskId::derive_from(&kind.idempotency_key()),
            kind,
            enqueued_at,
        }
    }
}

super::persisted::persisted_v1!(Task => "task");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_work_gives_equal_ids() {
        let kind = TaskKind::ComparePage {
            page_id: PageId::for_url("http://a/"),
            content_sha256: "ab".into(),
        };
        let now = chrono::Utc::now();
        assert_eq!(Task::new(kind.clone(), now).id, Task::new(kind, now).id);
    }

    #[test]
    fn tasks_serialize_flat_with_a_kind_tag() {
        let task = Task::new(
            TaskKind::FingerprintWork {
                work_id: "w1".parse().unwrap(),
            },
            chrono::Utc::now(),
        );
        let json = serde_json::to_value(&task).unwrap();
        assert_eq!(json["kind"], "fingerprint_work");
        assert_eq!(json["work_id"], "w1");
        let back: Task = serde_json::from_value(json).unwrap();
        assert_eq!(back, task);
    }
}
