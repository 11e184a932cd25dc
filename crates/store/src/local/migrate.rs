use async_trait::async_trait;
use copyhound_core::{Error, ErrorKind, Result};
use redb::ReadableTable;

use super::{LocalStore, MIGRATIONS, db_error};
use crate::migrate::{self, AppliedMigration, Migrator};

fn version_key(version: u32) -> String {
    format!("{version:010}")
}

fn read_applied(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
) -> Result<Vec<AppliedMigration>> {
    let mut applied = Vec::new();
    for entry in table.range::<&str>(..).map_err(db_error)? {
        let (key, value) = entry.map_err(db_error)?;
        let record = serde_json::from_slice(value.value()).map_err(|error| {
            Error::with_source(
                ErrorKind::Corrupt,
                format!("migration record {} is not valid", key.value()),
                error,
            )
        })?;
        applied.push(record);
    }
    Ok(applied)
}

/// The embedded store's schema is its set of tables, all created on open, so a
/// migration here only records its version; the write transaction is the lock
/// (one writer at a time, and one process per database file).
#[async_trait]
impl Migrator for LocalStore {
    async fn applied(&self) -> Result<Vec<AppliedMigration>> {
        self.read(|txn| read_applied(&txn.open_table(MIGRATIONS).map_err(db_error)?))
            .await
    }

    async fn up(&self) -> Result<usize> {
        self.write(|txn| {
            let mut table = txn.open_table(MIGRATIONS).map_err(db_error)?;
            let pending = migrate::pending(&read_applied(&table)?)?;
            for migration in &pending {
                let record = serde_json::to_vec(&migrate::record_of(migration)).map_err(|error| {
                    Error::with_source(ErrorKind::Internal, "failed to encode a migration record", error)
                })?;
                table.insert(version_key(migration.version).as_str(), record.as_slice()).map_err(db_error)?;
                tracing::info!(version = migration.version, name = %migration.name, "applied migration");
            }
            Ok(pending.len())
        })
        .await
    }
}
