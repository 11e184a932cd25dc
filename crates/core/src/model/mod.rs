//! The domain model shared by every stage. Types here are plain data: they carry
//! no behaviour that needs IO, so stores, workers, the API and the report
//! generator all speak the same language. Every persisted type implements
//! [`Persisted`], which stamps a schema version on the stored document.

mod fingerprint;
mod matches;
mod page;
mod persisted;
mod publisher;
mod recipient;
mod report;
mod site;
mod suggestion;
mod task;
mod work;

pub use fingerprint::{FingerprintOwner, FingerprintRecord, PassageRecord, dna_index_key};
pub use matches::{CopiedSpan, EvidenceExcerpt, Match, MatchStatus, Review};
pub use page::{
    Connection, FetchMeta, MAX_REVALIDATIONS, Page, PageVersion, Pagination, Reading, Resolution,
    Revalidation, shown_text,
};
pub use persisted::{Persisted, SCHEMA_VERSION_FIELD};
pub use publisher::{
    AlertOn, AlertSettings, ApiKey, InfringementPolicy, MAX_ALERT_RECIPIENTS, MAX_POLICY_CHARS,
    MAX_REPORT_CRON_CHARS, MAX_REPORT_SCHEDULES, MIN_POLICY_CHARS, MIN_POLICY_COVERAGE, Publisher,
    PublisherKind, PublisherProfile, ReportScheduleSetting, Role, Thresholds, is_email_address,
    validate_report_schedules,
};
pub use recipient::{CdnFront, HostingNetwork, Recipients, Registrar};
pub use report::{AlertState, Report, ReportFormat, ReportScope, ReportStatus, ReviewScope};
pub use site::{CrawlCounters, CrawlRun, CrawlRunStatus, ExtractionHints, Render, RunScope, Site};
pub use suggestion::{
    MAX_SUGGESTION_REASONS, ReasonKind, SiteSuggestion, SuggestionReason, SuggestionStatus,
    Verification,
};
pub use task::{Task, TaskKind};
pub use work::{Chapter, FingerprintStatus, Language, Work, WorkKind};

/// A point in time, UTC.
pub type Timestamp = chrono::DateTime<chrono::Utc>;
