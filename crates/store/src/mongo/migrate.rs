//! Migrations on MongoDB. A lease document (`_id: "lock"` in `migrations`) taken
//! with an upserting find-and-modify serializes concurrent runners: the unique
//! `_id` makes exactly one upsert win; the others see a duplicate key, wait and
//! retry, and then find nothing pending. A runner that dies leaves a lease that
//! expires after [`LEASE`].

use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::{Error, ErrorKind, Result};
use mongodb::IndexModel;
use mongodb::bson::{Bson, Document, doc};
use mongodb::options::IndexOptions;

use super::codec::{document_to_object, object_to_document};
use super::error::{INDEX_NOT_FOUND, NAMESPACE_EXISTS, is_duplicate_key, server_code};
use super::{MongoStore, mongo_error};
use crate::codec::timestamp_ns;
use crate::collections::MIGRATIONS;
use crate::migrate::{self, AppliedMigration, CollectionSpec, Migration, Migrator};

const LOCK_ID: &str = "lock";
/// How long a lease lasts without renewal.
const LEASE: Duration = Duration::from_secs(60);
/// Pause between attempts to take a held lease.
const POLL: Duration = Duration::from_millis(100);

fn validator(spec: &CollectionSpec) -> Document {
    let mut required: Vec<Bson> = vec!["_id".into(), "schema_version".into()];
    required.extend(spec.required.iter().map(|field| Bson::from(field.as_str())));
    doc! {
        "$jsonSchema": {
            "bsonType": "object",
            "required": required,
            "properties": { "schema_version": { "bsonType": ["int", "long"] } },
        }
    }
}

impl MongoStore {
    async fn apply_collection(&self, spec: &CollectionSpec) -> Result<()> {
        let created = self
            .database
            .create_collection(&spec.name)
            .validator(validator(spec))
            .await;
        match created {
            Ok(()) => {}
            Err(error) if server_code(&error) == Some(NAMESPACE_EXISTS) => {
                self.database
                    .run_command(doc! { "collMod": &spec.name, "validator": validator(spec) })
                    .await
                    .map_err(mongo_error)?;
            }
            Err(error) => return Err(mongo_error(error)),
        }
        for name in &spec.drop_indexes {
            match self.collection(&spec.name).drop_index(name.as_str()).await {
                Ok(()) => {}
                Err(error) if server_code(&error) == Some(INDEX_NOT_FOUND) => {}
                Err(error) => return Err(mongo_error(error)),
            }
        }
        for index in &spec.indexes {
            let keys: Document = index
                .fields()
                .into_iter()
                .map(|(field, order)| (field.to_string(), Bson::Int32(order)))
                .collect();
            let options = IndexOptions::builder()
                .name(index.name.clone())
                .unique(index.unique)
                .build();
            let model = IndexModel::builder().keys(keys).options(options).build();
            self.collection(&spec.name)
                .create_index(model)
                .await
                .map_err(mongo_error)?;
        }
        Ok(())
    }

    async fn apply(&self, migration: &Migration) -> Result<()> {
        for spec in &migration.collections {
            self.apply_collection(spec).await?;
        }
        let record = serde_json::to_value(migrate::record_of(migration)).map_err(|error| {
            Error::with_source(
                ErrorKind::Internal,
                "failed to encode a migration record",
                error,
            )
        })?;
        let serde_json::Value::Object(object) = record else {
            return Err(Error::internal("migration record is not an object"));
        };
        let mut document = object_to_document(object)?;
        let id = format!("{:04}", migration.version);
        document.insert("_id", &id);
        document.insert("kind", "applied");
        self.replace_by_id(MIGRATIONS, &id, document).await?;
        tracing::info!(version = migration.version, name = %migration.name, "applied migration");
        Ok(())
    }

    /// Takes the migration lease for `owner`, waiting while another runner holds it.
    async fn acquire_lease(&self, owner: &str) -> Result<()> {
        let deadline = tokio::time::Instant::now() + LEASE + Duration::from_secs(30);
        let lease_ns = i64::try_from(LEASE.as_nanos()).unwrap_or(i64::MAX);
        loop {
            let now = timestamp_ns(&chrono::Utc::now());
            let filter = doc! {
                "_id": LOCK_ID,
                "$or": [ { "expires_ns": { "$lt": now } }, { "owner": owner } ],
            };
            let update = doc! {
                "$set": { "owner": owner, "expires_ns": now.saturating_add(lease_ns), "kind": "lock", "schema_version": 1_i64 }
            };
            match self
                .collection(MIGRATIONS)
                .find_one_and_update(filter, update)
                .upsert(true)
                .await
            {
                Ok(_) => return Ok(()),
                Err(error) if is_duplicate_key(&error) => {}
                Err(error) => return Err(mongo_error(error)),
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::unavailable(
                    "another process holds the migration lock",
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn release_lease(&self, owner: &str) -> Result<()> {
        self.collection(MIGRATIONS)
            .delete_one(doc! { "_id": LOCK_ID, "owner": owner })
            .await
            .map_err(mongo_error)?;
        Ok(())
    }
}

#[async_trait]
impl Migrator for MongoStore {
    async fn applied(&self) -> Result<Vec<AppliedMigration>> {
        let documents = self
            .find_many(
                MIGRATIONS,
                doc! { "kind": "applied" },
                doc! { "version": 1 },
                None,
            )
            .await?;
        documents
            .into_iter()
            .map(|mut document| {
                document.remove("_id");
                document.remove("kind");
                serde_json::from_value(serde_json::Value::Object(document_to_object(document)?))
                    .map_err(|error| {
                        Error::with_source(
                            ErrorKind::Corrupt,
                            "stored migration record is not valid",
                            error,
                        )
                    })
            })
            .collect()
    }

    async fn up(&self) -> Result<usize> {
        let owner = uuid::Uuid::now_v7().simple().to_string();
        self.acquire_lease(&owner).await?;
        let outcome = async {
            let pending = migrate::pending(&self.applied().await?)?;
            for migration in &pending {
                self.apply(migration).await?;
            }
            Ok(pending.len())
        }
        .await;
        let released = self.release_lease(&owner).await;
        let applied = outcome?;
        released?;
        Ok(applied)
    }
}
