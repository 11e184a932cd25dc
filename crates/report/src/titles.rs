//! The titles of the works and chapters a list of matches names: what alert
//! e-mails and the console show instead of ids. One work lookup per distinct
//! work, and its chapters either one by one (a few) or in one listing (many),
//! never one lookup per match. A work or chapter deleted since is left out,
//! and readers fall back to its id.

use std::collections::{BTreeMap, BTreeSet};

use copyhound_core::ids::{ChapterId, PublisherId, WorkId};
use copyhound_core::ports::WorkStore;
use copyhound_core::{ErrorKind, Result};

/// Distinct chapters of one work looked up one by one; past this, the work's
/// chapters are listed once instead.
pub const CHAPTER_LOOKUPS_PER_WORK: usize = 16;

/// Titles of works and chapters, by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Titles {
    /// Titles of the works found.
    pub works: BTreeMap<WorkId, String>,
    /// Titles of the chapters found, keyed by work and chapter.
    pub chapters: BTreeMap<(WorkId, ChapterId), String>,
}

impl Titles {
    /// Returns the titles of the `wanted` (work, chapter) pairs of
    /// `publisher_id`'s works. Pairs repeat freely: each work is read once.
    pub async fn load<'a>(
        works: &dyn WorkStore,
        publisher_id: &PublisherId,
        wanted: impl IntoIterator<Item = (&'a WorkId, &'a ChapterId)>,
    ) -> Result<Self> {
        let mut by_work: BTreeMap<&WorkId, BTreeSet<&ChapterId>> = BTreeMap::new();
        for (work_id, chapter_id) in wanted {
            by_work.entry(work_id).or_default().insert(chapter_id);
        }
        let mut titles = Self::default();
        for (work_id, chapter_ids) in by_work {
            let work = match works.get_work(publisher_id, work_id).await {
                Ok(work) => work,
                // Deleted with its chapters: both show their ids.
                Err(error) if error.kind() == ErrorKind::NotFound => continue,
                Err(error) => return Err(error),
            };
            titles.works.insert(work.id, work.title);
            if chapter_ids.len() > CHAPTER_LOOKUPS_PER_WORK {
                for chapter in works.list_chapters(work_id).await? {
                    if chapter_ids.contains(&chapter.id) {
                        titles
                            .chapters
                            .insert((chapter.work_id, chapter.id), chapter.title);
                    }
                }
                continue;
            }
            for chapter_id in chapter_ids {
                match works.get_chapter(work_id, chapter_id).await {
                    Ok(chapter) => {
                        titles
                            .chapters
                            .insert((chapter.work_id, chapter.id), chapter.title);
                    }
                    Err(error) if error.kind() == ErrorKind::NotFound => {}
                    Err(error) => return Err(error),
                }
            }
        }
        Ok(titles)
    }

    /// The title of a work, if it was found.
    pub fn work(&self, work_id: &WorkId) -> Option<&str> {
        self.works.get(work_id).map(String::as_str)
    }

    /// The title of a chapter, if it was found.
    pub fn chapter(&self, work_id: &WorkId, chapter_id: &ChapterId) -> Option<&str> {
        self.chapters
            .get(&(work_id.clone(), chapter_id.clone()))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use async_trait::async_trait;
    use copyhound_core::model::{Chapter, FingerprintStatus, Work};
    use copyhound_core::ports::{PageRequest, Paged};

    use super::*;

    /// Counts the lookups made through a real store.
    #[derive(Debug)]
    struct Counting {
        inner: Arc<dyn WorkStore>,
        works: AtomicUsize,
        chapters: AtomicUsize,
        listings: AtomicUsize,
    }

    #[async_trait]
    impl WorkStore for Counting {
        async fn put_work(&self, work: &Work) -> Result<()> {
            self.inner.put_work(work).await
        }
        async fn get_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<Work> {
            self.works.fetch_add(1, Ordering::SeqCst);
            self.inner.get_work(publisher_id, id).await
        }
        async fn get_work_any(&self, id: &WorkId) -> Result<Work> {
            self.inner.get_work_any(id).await
        }
        async fn list_works(
            &self,
            publisher_id: &PublisherId,
            page: &PageRequest,
        ) -> Result<Paged<Work>> {
            self.inner.list_works(publisher_id, page).await
        }
        async fn delete_work(&self, publisher_id: &PublisherId, id: &WorkId) -> Result<()> {
            self.inner.delete_work(publisher_id, id).await
        }
        async fn put_chapters(&self, chapters: &[Chapter]) -> Result<()> {
            self.inner.put_chapters(chapters).await
        }
        async fn replace_work(&self, work: &Work, chapters: &[Chapter]) -> Result<()> {
            self.inner.replace_work(work, chapters).await
        }
        async fn get_chapter(&self, work_id: &WorkId, id: &ChapterId) -> Result<Chapter> {
            self.chapters.fetch_add(1, Ordering::SeqCst);
            self.inner.get_chapter(work_id, id).await
        }
        async fn list_chapters(&self, work_id: &WorkId) -> Result<Vec<Chapter>> {
            self.listings.fetch_add(1, Ordering::SeqCst);
            self.inner.list_chapters(work_id).await
        }
        async fn set_fingerprint_status(
            &self,
            work_id: &WorkId,
            id: &ChapterId,
            status: &FingerprintStatus,
        ) -> Result<()> {
            self.inner.set_fingerprint_status(work_id, id, status).await
        }
    }

    #[tokio::test]
    async fn each_work_is_read_once_and_a_deleted_one_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
        let input = crate::testsuite::sample_input();
        for work in &input.works {
            stores.works.put_work(work).await.unwrap();
        }
        let chapters: Vec<Chapter> = input
            .chapters
            .iter()
            .map(|info| {
                Chapter::new(
                    info.work_id.clone(),
                    info.chapter_id.clone(),
                    info.index,
                    info.title.clone(),
                    "正文".into(),
                )
            })
            .collect();
        stores.works.put_chapters(&chapters).await.unwrap();
        let counting = Counting {
            inner: stores.works.clone(),
            works: AtomicUsize::new(0),
            chapters: AtomicUsize::new(0),
            listings: AtomicUsize::new(0),
        };
        let deleted: WorkId = "w_deleted".parse().unwrap();
        let gone: ChapterId = "c_0001".parse().unwrap();
        // Every match twice, and one of a deleted work.
        let mut wanted: Vec<(&WorkId, &ChapterId)> = input
            .matches
            .iter()
            .chain(&input.matches)
            .map(|found| (&found.work_id, &found.chapter_id))
            .collect();
        wanted.push((&deleted, &gone));
        let publisher_id = &input.scope.publisher_id;
        let titles = Titles::load(&counting, publisher_id, wanted).await.unwrap();

        let distinct_works: BTreeSet<&WorkId> = input.matches.iter().map(|m| &m.work_id).collect();
        let distinct_chapters: BTreeSet<(&WorkId, &ChapterId)> = input
            .matches
            .iter()
            .map(|m| (&m.work_id, &m.chapter_id))
            .collect();
        assert_eq!(
            counting.works.load(Ordering::SeqCst),
            distinct_works.len() + 1
        );
        assert_eq!(
            counting.chapters.load(Ordering::SeqCst),
            distinct_chapters.len()
        );
        for found in &input.matches {
            let work = input.works.iter().find(|w| w.id == found.work_id).unwrap();
            assert_eq!(titles.work(&found.work_id), Some(work.title.as_str()));
            assert!(titles.chapter(&found.work_id, &found.chapter_id).is_some());
        }
        assert_eq!(titles.work(&deleted), None);
        assert_eq!(titles.chapter(&deleted, &gone), None);
    }

    #[tokio::test]
    async fn many_chapters_of_one_work_are_listed_once() {
        let dir = tempfile::tempdir().unwrap();
        let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
        let input = crate::testsuite::sample_input();
        let work = input.works[0].clone();
        stores.works.put_work(&work).await.unwrap();
        let count = CHAPTER_LOOKUPS_PER_WORK as u32 + 4;
        let chapters: Vec<Chapter> = (1..=count)
            .map(|index| {
                Chapter::new(
                    work.id.clone(),
                    format!("c_{index:04}").parse().unwrap(),
                    index,
                    format!("第{index}章"),
                    "正文".into(),
                )
            })
            .collect();
        stores.works.put_chapters(&chapters).await.unwrap();
        let counting = Counting {
            inner: stores.works.clone(),
            works: AtomicUsize::new(0),
            chapters: AtomicUsize::new(0),
            listings: AtomicUsize::new(0),
        };
        let titles = Titles::load(
            &counting,
            &work.publisher_id,
            chapters
                .iter()
                .map(|chapter| (&chapter.work_id, &chapter.id)),
        )
        .await
        .unwrap();
        assert_eq!(counting.listings.load(Ordering::SeqCst), 1);
        assert_eq!(counting.chapters.load(Ordering::SeqCst), 0);
        assert_eq!(titles.chapters.len(), chapters.len());
        assert_eq!(titles.chapter(&work.id, &chapters[19].id), Some("第20章"));
    }
}
