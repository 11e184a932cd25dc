use async_trait::async_trait;
use copyhound_core::ids::{ApiKeyId, PublisherId};
use copyhound_core::model::{ApiKey, Publisher};
use copyhound_core::ports::{PageRequest, Paged, PublisherStore};
use copyhound_core::{Error, Result};

use redb::ReadableTable;

use super::{API_KEYS, LocalStore, PUBLISHERS, db_error, get_doc, load_all, put_doc, scan_keys};
use crate::codec;

#[async_trait]
impl PublisherStore for LocalStore {
    async fn check_connectivity(&self) -> Result<()> {
        if let copyhound_redb::DbHealth::Degraded(reason) = self.health() {
            return Err(Error::unavailable(reason));
        }
        self.read(|txn| {
            txn.open_table(PUBLISHERS).map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn put_publisher(&self, publisher: &Publisher) -> Result<()> {
        let publisher = publisher.clone();
        self.write(move |txn| {
            let mut table = txn.open_table(PUBLISHERS).map_err(db_error)?;
            put_doc(&mut table, publisher.id.as_str(), &publisher)
        })
        .await
    }

    async fn get_publisher(&self, id: &PublisherId) -> Result<Publisher> {
        let id = id.clone();
        self.point(move |txn| {
            let table = txn.open_table(PUBLISHERS).map_err(db_error)?;
            get_doc(&table, id.as_str())?.ok_or_else(|| Error::not_found(format!("publisher {id}")))
        })
        .await
    }

    async fn list_publishers(&self, page: &PageRequest) -> Result<Paged<Publisher>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let items = self
            .read(move |txn| {
                let table = txn.open_table(PUBLISHERS).map_err(db_error)?;
                let keys = scan_keys(&table, after.as_deref(), limit + 1)?;
                load_all::<Publisher>(&table, &keys)
            })
            .await?;
        Ok(codec::paged(items, limit, |publisher| {
            publisher.id.to_string()
        }))
    }

    async fn put_api_key(&self, key: &ApiKey) -> Result<()> {
        let key = key.clone();
        self.write(move |txn| {
            let mut table = txn.open_table(API_KEYS).map_err(db_error)?;
            put_doc(&mut table, key.id.as_str(), &key)
        })
        .await
    }

    async fn get_api_key(&self, id: &ApiKeyId) -> Result<ApiKey> {
        let id = id.clone();
        self.point(move |txn| {
            let table = txn.open_table(API_KEYS).map_err(db_error)?;
            get_doc(&table, id.as_str())?.ok_or_else(|| Error::not_found(format!("api key {id}")))
        })
        .await
    }

    async fn list_api_keys(&self, publisher_id: &PublisherId) -> Result<Vec<ApiKey>> {
        let publisher_id = publisher_id.clone();
        let mut keys = self
            .read(move |txn| {
                // Keys are few per installation: one pass over the table.
                let table = txn.open_table(API_KEYS).map_err(db_error)?;
                let mut keys = Vec::new();
                for entry in table.iter().map_err(db_error)? {
                    let (id, _) = entry.map_err(db_error)?;
                    let key: Option<ApiKey> = get_doc(&table, id.value())?;
                    if let Some(key) = key.filter(|key| key.publisher_id == publisher_id) {
                        keys.push(key);
                    }
                }
                Ok(keys)
            })
            .await?;
        keys.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        keys.truncate(copyhound_core::ports::MAX_LISTED_KEYS);
        Ok(keys)
    }
}
