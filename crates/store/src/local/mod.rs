//! The embedded backend: every store in one redb file (`store.redb`) under a data
//! directory. redb is a copy-on-write B-tree with atomic commits, so a process
//! killed at any instant leaves the last committed state intact. Each port call
//! is one transaction: reads by key on the calling thread, scans on tokio's
//! blocking pool, writes on the database's one writer, which commits the writes
//! waiting together and replies once they are durable (`copyhound_redb`).
//! Secondary orderings (a tenant's works, a site's runs newest first) are
//! separate key-only tables maintained in the same transaction as the document
//! they index.
//!
//! After an I/O failure (a full disk) the writer reopens the file; until a
//! write commits again, writes answer `Unavailable` and `check_connectivity`
//! (so `/health`) reports why ([`LocalStore::health`]).

mod cache;
mod direct;
mod fingerprints;
mod matches;
mod migrate;
mod pages;
mod publishers;
mod reports;
mod sites;
mod works;

use std::fmt;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use copyhound_core::model::Persisted;
use copyhound_core::stages::{Stage, time};
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_redb::{DbHealth, GroupWriter, SharedDb};
use redb::{
    Database, Durability, ReadTransaction, ReadableDatabase, ReadableTable, TableDefinition,
    WriteTransaction,
};

use crate::codec::{self, StoreLimits};
use crate::collections;

/// A primary table: key -> JSON document (or compressed bytes).
pub(crate) type DocTable = TableDefinition<'static, &'static str, &'static [u8]>;
/// A key-only secondary table: `<scope>\0<sort key>`.
pub(crate) type KeyTable = TableDefinition<'static, &'static str, ()>;

pub(crate) const PUBLISHERS: DocTable = TableDefinition::new(collections::PUBLISHERS);
pub(crate) const API_KEYS: DocTable = TableDefinition::new(collections::API_KEYS);
pub(crate) const WORKS: DocTable = TableDefinition::new(collections::WORKS);
pub(crate) const CHAPTERS: DocTable = TableDefinition::new(collections::CHAPTERS);
pub(crate) const SITES: DocTable = TableDefinition::new(collections::SITES);
pub(crate) const CRAWL_RUNS: DocTable = TableDefinition::new(collections::CRAWL_RUNS);
pub(crate) const PAGES: DocTable = TableDefinition::new(collections::PAGES);
pub(crate) const PAGE_BODIES: DocTable = TableDefinition::new("page_bodies");
pub(crate) const FINGERPRINTS: DocTable = TableDefinition::new(collections::FINGERPRINTS);
pub(crate) const MATCHES: DocTable = TableDefinition::new(collections::MATCHES);
pub(crate) const REPORTS: DocTable = TableDefinition::new(collections::REPORTS);
pub(crate) const REPORT_ARTIFACTS: DocTable = TableDefinition::new(collections::REPORT_ARTIFACTS);
pub(crate) const ALERT_STATES: DocTable = TableDefinition::new(collections::ALERT_STATES);
pub(crate) const SITE_SUGGESTIONS: DocTable = TableDefinition::new(collections::SITE_SUGGESTIONS);
pub(crate) const MIGRATIONS: DocTable = TableDefinition::new(collections::MIGRATIONS);

pub(crate) const WORKS_BY_PUBLISHER: KeyTable = TableDefinition::new("works_by_publisher");
pub(crate) const SITES_BY_PUBLISHER: KeyTable = TableDefinition::new("sites_by_publisher");
pub(crate) const RUNS_BY_SITE: KeyTable = TableDefinition::new("crawl_runs_by_site");
pub(crate) const PAGES_BY_SITE: KeyTable = TableDefinition::new("pages_by_site");
pub(crate) const PAGES_BY_URL: DocTable = TableDefinition::new("pages_by_url");
pub(crate) const FINGERPRINTS_BY_VERSION: KeyTable =
    TableDefinition::new("fingerprints_by_version");
pub(crate) const MATCHES_BY_PAGE: KeyTable = TableDefinition::new("matches_by_page");
pub(crate) const MATCHES_BY_PUBLISHER: KeyTable = TableDefinition::new("matches_by_publisher");
pub(crate) const MATCHES_BY_SCORE: KeyTable = TableDefinition::new("matches_by_score");
pub(crate) const REPORTS_BY_PUBLISHER: KeyTable = TableDefinition::new("reports_by_publisher");
pub(crate) const SUGGESTIONS_BY_PUBLISHER: KeyTable =
    TableDefinition::new("site_suggestions_by_publisher");

