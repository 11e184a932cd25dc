use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use copyhound_core::ids::{PageId, SiteId};
use copyhound_core::model::Page;
use copyhound_core::ports::{PageRequest, PageStore, PageUpsert, Paged};
use copyhound_core::{Error, ErrorKind, Result};
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{Binary, Bson, Document, doc};

use super::codec::{document_to_object, object_to_document};
use super::error::is_duplicate_key;
use super::{MongoStore, after_id, mongo_error};
use crate::codec::{self, PageState};
use crate::collections::PAGES;

const BODY: &str = "_body_lz4";
const REVISION: &str = "_rev";
const LAST_SEEN_NS: &str = "_last_seen_ns";
/// Attempts of the read-decide-write loop before reporting a conflict.
const MAX_ATTEMPTS: usize = 8;

/// Returns the full stored document of a page state at `revision`.
fn page_document(state: &mut PageState, revision: i64) -> Result<Document> {
    let mut document = object_to_document(codec::page_meta_object(state)?)?;
    document.insert("_id", state.page.id.as_str());
    document.insert(REVISION, revision);
    document.insert(LAST_SEEN_NS, codec::timestamp_ns(&state.page.last_seen));
    let body = codec::compress(&state.page.raw_body);
    document.insert(
        BODY,
        Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes: body,
        }),
    );
    Ok(document)
}

/// Returns `(revision, state)` of a stored document; the body is empty when the
/// document was read without it.
fn page_state(mut document: Document) -> Result<(i64, PageState)> {
    let body = match document.remove(BODY) {
        Some(Bson::Binary(binary)) => codec::decompress(&binary.bytes)?,
        Some(_) => {
            return Err(Error::new(
                ErrorKind::Corrupt,
                "stored page body is not binary",
            ));
        }
        None => Vec::new(),
    };
    let revision = document.get_i64(REVISION).unwrap_or(0);
    let state = codec::page_state_from(document_to_object(document)?, body)?;
    Ok((revision, state))
}

impl MongoStore {
    async fn stored_page_states(&self, ids: &[&str]) -> Result<HashMap<String, (i64, PageState)>> {
        let mut cursor = self
            .collection(PAGES)
            .find(doc! { "_id": { "$in": ids } })
            .projection(doc! { BODY: 0 })
            .await
            .map_err(mongo_error)?;
        let mut states = HashMap::new();
        while cursor.advance().await.map_err(mongo_error)? {
            let document = cursor.deserialize_current().map_err(mongo_error)?;
            let (revision, state) = page_state(document)?;
            states.insert(state.page.id.to_string(), (revision, state));
        }
        Ok(states)
    }

    /// The read-decide-write loop of one page; writes are conditional on the
    /// revision read, so concurrent fetches of one URL never lose a version.
    async fn upsert_one(&self, incoming: &Page) -> Result<PageUpsert> {
        let pages = self.collection(PAGES);
        let id = incoming.id.as_str();
        for _ in 0..MAX_ATTEMPTS {
            let mut stored = self.stored_page_states(&[id]).await?;
            let existing = stored.remove(id);
            let revision = existing.as_ref().map_or(0, |(revision, _)| *revision);
            let stored_body = existing
                .as_ref()
                .map(|(_, state)| state.page.body_sha256.clone());
            let (outcome, mut state) =
                codec::merge_page(existing.map(|(_, state)| state), incoming.clone());
            let body_changed = stored_body.as_ref() != Some(&state.page.body_sha256);
            let document = page_document(&mut state, revision + 1)?;
            let matched = match outcome {
                PageUpsert::New => match pages.insert_one(&document).await {
                    Ok(_) => true,
                    Err(error) if is_duplicate_key(&error) => {
                        if self.find_by_id(PAGES, id).await?.is_none() {
                            return Err(Error::new(
                                ErrorKind::Conflict,
                                format!("url {} is stored under another page id", incoming.url),
                            ));
                        }
                        false
                    }
                    Err(error) => return Err(mongo_error(error)),
                },
                PageUpsert::Unchanged => {
                    let mut fields = vec!["last_seen", "fetch", LAST_SEEN_NS, REVISION];
                    if body_changed {
                        fields.extend(["body_sha256", "body_truncated", BODY]);
                    }
                    let set: Document = fields
                        .iter()
                        .filter_map(|field| {
                            document.get(*field).map(|v| (field.to_string(), v.clone()))
                        })
                        .collect();
                    let result = pages
                        .update_one(doc! { "_id": id, REVISION: revision }, doc! { "$set": set })
                        .await
                        .map_err(mongo_error)?;
                    result.matched_count == 1
                }
                PageUpsert::Changed => {
                    let result = pages
                        .replace_one(doc! { "_id": id, REVISION: revision }, document)
                        .await
                        .map_err(mongo_error)?;
                    result.matched_count == 1
                }
            };
            if matched {
                return Ok(outcome);
            }
        }
        Err(Error::new(
            ErrorKind::Conflict,
            format!("page {id} keeps changing concurrently"),
        ))
    }
}

