//! Names of the MongoDB collections and of the embedded store's primary tables.
//! They live here, and only here, so a rename is one edit and the migration files
//! can be checked against the code (see the tests of `migrate`).

/// Publishers (tenants).
pub const PUBLISHERS: &str = "publishers";
/// API key records (hashed secrets only).
pub const API_KEYS: &str = "api_keys";
/// Registered works.
pub const WORKS: &str = "works";
/// Chapters of works, keyed by work + chapter id.
pub const CHAPTERS: &str = "chapters";
/// Watched sites.
pub const SITES: &str = "sites";
/// Crawl runs of sites.
pub const CRAWL_RUNS: &str = "crawl_runs";
/// Crawled pages with compressed bodies and their version history.
pub const PAGES: &str = "pages";
/// Fingerprint records, one per owner and fingerprint version.
pub const FINGERPRINTS: &str = "fingerprints";
/// Matches with their review history.
pub const MATCHES: &str = "matches";
/// Report records.
pub const REPORTS: &str = "reports";
/// Rendered report artifacts, chunked (MongoDB) or whole (embedded).
pub const REPORT_ARTIFACTS: &str = "report_artifacts";
/// Alert state per publisher and channel (who sends, when it last went).
pub const ALERT_STATES: &str = "alert_states";
/// Sites suggested to a publisher (discovery), one per publisher and origin.
pub const SITE_SUGGESTIONS: &str = "site_suggestions";
/// Applied schema migrations and the migration lock.
pub const MIGRATIONS: &str = "migrations";

/// Every data collection a migration may describe (not `migrations` itself).
pub const ALL_DATA: [&str; 13] = [
    PUBLISHERS,
    API_KEYS,
    WORKS,
    CHAPTERS,
    SITES,
    CRAWL_RUNS,
    PAGES,
    FINGERPRINTS,
    MATCHES,
    REPORTS,
    REPORT_ARTIFACTS,
    ALERT_STATES,
    SITE_SUGGESTIONS,
];
