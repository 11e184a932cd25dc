use std::sync::Arc;

use async_trait::async_trait;
use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::model::{Chapter, FingerprintStatus, Work};
use copyhound_core::ports::{PageRequest, Paged, WorkStore};
use copyhound_core::{Error, ErrorKind, Result};

use super::{
    CHAPTERS, LocalStore, WORKS, WORKS_BY_PUBLISHER, db_error, get_doc, load_all, put_doc,
    scan_scope, scoped,
};
use crate::codec;

fn chapter_key(work_id: &WorkId, chapter_id: &ChapterId) -> String {
    scoped(work_id.as_str(), chapter_id.as_str())
}

fn work_not_found(id: &WorkId) -> Error {
    Error::not_found(format!("work {id}"))
}

impl LocalStore {
    /// Runs a write of chapters, then evicts them from the decoded chapters
    /// (`None`: all). In a task of its own: a write commits even when its
    /// caller stops waiting, and so its eviction must happen.
    async fn write_chapters<F>(&self, evict: Option<Vec<String>>, work: F) -> Result<()>
    where
        F: Fn(&redb::WriteTransaction) -> Result<()> + Send + 'static,
    {
        let store = self.clone();
        tokio::spawn(async move {
            let written = store.write(work).await;
            match &evict {
                Some(keys) => store.chapters.written(keys.iter().map(String::as_str)),
                None => store.chapters.written_all(),
            }
            written
        })
        .await
        .map_err(|error| Error::with_source(ErrorKind::Internal, "a chapter write failed", error))?
    }
}