const DOC_TABLES: [DocTable; 16] = [
    PUBLISHERS,
    API_KEYS,
    WORKS,
    CHAPTERS,
    SITES,
    CRAWL_RUNS,
    PAGES,
    PAGE_BODIES,
    FINGERPRINTS,
    MATCHES,
    REPORTS,
    REPORT_ARTIFACTS,
    ALERT_STATES,
    MIGRATIONS,
    PAGES_BY_URL,
    SITE_SUGGESTIONS,
];
const KEY_TABLES: [KeyTable; 10] = [
    WORKS_BY_PUBLISHER,
    SITES_BY_PUBLISHER,
    RUNS_BY_SITE,
    PAGES_BY_SITE,
    FINGERPRINTS_BY_VERSION,
    MATCHES_BY_PAGE,
    MATCHES_BY_PUBLISHER,
    MATCHES_BY_SCORE,
    REPORTS_BY_PUBLISHER,
    SUGGESTIONS_BY_PUBLISHER,
];

/// File name of the database inside the data directory.
pub const FILE_NAME: &str = "store.redb";

/// Every store port over one embedded redb database.
#[derive(Clone)]
pub struct LocalStore {
    db: Arc<SharedDb>,
    writer: GroupWriter,
    path: PathBuf,
    limits: StoreLimits,
    chapters: Arc<cache::ChapterCache>,
}

impl fmt::Debug for LocalStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalStore")
            .field("path", &self.path)
            .field("limits", &self.limits)
            .finish()
    }
}

impl LocalStore {
    /// Opens (creating if needed) the store in `dir`, with default limits.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(dir, StoreLimits::default())
    }

    /// Opens (creating if needed) the store in `dir`. Fails with `Unavailable`
    /// when another process holds the database.
    pub fn open_with(dir: impl AsRef<Path>, limits: StoreLimits) -> Result<Self> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|error| {
            Error::with_source(
                ErrorKind::Unavailable,
                format!("failed to create {}", dir.display()),
                error,
            )
        })?;
        let path = dir.join(FILE_NAME);
        let db = SharedDb::create("store", &path).map_err(db_error)?;
        Self::on(db, limits)
    }

    /// Opens the store in `dir` through `open`, which opens `store.redb`
    /// (tests: a disk that fills on demand).
    #[cfg(test)]
    pub(crate) fn open_on(dir: &Path, open: copyhound_redb::Opener) -> Result<Self> {
        let db = SharedDb::open_with("store", dir.join(FILE_NAME), open).map_err(db_error)?;
        Self::on(db, StoreLimits::default())
    }

    fn on(db: Arc<SharedDb>, limits: StoreLimits) -> Result<Self> {
        let path = db.path().to_path_buf();
        let writer = GroupWriter::start(Arc::clone(&db), db_error, Stage::StoreWrite)?;
        let store = Self {
            db,
            writer,
            path,
            limits,
            chapters: Arc::default(),
        };
        store.ensure_tables()?;
        Ok(store)
    }

    /// Returns the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns whether writes commit, or why they fail (a full disk).
    pub fn health(&self) -> DbHealth {
        self.db.health()
    }

    /// Creates every table, so read transactions never meet a missing one.
    fn ensure_tables(&self) -> Result<()> {
        let db = self.db.get()?;
        let txn = begin_write(&db)?;
        for table in DOC_TABLES {
            txn.open_table(table).map_err(db_error)?;
        }
        for table in KEY_TABLES {
            txn.open_table(table).map_err(db_error)?;
        }
        txn.commit().map_err(db_error)
    }

    pub(crate) fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// Runs a point read (a few documents by key) on the calling thread: it
    /// costs a few B-tree pages, less than a trip to the blocking pool and
    /// back, which contended on the pool's lock with many small reads.
    pub(crate) async fn point<T, F>(&self, work: F) -> Result<T>
    where
        F: FnOnce(&ReadTransaction) -> Result<T>,
    {
        time(Stage::StoreRead, || {
            let db = self.db.get()?;
            let txn = db.begin_read().map_err(db_error)?;
            work(&txn)
        })
    }

    /// Runs `work` in a read transaction on the blocking pool (scans).
    pub(crate) async fn read<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&ReadTransaction) -> Result<T> + Send + 'static,
    {
        let shared = Arc::clone(&self.db);
        run_blocking(move || {
            time(Stage::StoreRead, || {
                let db = shared.get()?;
                let txn = db.begin_read().map_err(db_error)?;
                work(&txn)
            })
        })
        .await
    }

    /// Runs `work` in a write transaction, committed (durably) with the other
    /// writes waiting at the time when it returns `Ok`; leaves nothing when it
    /// fails. `work` may run again (see `copyhound_redb`).
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&WriteTransaction) -> Result<T> + Send + 'static,
    {
        self.writer.write(work).await
    }
}

fn begin_write(db: &Database) -> Result<WriteTransaction> {
    let mut txn = db.begin_write().map_err(db_error)?;
    txn.set_durability(Durability::Immediate)
        .map_err(db_error)?;
    Ok(txn)
}

async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| Error::with_source(ErrorKind::Internal, "store task failed", error))?
}

