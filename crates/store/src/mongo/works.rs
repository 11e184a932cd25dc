use async_trait::async_trait;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{Chapter, FingerprintStatus, Work};
use copyhound_core::ports::{PageRequest, Paged, WorkStore};
use copyhound_core::{Error, ErrorKind, Result};
use mongodb::bson::{Document, doc};

use super::codec::{object_to_document, to_document};
use super::error::is_duplicate_key;
use super::{MongoStore, after_id, mongo_error};
use crate::codec;
use crate::collections::{CHAPTERS, WORKS};

fn chapter_key(work_id: &WorkId, chapter_id: &ChapterId) -> String {
    format!("{work_id}/{chapter_id}")
}

impl MongoStore {
    /// Inserts or replaces documents by `_id` in bulk: one unordered insert, then
    /// a replace for each document whose `_id` existed.
    pub(crate) async fn bulk_upsert(
        &self,
        collection: &str,
        documents: Vec<(String, Document)>,
    ) -> Result<()> {
        if documents.is_empty() {
            return Ok(());
        }
        let result = self
            .collection(collection)
            .insert_many(documents.iter().map(|(_, document)| document))
            .ordered(false)
            .await;
        let Err(error) = result else { return Ok(()) };
        let mongodb::error::ErrorKind::InsertMany(failure) = error.kind.as_ref() else {
            return Err(mongo_error(error));
        };
        if failure.write_concern_error.is_some() {
            return Err(mongo_error(error));
        }
        for failed in failure.write_errors.iter().flatten() {
            if failed.code != super::error::DUPLICATE_KEY {
                return Err(mongo_error(error));
            }
            let (id, document) = documents
                .get(failed.index)
                .ok_or_else(|| Error::internal("bulk insert reported an unknown index"))?;
            self.replace_by_id(collection, id, document.clone()).await?;
        }
        Ok(())
    }
}

#[async_trait]
impl WorkStore for MongoStore {
    async fn put_work(&self, work: &Work) -> Result<()> {
        let id = work.id.as_str();
        let result = self
            .collection(WORKS)
            .replace_one(
                doc! { "_id": id, "publisher_id": work.publisher_id.as_str() },
                to_document(work, id)?,
            )
            .upsert(true)
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(error) if is_duplicate_key(&error) => Err(Error::new(
                ErrorKind::Conflict,
                format!("work id {id} is taken"),
            )),
            Err(error) => Err(mongo_error(error)),
        }
    }

    async fn get_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<Work> {
        self.find_decoded(
            WORKS,
            doc! { "_id": id.as_str(), "publisher_id": publisher_id.as_str() },
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("work {id}")))
    }

    async fn get_work_any(&self, id: &WorkId) -> Result<Work> {
        self.find_decoded(WORKS, doc! { "_id": id.as_str() })
            .await?
            .ok_or_else(|| Error::not_found(format!("work {id}")))
    }

    async fn list_works(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Work>> {
        let limit = codec::page_limit(page);
        let filter = after_id(
            doc! { "publisher_id": publisher_id.as_str() },
            codec::cursor_key(page)?,
        );
        let items = self
            .find_decoded_many(WORKS, filter, doc! { "_id": 1 }, Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, |work: &Work| {
            work.id.to_string()
        }))
    }

    async fn delete_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<()> {
        let deleted = self
            .collection(WORKS)
            .delete_one(doc! { "_id": id.as_str(), "publisher_id": publisher_id.as_str() })
            .await
            .map_err(mongo_error)?;
        if deleted.deleted_count == 0 {
            return Err(Error::not_found(format!("work {id}")));
        }
        self.collection(CHAPTERS)
            .delete_many(doc! { "work_id": id.as_str() })
            .await
            .map_err(mongo_error)?;
        Ok(())
    }

    async fn put_chapters(&self, chapters: &[Chapter]) -> Result<()> {
        let documents = chapters
            .iter()
            .map(|chapter| {
                let key = chapter_key(&chapter.work_id, &chapter.id);
                to_document(chapter, &key).map(|document| (key, document))
            })
            .collect::<Result<Vec<_>>>()?;
        self.bulk_upsert(CHAPTERS, documents).await
    }

    async fn replace_work(&self, work: &Work, chapters: &[Chapter]) -> Result<()> {
        if let Some(stray) = chapters.iter().find(|chapter| chapter.work_id != work.id) {
            return Err(Error::invalid(format!(
                "chapter {} belongs to work {}, not {}",
                stray.id, stray.work_id, work.id
            )));
        }
        if let Some(stored) = self
            .find_decoded::<Work>(WORKS, doc! { "_id": work.id.as_str() })
            .await?
            && stored.publisher_id != work.publisher_id
        {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("work id {} is taken", work.id),
            ));
        }
        // No step deletes the record, so the work never answers 404; the
        // chapters left out go last, once the new ones and the record are in.
        self.put_chapters(chapters).await?;
        self.put_work(work).await?;
        let kept: Vec<String> = chapters
            .iter()
            .map(|chapter| chapter_key(&chapter.work_id, &chapter.id))
            .collect();
        self.collection(CHAPTERS)
            .delete_many(doc! { "work_id": work.id.as_str(), "_id": { "$nin": kept } })
            .await
            .map_err(mongo_error)?;
        Ok(())
    }

    async fn get_chapter(&self, work_id: &WorkId, id: &ChapterId) -> Result<Chapter> {
        self.find_decoded(CHAPTERS, doc! { "_id": chapter_key(work_id, id) })
            .await?
            .ok_or_else(|| Error::not_found(format!("chapter {work_id}/{id}")))
    }

    async fn list_chapters(&self, work_id: &WorkId) -> Result<Vec<Chapter>> {
        self.find_decoded_many(
            CHAPTERS,
            doc! { "work_id": work_id.as_str() },
            doc! { "index": 1, "id": 1 },
            None,
        )
        .await
    }

    async fn set_fingerprint_status(
        &self,
        work_id: &WorkId,
        id: &ChapterId,
        status: &FingerprintStatus,
    ) -> Result<()> {
        let value = serde_json::to_value(status).map_err(|error| {
            Error::with_source(ErrorKind::Internal, "failed to encode a status", error)
        })?;
        let mut object = serde_json::Map::new();
        object.insert("fingerprint_status".into(), value);
        let updated = self
            .collection(CHAPTERS)
            .update_one(
                doc! { "_id": chapter_key(work_id, id) },
                doc! { "$set": object_to_document(object)? },
            )
            .await
            .map_err(mongo_error)?;
        if updated.matched_count == 0 {
            return Err(Error::not_found(format!("chapter {work_id}/{id}")));
        }
        Ok(())
    }
}
