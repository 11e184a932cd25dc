//! The MongoDB backend: one collection per kind (names in
//! [`crate::collections`]), documents in core's persisted JSON form converted to
//! BSON, `_id` the domain id (or the natural key), plus a few `_`-prefixed fields
//! the store owns for sorting (`_last_seen_ns`, `_created_ns`) and concurrency
//! (`_rev`). Writes are idempotent upserts on those keys; lists are keyset pages.

mod codec;
mod error;
mod fingerprints;
mod matches;
mod migrate;
mod pages;
mod publishers;
mod reports;
mod sites;
mod works;

use std::fmt;

use copyhound_core::model::Persisted;
use copyhound_core::{Error, Result};
use mongodb::bson::{Bson, Document, doc};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection, Database};

use crate::codec::StoreLimits;
pub(crate) use error::mongo_error;

/// Every store port over one MongoDB database.
#[derive(Clone)]
pub struct MongoStore {
    client: Client,
    database: Database,
    limits: StoreLimits,
}

impl fmt::Debug for MongoStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MongoStore")
            .field("database", &self.database.name())
            .field("limits", &self.limits)
            .finish()
    }
}

impl MongoStore {
    /// Connects to `url` (any MongoDB connection string) and uses `database`.
    /// Connection happens lazily: a server that is down shows as `Unavailable`
    /// on the first operation, after the URL's `serverSelectionTimeoutMS`.
    pub async fn connect(url: &str, database: &str, limits: StoreLimits) -> Result<Self> {
        let mut options = ClientOptions::parse(url).await.map_err(mongo_error)?;
        if options.app_name.is_none() {
            options.app_name = Some("copyhound".into());
        }
        let client = Client::with_options(options).map_err(mongo_error)?;
        let database = client.database(database);
        Ok(Self {
            client,
            database,
            limits,
        })
    }

    /// Returns the database name.
    pub fn database_name(&self) -> &str {
        self.database.name()
    }

    /// Drops the whole database (tests and tear-downs).
    pub async fn drop_database(&self) -> Result<()> {
        self.database.drop().await.map_err(mongo_error)
    }

    /// Returns the driver client (shared connection pool).
    pub fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn collection(&self, name: &str) -> Collection<Document> {
        self.database.collection(name)
    }

    pub(crate) fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// Returns the document with `_id = id`, if any.
    pub(crate) async fn find_by_id(&self, collection: &str, id: &str) -> Result<Option<Document>> {
        self.collection(collection)
            .find_one(doc! { "_id": id })
            .await
            .map_err(mongo_error)
    }

    /// Returns the decoded document matching `filter`, if any.
    pub(crate) async fn find_decoded<T: Persisted>(
        &self,
        collection: &str,
        filter: Document,
    ) -> Result<Option<T>> {
        let found = self
            .collection(collection)
            .find_one(filter)
            .await
            .map_err(mongo_error)?;
        found.map(codec::from_document).transpose()
    }

    /// Returns up to `limit` documents matching `filter` in `sort` order.
    pub(crate) async fn find_many(
        &self,
        collection: &str,
        filter: Document,
        sort: Document,
        limit: Option<usize>,
    ) -> Result<Vec<Document>> {
        let handle = self.collection(collection);
        let mut find = handle.find(filter).sort(sort);
        if let Some(limit) = limit {
            find = find.limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        let mut cursor = find.await.map_err(mongo_error)?;
        let mut documents = Vec::new();
        while cursor.advance().await.map_err(mongo_error)? {
            let raw = cursor.current();
            documents.push(Document::try_from(raw).map_err(|error| {
                Error::with_source(
                    copyhound_core::ErrorKind::Corrupt,
                    "stored document is not valid bson",
                    error,
                )
            })?);
        }
        Ok(documents)
    }

    /// Returns up to `limit` decoded documents matching `filter` in `sort` order.
    pub(crate) async fn find_decoded_many<T: Persisted>(
        &self,
        collection: &str,
        filter: Document,
        sort: Document,
        limit: Option<usize>,
    ) -> Result<Vec<T>> {
        self.find_many(collection, filter, sort, limit)
            .await?
            .into_iter()
            .map(codec::from_document)
            .collect()
    }

    /// Inserts or replaces the document with `_id = id`.
    pub(crate) async fn replace_by_id(
        &self,
        collection: &str,
        id: &str,
        document: Document,
    ) -> Result<()> {
        self.collection(collection)
            .replace_one(doc! { "_id": id }, document)
            .upsert(true)
            .await
            .map_err(mongo_error)?;
        Ok(())
    }
}

/// Adds "after this `_id`" to an ascending-by-id filter.
pub(crate) fn after_id(mut filter: Document, after: Option<String>) -> Document {
    if let Some(after) = after {
        filter.insert("_id", doc! { "$gt": after });
    }
    filter
}

/// Combines a filter with "after this (time, id)" of a newest-first listing.
pub(crate) fn after_time_id(
    filter: Document,
    time_field: &str,
    after: Option<String>,
) -> Result<Document> {
    let Some(after) = after else {
        return Ok(filter);
    };
    let (nanos, id) = crate::codec::split_time_id_key(&after)?;
    let keyset = doc! {
        "$or": [
            { time_field: { "$lt": nanos } },
            { time_field: nanos, "_id": { "$lt": id } },
        ]
    };
    Ok(doc! { "$and": [Bson::Document(filter), Bson::Document(keyset)] })
}

/// Returns the newest-first sort of a `(time, id)` listing.
pub(crate) fn newest_first(time_field: &str) -> Document {
    doc! { time_field: -1, "_id": -1 }
}
