use async_trait::async_trait;
use copyhound_core::ids::{ApiKeyId, PublisherId};
use copyhound_core::model::{ApiKey, Publisher};
use copyhound_core::ports::{PageRequest, Paged, PublisherStore};
use copyhound_core::{Error, Result};
use mongodb::bson::doc;

use super::codec::to_document;
use super::{MongoStore, after_id, mongo_error};
use crate::codec;
use crate::collections::{API_KEYS, PUBLISHERS};

#[async_trait]
impl PublisherStore for MongoStore {
    async fn check_connectivity(&self) -> Result<()> {
        self.database
            .run_command(doc! { "ping": 1 })
            .await
            .map_err(mongo_error)?;
        Ok(())
    }

    async fn put_publisher(&self, publisher: &Publisher) -> Result<()> {
        let id = publisher.id.as_str();
        self.replace_by_id(PUBLISHERS, id, to_document(publisher, id)?)
            .await
    }

    async fn get_publisher(&self, id: &PublisherId) -> Result<Publisher> {
        self.find_decoded(PUBLISHERS, doc! { "_id": id.as_str() })
            .await?
            .ok_or_else(|| Error::not_found(format!("publisher {id}")))
    }

    async fn list_publishers(&self, page: &PageRequest) -> Result<Paged<Publisher>> {
        let limit = codec::page_limit(page);
        let filter = after_id(doc! {}, codec::cursor_key(page)?);
        let items = self
            .find_decoded_many(PUBLISHERS, filter, doc! { "_id": 1 }, Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, |publisher: &Publisher| {
            publisher.id.to_string()
        }))
    }

    async fn put_api_key(&self, key: &ApiKey) -> Result<()> {
        let id = key.id.as_str();
        self.replace_by_id(API_KEYS, id, to_document(key, id)?)
            .await
    }

    async fn get_api_key(&self, id: &ApiKeyId) -> Result<ApiKey> {
        self.find_decoded(API_KEYS, doc! { "_id": id.as_str() })
            .await?
            .ok_or_else(|| Error::not_found(format!("api key {id}")))
    }

    async fn list_api_keys(&self, publisher_id: &PublisherId) -> Result<Vec<ApiKey>> {
        self.find_decoded_many(
            API_KEYS,
            doc! { "publisher_id": publisher_id.as_str() },
            doc! { "created_at": 1, "_id": 1 },
            Some(copyhound_core::ports::MAX_LISTED_KEYS),
        )
        .await
    }
}
