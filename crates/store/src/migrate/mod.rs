//! Versioned schema migrations. Each file of `migrations/` (repository root) is a
//! numbered JSON description of collections, validators and indexes, embedded in
//! the binary so a deployed build always carries the schema it expects. Applied
//! versions are recorded in the database itself (a `migrations` collection, or a
//! table of the embedded store); applying is idempotent and safe to run from
//! several processes at once: one holds a lease, the others wait and then find
//! nothing left to do.

use std::fmt;

use async_trait::async_trait;
use copyhound_core::ids::sha256_hex;
use copyhound_core::model::Timestamp;
use copyhound_core::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};

/// The embedded migration files, in version order: (file name, contents).
const FILES: &[(&str, &str)] = &[
    (
        "0001_initial.json",
        include_str!("../../../../migrations/0001_initial.json"),
    ),
    (
        "0002_match_owner_key.json",
        include_str!("../../../../migrations/0002_match_owner_key.json"),
    ),
    (
        "0003_alert_states.json",
        include_str!("../../../../migrations/0003_alert_states.json"),
    ),
    (
        "0004_match_score_order.json",
        include_str!("../../../../migrations/0004_match_score_order.json"),
    ),
    (
        "0005_site_suggestions.json",
        include_str!("../../../../migrations/0005_site_suggestions.json"),
    ),
];

/// One index of a collection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSpec {
    /// Index name (stable: migrations refer to it).
    pub name: String,
    /// Fields in order; a leading `-` means descending.
    pub keys: Vec<String>,
    /// Whether the key identifies a document.
    #[serde(default)]
    pub unique: bool,
}

impl IndexSpec {
    /// Returns `(field, 1 | -1)` pairs.
    pub fn fields(&self) -> Vec<(&str, i32)> {
        self.keys
            .iter()
            .map(|key| match key.strip_prefix('-') {
                Some(field) => (field, -1),
                None => (key.as_str(), 1),
            })
            .collect()
    }
}

/// A collection a migration creates or changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectionSpec {
    /// Collection name (one of [`crate::collections`]).
    pub name: String,
    /// Fields every document must have, besides `_id` and `schema_version`.
    #[serde(default)]
    pub required: Vec<String>,
    /// Indexes to create (creating an existing identical index is a no-op).
    #[serde(default)]
    pub indexes: Vec<IndexSpec>,
    /// Names of indexes to drop first (dropping a missing index is a no-op).
    #[serde(default)]
    pub drop_indexes: Vec<String>,
}

/// One migration file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Migration {
    /// Version, equal to the file's number.
    pub version: u32,
    /// Short name, equal to the rest of the file name.
    pub name: String,
    /// What it does and why.
    pub description: String,
    /// Collections it creates or changes.
    #[serde(default)]
    pub collections: Vec<CollectionSpec>,
    /// SHA-256 of the file, to detect a file edited after it was applied.
    #[serde(skip)]
    pub checksum: String,
}

/// The record of an applied migration, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedMigration {
    /// Version.
    pub version: u32,
    /// Name at the time.
    pub name: String,
    /// Checksum of the file that was applied.
    pub checksum: String,
    /// When it was applied.
    pub applied_at: Timestamp,
}

/// Whether one migration is applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationStatus {
    /// Version.
    pub version: u32,
    /// Name.
    pub name: String,
    /// When it was applied; `None`: pending.
    pub applied_at: Option<Timestamp>,
    /// Whether the file changed after it was applied (someone edited history).
    pub modified_since_applied: bool,
}

/// Applies migrations to one backend.
#[async_trait]
pub trait Migrator: fmt::Debug + Send + Sync + 'static {
    /// Returns the applied migrations, in version order.
    async fn applied(&self) -> Result<Vec<AppliedMigration>>;
    /// Applies every pending migration under the backend's migration lock and
    /// returns how many this call applied (0 when another process did them).
    async fn up(&self) -> Result<usize>;
}

/// Returns the embedded migrations in version order.
pub fn migrations() -> Result<Vec<Migration>> {
    let mut parsed = Vec::with_capacity(FILES.len());
    for (file_name, text) in FILES {
        let mut migration: Migration = serde_json::from_str(text).map_err(|error| {
            Error::with_source(
                ErrorKind::Internal,
                format!("migration {file_name} does not parse"),
                error,
            )
        })?;
        let expected = format!("{:04}_{}.json", migration.version, migration.name);
        if *file_name != expected {
            return Err(Error::internal(format!(
                "migration {file_name} declares itself as {expected}"
            )));
        }
        migration.checksum = sha256_hex(text.as_bytes());
        parsed.push(migration);
    }
    Ok(parsed)
}

/// Returns the status of every embedded migration given what a backend applied.
pub fn status_of(applied: &[AppliedMigration]) -> Result<Vec<MigrationStatus>> {
    Ok(migrations()?
        .into_iter()
        .map(|migration| {
            let record = applied
                .iter()
                .find(|record| record.version == migration.version);
            MigrationStatus {
                version: migration.version,
                name: migration.name,
                applied_at: record.map(|record| record.applied_at),
                modified_since_applied: record
                    .is_some_and(|record| record.checksum != migration.checksum),
            }
        })
        .collect())
}

/// Returns the migrations not yet in `applied`, in order.
pub(crate) fn pending(applied: &[AppliedMigration]) -> Result<Vec<Migration>> {
    Ok(migrations()?
        .into_iter()
        .filter(|migration| {
            applied
                .iter()
                .all(|record| record.version != migration.version)
        })
        .collect())
}

/// Returns the record of `migration` applied now.
pub(crate) fn record_of(migration: &Migration) -> AppliedMigration {
    AppliedMigration {
        version: migration.version,
        name: migration.name.clone(),
        checksum: migration.checksum.clone(),
        applied_at: chrono::Utc::now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collections;

    #[test]
    fn embedded_migrations_parse_and_name_known_collections() {
        let all = migrations().unwrap();
        assert_eq!(all.first().unwrap().version, 1);
        for (position, migration) in all.iter().enumerate() {
            assert_eq!(
                migration.version as usize,
                position + 1,
                "versions are contiguous"
            );
            for collection in &migration.collections {
                assert!(
                    collections::ALL_DATA.contains(&collection.name.as_str()),
                    "{}",
                    collection.name
                );
            }
        }
        // The first migration creates what existed then; later ones add the rest.
        let mut described: Vec<&str> = all
            .iter()
            .flat_map(|migration| migration.collections.iter().map(|c| c.name.as_str()))
            .collect();
        described.sort_unstable();
        described.dedup();
        let mut every = collections::ALL_DATA.to_vec();
        every.sort_unstable();
        assert_eq!(described, every);
    }

    #[test]
    fn descending_keys_parse() {
        let spec = IndexSpec {
            name: "x".into(),
            keys: vec!["a".into(), "-b".into()],
            unique: false,
        };
        assert_eq!(spec.fields(), [("a", 1), ("b", -1)]);
    }
}