/// Translates every redb error, once.
pub(crate) fn db_error(error: impl Into<redb::Error>) -> Error {
    let error: redb::Error = error.into();
    let kind = match &error {
        redb::Error::DatabaseAlreadyOpen | redb::Error::Io(_) | redb::Error::PreviousIo => {
            ErrorKind::Unavailable
        }
        redb::Error::Corrupted(_) | redb::Error::UpgradeRequired(_) => ErrorKind::Corrupt,
        redb::Error::ValueTooLarge(_) => ErrorKind::TooLarge,
        _ => ErrorKind::Internal,
    };
    Error::with_source(kind, format!("embedded store: {error}"), error)
}

/// Parses a stored document as a JSON object.
pub(crate) fn parse_object(
    key: &str,
    bytes: &[u8],
) -> Result<serde_json::Map<String, serde_json::Value>> {
    serde_json::from_slice(bytes).map_err(|error| {
        Error::with_source(
            ErrorKind::Corrupt,
            format!("stored document {key} is not JSON"),
            error,
        )
    })
}

/// Returns the decoded document at `key`, if any.
pub(crate) fn get_doc<T: Persisted>(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<T>> {
    let Some(guard) = table.get(key).map_err(db_error)? else {
        return Ok(None);
    };
    if let Some(direct) = direct::decode::<T>(guard.value(), &[]) {
        return Ok(Some(direct.value));
    }
    parse_object(key, guard.value())
        .and_then(codec::decode)
        .map(Some)
}

/// Stores `value` at `key`.
pub(crate) fn put_doc<T: Persisted>(
    table: &mut redb::Table<'_, &'static str, &'static [u8]>,
    key: &str,
    value: &T,
) -> Result<()> {
    table
        .insert(key, value.to_document_bytes()?.as_slice())
        .map_err(db_error)?;
    Ok(())
}

/// Stores a JSON object at `key`.
pub(crate) fn put_object(
    table: &mut redb::Table<'_, &'static str, &'static [u8]>,
    key: &str,
    object: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    let bytes = serde_json::to_vec(object).map_err(|error| {
        Error::with_source(ErrorKind::Internal, "failed to encode document", error)
    })?;
    table.insert(key, bytes.as_slice()).map_err(db_error)?;
    Ok(())
}

/// Returns the index key `<scope>\0<sort>`.
pub(crate) fn scoped(scope: &str, sort: &str) -> String {
    format!("{scope}\0{sort}")
}

/// Returns up to `limit` sort keys of `scope`, after `after` in scan direction.
pub(crate) fn scan_scope<V: redb::Value + 'static>(
    table: &impl ReadableTable<&'static str, V>,
    scope: &str,
    after: Option<&str>,
    limit: usize,
    newest_first: bool,
) -> Result<Vec<String>> {
    let start = format!("{scope}\0");
    let end = format!("{scope}\u{1}");
    let cursor = after.map(|sort| scoped(scope, sort));
    let (low, high) = match (&cursor, newest_first) {
        (Some(cursor), false) => (
            Bound::Excluded(cursor.as_str()),
            Bound::Excluded(end.as_str()),
        ),
        (Some(cursor), true) => (
            Bound::Included(start.as_str()),
            Bound::Excluded(cursor.as_str()),
        ),
        (None, _) => (
            Bound::Included(start.as_str()),
            Bound::Excluded(end.as_str()),
        ),
    };
    let range = table.range::<&str>((low, high)).map_err(db_error)?;
    let mut keys = Vec::new();
    let mut push = |entry: std::result::Result<
        (
            redb::AccessGuard<'_, &'static str>,
            redb::AccessGuard<'_, V>,
        ),
        redb::StorageError,
    >|
     -> Result<bool> {
        let (key, _) = entry.map_err(db_error)?;
        keys.push(key.value()[start.len()..].to_string());
        Ok(keys.len() < limit)
    };
    if newest_first {
        for entry in range.rev() {
            if !push(entry)? {
                break;
            }
        }
    } else {
        for entry in range {
            if !push(entry)? {
                break;
            }
        }
    }
    Ok(keys)
}

/// Returns up to `limit` primary keys after `after`, in key order.
pub(crate) fn scan_keys(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<String>> {
    let low = after.map_or(Bound::Unbounded, Bound::Excluded);
    let range = table
        .range::<&str>((low, Bound::Unbounded))
        .map_err(db_error)?;
    let mut keys = Vec::new();
    for entry in range.take(limit) {
        let (key, _) = entry.map_err(db_error)?;
        keys.push(key.value().to_string());
    }
    Ok(keys)
}

/// Returns the documents at `keys`; a dangling index entry is corruption.
pub(crate) fn load_all<T: Persisted>(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    keys: &[String],
) -> Result<Vec<T>> {
    keys.iter()
        .map(|key| {
            get_doc(table, key)?
                .ok_or_else(|| Error::new(ErrorKind::Corrupt, format!("index names missing {key}")))
        })
        .collect()
}
