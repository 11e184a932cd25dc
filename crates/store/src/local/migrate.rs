use async_trait::async_trait;
use copyhound_core::{Error, ErrorKind, Result};
use redb::ReadableTable;

use super::{LocalStore, MIGRATIONS, db_error};
use crate::migrate::{self, AppliedMigration, Migrator};

/// The migration that adds the score index (filled here from stored matches).
const MATCH_SCORE_ORDER: u32 = 4;

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
                if migration.version == MATCH_SCORE_ORDER {
                    let indexed = super::matches::index_scores(txn)?;
                    tracing::info!(indexed, "match score index filled");
                }
                tracing::info!(version = migration.version, name = %migration.name, "applied migration");
            }
            Ok(pending.len())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use copyhound_core::ports::{MatchFilter, MatchOrder, MatchStore, PageRequest};

    use super::super::{MATCHES_BY_SCORE, MIGRATIONS};
    use super::*;
    use crate::tests::fixtures;

    /// A store written before migration 4 has matches and no score index:
    /// applying the migration fills it.
    #[tokio::test]
    async fn migration_4_indexes_the_scores_of_stored_matches() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        store.up().await.unwrap();
        for number in 0..5 {
            let mut found =
                fixtures::found_match("pub_a", &format!("http://h/{number}"), "w1", "c1", number);
            found.score = 0.5 + number as f32 / 10.0;
            store.upsert_match(&found).await.unwrap();
        }
        // Back to the state before migration 4.
        store
            .write(|txn| {
                txn.delete_table(MATCHES_BY_SCORE).map_err(db_error)?;
                txn.open_table(MATCHES_BY_SCORE).map_err(db_error)?;
                let mut table = txn.open_table(MIGRATIONS).map_err(db_error)?;
                table
                    .remove(version_key(MATCH_SCORE_ORDER).as_str())
                    .map_err(db_error)?;
                Ok(())
            })
            .await
            .unwrap();
        let by_score = MatchFilter {
            order: MatchOrder::Score,
            ..MatchFilter::of_publisher("pub_a".parse().unwrap())
        };
        let page = PageRequest {
            after: None,
            limit: 10,
        };
        let listed = store.list_matches(&by_score, &page).await.unwrap();
        assert!(listed.items.is_empty(), "no index yet");
        assert_eq!(store.up().await.unwrap(), 1);
        let listed = store.list_matches(&by_score, &page).await.unwrap();
        let scores: Vec<f32> = listed.items.iter().map(|found| found.score).collect();
        assert_eq!(scores, [0.9, 0.8, 0.7, 0.6, 0.5]);
    }
}