#[async_trait]
impl WorkStore for LocalStore {
    async fn put_work(&self, work: &Work) -> Result<()> {
        let work = work.clone();
        self.write(move |txn| {
            let mut works = txn.open_table(WORKS).map_err(db_error)?;
            let existing = get_doc::<Work>(&works, work.id.as_str())?;
            if existing.is_some_and(|existing| existing.publisher_id != work.publisher_id) {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("work id {} is taken", work.id),
                ));
            }
            put_doc(&mut works, work.id.as_str(), &work)?;
            let mut index = txn.open_table(WORKS_BY_PUBLISHER).map_err(db_error)?;
            index
                .insert(
                    scoped(work.publisher_id.as_str(), work.id.as_str()).as_str(),
                    (),
                )
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<Work> {
        let work = self.get_work_any(id).await?;
        if &work.publisher_id != publisher_id {
            return Err(work_not_found(id));
        }
        Ok(work)
    }

    async fn get_work_any(&self, id: &WorkId) -> Result<Work> {
        let id = id.clone();
        self.point(move |txn| {
            let works = txn.open_table(WORKS).map_err(db_error)?;
            get_doc(&works, id.as_str())?.ok_or_else(|| work_not_found(&id))
        })
        .await
    }

    async fn list_works(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Work>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let publisher_id = publisher_id.clone();
        let items = self
            .read(move |txn| {
                let index = txn.open_table(WORKS_BY_PUBLISHER).map_err(db_error)?;
                let keys = scan_scope(
                    &index,
                    publisher_id.as_str(),
                    after.as_deref(),
                    limit + 1,
                    false,
                )?;
                load_all::<Work>(&txn.open_table(WORKS).map_err(db_error)?, &keys)
            })
            .await?;
        Ok(codec::paged(items, limit, |work| work.id.to_string()))
    }

    async fn delete_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<()> {
        let (publisher_id, id) = (publisher_id.clone(), id.clone());
        self.write_chapters(None, move |txn| {
            let mut works = txn.open_table(WORKS).map_err(db_error)?;
            match get_doc::<Work>(&works, id.as_str())? {
                Some(work) if work.publisher_id == publisher_id => {}
                _ => return Err(work_not_found(&id)),
            }
            works.remove(id.as_str()).map_err(db_error)?;
            let mut index = txn.open_table(WORKS_BY_PUBLISHER).map_err(db_error)?;
            index
                .remove(scoped(publisher_id.as_str(), id.as_str()).as_str())
                .map_err(db_error)?;
            let mut chapters = txn.open_table(CHAPTERS).map_err(db_error)?;
            let prefix = format!("{id}\0");
            chapters
                .retain_in::<&str, _>(prefix.as_str()..format!("{id}\u{1}").as_str(), |_, _| false)
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn put_chapters(&self, chapters: &[Chapter]) -> Result<()> {
        let chapters = chapters.to_vec();
        let keys: Vec<String> = chapters
            .iter()
            .map(|chapter| chapter_key(&chapter.work_id, &chapter.id))
            .collect();
        let keys_written = keys.clone();
        self.write_chapters(Some(keys), move |txn| {
            let mut table = txn.open_table(CHAPTERS).map_err(db_error)?;
            for (key, chapter) in keys_written.iter().zip(&chapters) {
                put_doc(&mut table, key, chapter)?;
            }
            Ok(())
        })
        .await
    }

    async fn replace_work(&self, work: &Work, chapters: &[Chapter]) -> Result<()> {
        if let Some(stray) = chapters.iter().find(|chapter| chapter.work_id != work.id) {
            return Err(Error::invalid(format!(
                "chapter {} belongs to work {}, not {}",
                stray.id, stray.work_id, work.id
            )));
        }
        let work = work.clone();
        let chapters = chapters.to_vec();
        // Every chapter of the work changes: evict them all.
        self.write_chapters(None, move |txn| {
            let mut works = txn.open_table(WORKS).map_err(db_error)?;
            match get_doc::<Work>(&works, work.id.as_str())? {
                Some(stored) if stored.publisher_id != work.publisher_id => {
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        format!("work id {} is taken", work.id),
                    ));
                }
                _ => {}
            }
            put_doc(&mut works, work.id.as_str(), &work)?;
            let mut index = txn.open_table(WORKS_BY_PUBLISHER).map_err(db_error)?;
            index
                .insert(
                    scoped(work.publisher_id.as_str(), work.id.as_str()).as_str(),
                    (),
                )
                .map_err(db_error)?;
            let mut table = txn.open_table(CHAPTERS).map_err(db_error)?;
            let prefix = format!("{}\0", work.id);
            let end = format!("{}\u{1}", work.id);
            table
                .retain_in::<&str, _>(prefix.as_str()..end.as_str(), |_, _| false)
                .map_err(db_error)?;
            for chapter in &chapters {
                put_doc(
                    &mut table,
                    &chapter_key(&chapter.work_id, &chapter.id),
                    chapter,
                )?;
            }
            Ok(())
        })
        .await
    }

    async fn get_chapter(&self, work_id: &WorkId, id: &ChapterId) -> Result<Chapter> {
        let key = chapter_key(work_id, id);
        if let Some(chapter) = self.chapters.get(&key) {
            return Ok(Chapter::clone(&chapter));
        }
        let generation = self.chapters.generation();
        let chapter: Chapter = self
            .point(|txn| {
                let table = txn.open_table(CHAPTERS).map_err(db_error)?;
                get_doc(&table, &key)?
                    .ok_or_else(|| Error::not_found(format!("chapter {work_id}/{id}")))
            })
            .await?;
        self.chapters
            .keep(key, Arc::new(chapter.clone()), generation);
        Ok(chapter)
    }

    async fn list_chapters(&self, work_id: &WorkId) -> Result<Vec<Chapter>> {
        let work_id = work_id.clone();
        let mut chapters = self
            .read(move |txn| {
                let table = txn.open_table(CHAPTERS).map_err(db_error)?;
                let ids = scan_scope(&table, work_id.as_str(), None, usize::MAX, false)?;
                let keys: Vec<String> = ids.iter().map(|id| scoped(work_id.as_str(), id)).collect();
                load_all::<Chapter>(&table, &keys)
            })
            .await?;
        chapters.sort_by(|a, b| (a.index, &a.id).cmp(&(b.index, &b.id)));
        Ok(chapters)
    }

    async fn set_fingerprint_status(
        &self,
        work_id: &WorkId,
        id: &ChapterId,
        status: &FingerprintStatus,
    ) -> Result<()> {
        let key = chapter_key(work_id, id);
        let status = status.clone();
        self.write_chapters(Some(vec![key.clone()]), move |txn| {
            let mut table = txn.open_table(CHAPTERS).map_err(db_error)?;
            let mut chapter: Chapter = get_doc(&table, &key)?
                .ok_or_else(|| Error::not_found(format!("chapter {}", key.replace('\0', "/"))))?;
            chapter.fingerprint_status = status.clone();
            put_doc(&mut table, &key, &chapter)
        })
        .await
    }
}