#[async_trait]
impl PageStore for MongoStore {
    async fn upsert_page(&self, page: &Page) -> Result<PageUpsert> {
        self.upsert_one(&codec::cap_page(page, self.limits())).await
    }

    /// New pages go in one unordered bulk insert; known ones (and the losers of
    /// insert races) take the one-page path.
    async fn upsert_pages(&self, pages: &[Page]) -> Result<Vec<PageUpsert>> {
        let capped: Vec<Page> = pages
            .iter()
            .map(|page| codec::cap_page(page, self.limits()))
            .collect();
        let ids: Vec<&str> = capped.iter().map(|page| page.id.as_str()).collect();
        let known = self.stored_page_states(&ids).await?;
        let mut seen = HashSet::new();
        let mut fresh = Vec::new();
        for (position, page) in capped.iter().enumerate() {
            if !known.contains_key(page.id.as_str()) && seen.insert(page.id.as_str()) {
                let (_, mut state) = codec::merge_page(None, page.clone());
                fresh.push((position, page_document(&mut state, 1)?));
            }
        }
        let mut outcomes: Vec<Option<PageUpsert>> = vec![None; capped.len()];
        let mut retry: HashSet<usize> = HashSet::new();
        if !fresh.is_empty() {
            let inserted = self
                .collection(PAGES)
                .insert_many(fresh.iter().map(|(_, document)| document))
                .ordered(false)
                .await;
            if let Err(error) = inserted {
                let mongodb::error::ErrorKind::InsertMany(failure) = error.kind.as_ref() else {
                    return Err(mongo_error(error));
                };
                for failed in failure.write_errors.iter().flatten() {
                    if failed.code != super::error::DUPLICATE_KEY {
                        return Err(mongo_error(error));
                    }
                    retry.extend(fresh.get(failed.index).map(|(position, _)| *position));
                }
            }
            for (position, _) in &fresh {
                if !retry.contains(position) {
                    outcomes[*position] = Some(PageUpsert::New);
                }
            }
        }
        for (position, page) in capped.iter().enumerate() {
            if outcomes[position].is_none() {
                outcomes[position] = Some(self.upsert_one(page).await?);
            }
        }
        Ok(outcomes.into_iter().flatten().collect())
    }

    async fn get_page(&self, id: &PageId) -> Result<Page> {
        let document = self
            .find_by_id(PAGES, id.as_str())
            .await?
            .ok_or_else(|| Error::not_found(format!("page {id}")))?;
        Ok(page_state(document)?.1.page)
    }

    async fn list_pages(&self, site_id: &SiteId, page: &PageRequest) -> Result<Paged<Page>> {
        let limit = codec::page_limit(page);
        let filter = after_id(
            doc! { "site_id": site_id.as_str() },
            codec::cursor_key(page)?,
        );
        let documents = self
            .find_many(PAGES, filter, doc! { "_id": 1 }, Some(limit + 1))
            .await?;
        let items = documents
            .into_iter()
            .map(|document| page_state(document).map(|(_, state)| state.page))
            .collect::<Result<Vec<_>>>()?;
        Ok(codec::paged(items, limit, |page: &Page| {
            page.id.to_string()
        }))
    }
}
