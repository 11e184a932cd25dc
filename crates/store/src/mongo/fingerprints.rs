use async_trait::async_trait;
use copyhound_core::model::{FingerprintOwner, FingerprintRecord};
use copyhound_core::ports::{FingerprintStore, PageRequest, Paged};
use copyhound_core::{Error, Result};
use mongodb::bson::{Document, doc};

use super::codec::to_document;
use super::{MongoStore, mongo_error};
use crate::codec;
use crate::collections::FINGERPRINTS;

const OWNER_KEY: &str = "_owner_key";

fn record_id(owner_key: &str, version: u32) -> String {
    format!("{owner_key}@{version}")
}

fn record_document(record: &FingerprintRecord) -> Result<(String, Document)> {
    let owner_key = record.owner.index_key();
    let id = record_id(&owner_key, record.version);
    let mut document = to_document(record, &id)?;
    document.insert(OWNER_KEY, owner_key);
    Ok((id, document))
}

#[async_trait]
impl FingerprintStore for MongoStore {
    async fn put_fingerprint(&self, record: &FingerprintRecord) -> Result<()> {
        let (id, document) = record_document(record)?;
        self.replace_by_id(FINGERPRINTS, &id, document).await
    }

    async fn put_fingerprints(&self, records: &[FingerprintRecord]) -> Result<()> {
        let documents = records
            .iter()
            .map(record_document)
            .collect::<Result<Vec<_>>>()?;
        self.bulk_upsert(FINGERPRINTS, documents).await
    }

    async fn get_fingerprint(
        &self,
        owner: &FingerprintOwner,
        version: u32,
    ) -> Result<FingerprintRecord> {
        let owner_key = owner.index_key();
        self.find_decoded(FINGERPRINTS, doc! { "_id": record_id(&owner_key, version) })
            .await?
            .ok_or_else(|| {
                Error::not_found(format!("fingerprint of {owner_key} at version {version}"))
            })
    }

    async fn delete_fingerprints(&self, owner: &FingerprintOwner) -> Result<()> {
        self.collection(FINGERPRINTS)
            .delete_many(doc! { OWNER_KEY: owner.index_key() })
            .await
            .map_err(mongo_error)?;
        Ok(())
    }

    async fn list_fingerprints(
        &self,
        version: u32,
        page: &PageRequest,
    ) -> Result<Paged<FingerprintRecord>> {
        let limit = codec::page_limit(page);
        let mut filter = doc! { "version": i64::from(version) };
        if let Some(after) = codec::cursor_key(page)? {
            filter.insert(OWNER_KEY, doc! { "$gt": after });
        }
        let items = self
            .find_decoded_many(FINGERPRINTS, filter, doc! { OWNER_KEY: 1 }, Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, |record: &FingerprintRecord| {
            record.owner.index_key()
        }))
    }
}
