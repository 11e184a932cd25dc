use async_trait::async_trait;
use copyhound_core::ids::{MatchId, PageId, PublisherId, WorkId};
use copyhound_core::model::{Match, Review};
use copyhound_core::ports::{MatchFilter, MatchOrder, MatchStore, PageRequest, Paged};
use copyhound_core::{Error, ErrorKind, Result};

use super::{
    LocalStore, MATCHES, MATCHES_BY_PAGE, MATCHES_BY_PUBLISHER, MATCHES_BY_SCORE, db_error,
    get_doc, load_all, put_doc, scan_scope, scoped,
};
use crate::codec;

/// Index entries read per step while filtering a listing.
const SCAN_CHUNK: usize = 256;

fn match_sort_key(found: &Match) -> String {
    codec::time_id_key(codec::timestamp_ns(&found.last_seen), found.id.as_str())
}

fn match_score_key(found: &Match) -> String {
    codec::score_id_key(found.score, found.id.as_str())
}

/// Fills the score index from the stored matches (migration 4 on a store
/// written before it).
pub(crate) fn index_scores(txn: &redb::WriteTransaction) -> Result<u64> {
    use redb::ReadableTable;
    let matches = txn.open_table(MATCHES).map_err(db_error)?;
    let mut by_score = txn.open_table(MATCHES_BY_SCORE).map_err(db_error)?;
    let mut indexed = 0;
    for entry in matches.range::<&str>(..).map_err(db_error)? {
        let (key, _) = entry.map_err(db_error)?;
        let Some(found) = get_doc::<Match>(&matches, key.value())? else {
            continue;
        };
        let key = scoped(found.publisher_id.as_str(), &match_score_key(&found));
        by_score.insert(key.as_str(), ()).map_err(db_error)?;
        indexed += 1;
    }
    Ok(indexed)
}

/// Returns whether a match passes the non-tenant parts of a filter.
pub(crate) fn passes(filter: &MatchFilter, found: &Match) -> bool {
    filter
        .work_id
        .as_ref()
        .is_none_or(|work_id| &found.work_id == work_id)
        && filter
            .chapter_id
            .as_ref()
            .is_none_or(|chapter_id| &found.chapter_id == chapter_id)
        && filter
            .site_id
            .as_ref()
            .is_none_or(|site_id| &found.site_id == site_id)
        && (filter.statuses.is_empty() || filter.statuses.contains(&found.status))
        && filter
            .min_score
            .is_none_or(|min_score| found.score >= min_score)
        && filter
            .seen_since
            .is_none_or(|since| found.last_seen >= since)
        && filter
            .seen_before
            .is_none_or(|before| found.first_seen < before)
}

fn cross_owner(found: &Match) -> Error {
    Error::new(
        ErrorKind::Conflict,
        format!(
            "match {} is held by another publisher; it is never moved to {}",
            found.id, found.publisher_id
        ),
    )
}

fn not_found(id: &MatchId) -> Error {
    Error::not_found(format!("match {id}"))
}

#[async_trait]
impl MatchStore for LocalStore {
    async fn upsert_match(&self, found: &Match) -> Result<()> {
        let found = found.clone();
        self.write(move |txn| {
            let mut stored = found.clone();
            let mut matches = txn.open_table(MATCHES).map_err(db_error)?;
            let existing = get_doc::<Match>(&matches, stored.id.as_str())?;
            let mut by_publisher = txn.open_table(MATCHES_BY_PUBLISHER).map_err(db_error)?;
            let mut by_score = txn.open_table(MATCHES_BY_SCORE).map_err(db_error)?;
            if let Some(existing) = existing {
                if existing.publisher_id != stored.publisher_id {
                    return Err(cross_owner(&stored));
                }
                stored.status = existing.status;
                stored.reviews = existing.reviews.clone();
                stored.first_seen = existing.first_seen;
                let owner = existing.publisher_id.as_str();
                let old_key = scoped(owner, &match_sort_key(&existing));
                by_publisher.remove(old_key.as_str()).map_err(db_error)?;
                let old_score = scoped(owner, &match_score_key(&existing));
                by_score.remove(old_score.as_str()).map_err(db_error)?;
            }
            put_doc(&mut matches, stored.id.as_str(), &stored)?;
            let owner = stored.publisher_id.as_str();
            let key = scoped(owner, &match_sort_key(&stored));
            by_publisher.insert(key.as_str(), ()).map_err(db_error)?;
            let score_key = scoped(owner, &match_score_key(&stored));
            by_score.insert(score_key.as_str(), ()).map_err(db_error)?;
            let mut by_page = txn.open_table(MATCHES_BY_PAGE).map_err(db_error)?;
            by_page
                .insert(
                    scoped(stored.page_id.as_str(), stored.id.as_str()).as_str(),
                    (),
                )
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_match(&self, publisher_id: &PublisherId, id: &MatchId) -> Result<Match> {
        let (publisher_id, id) = (publisher_id.clone(), id.clone());
        self.point(move |txn| {
            let matches = txn.open_table(MATCHES).map_err(db_error)?;
            match get_doc::<Match>(&matches, id.as_str())? {
                Some(found) if found.publisher_id == publisher_id => Ok(found),
                _ => Err(not_found(&id)),
            }
        })
        .await
    }

    async fn list_matches(&self, filter: &MatchFilter, page: &PageRequest) -> Result<Paged<Match>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        // A cursor is a position in the index: one this order never issued is refused.
        if let Some(after) = &after {
            match filter.order {
                MatchOrder::Newest => drop(codec::split_time_id_key(after)?),
                MatchOrder::Score => drop(codec::split_score_id_key(after)?),
            }
        }
        let filter = filter.clone();
        let order = filter.order;
        let items = self
            .read(move |txn| {
                let index = match order {
                    MatchOrder::Newest => txn.open_table(MATCHES_BY_PUBLISHER),
                    MatchOrder::Score => txn.open_table(MATCHES_BY_SCORE),
                }
                .map_err(db_error)?;
                let matches = txn.open_table(MATCHES).map_err(db_error)?;
                let scope = filter.publisher_id.as_str();
                let mut cursor = after;
                let mut items = Vec::new();
                loop {
                    let sort_keys = scan_scope(&index, scope, cursor.as_deref(), SCAN_CHUNK, true)?;
                    let Some(last) = sort_keys.last().cloned() else {
                        break;
                    };
                    for sort_key in &sort_keys {
                        let id = match order {
                            MatchOrder::Newest => codec::split_time_id_key(sort_key)?.1,
                            MatchOrder::Score => codec::split_score_id_key(sort_key)?.1,
                        };
                        let Some(found) = get_doc::<Match>(&matches, &id)? else {
                            continue;
                        };
                        // Newest first: past `since`, nothing further passes.
                        if order == MatchOrder::Newest
                            && filter
                                .seen_since
                                .is_some_and(|since| found.last_seen < since)
                        {
                            return Ok(items);
                        }
                        if passes(&filter, &found) {
                            items.push(found);
                            if items.len() > limit {
                                return Ok(items);
                            }
                        }
                    }
                    cursor = Some(last);
                }
                Ok(items)
            })
            .await?;
        Ok(match order {
            MatchOrder::Newest => codec::paged(items, limit, match_sort_key),
            MatchOrder::Score => codec::paged(items, limit, match_score_key),
        })
    }

    async fn matches_of_page(&self, page_id: &PageId) -> Result<Vec<Match>> {
        let page_id = page_id.clone();
        self.point(move |txn| {
            let index = txn.open_table(MATCHES_BY_PAGE).map_err(db_error)?;
            let ids = scan_scope(&index, page_id.as_str(), None, usize::MAX, false)?;
            load_all::<Match>(&txn.open_table(MATCHES).map_err(db_error)?, &ids)
        })
        .await
    }

    async fn delete_matches_of_work(
        &self,
        publisher_id: &PublisherId,
        work_id: &WorkId,
    ) -> Result<u64> {
        let (publisher_id, work_id) = (publisher_id.clone(), work_id.clone());
        self.write(move |txn| {
            let mut matches = txn.open_table(MATCHES).map_err(db_error)?;
            let mut by_publisher = txn.open_table(MATCHES_BY_PUBLISHER).map_err(db_error)?;
            let mut by_page = txn.open_table(MATCHES_BY_PAGE).map_err(db_error)?;
            let mut by_score = txn.open_table(MATCHES_BY_SCORE).map_err(db_error)?;
            let sort_keys = scan_scope(
                &by_publisher,
                publisher_id.as_str(),
                None,
                usize::MAX,
                false,
            )?;
            let mut deleted = 0;
            for sort_key in &sort_keys {
                let (_, id) = codec::split_time_id_key(sort_key)?;
                let Some(found) = get_doc::<Match>(&matches, &id)? else {
                    continue;
                };
                if found.work_id != work_id || found.publisher_id != publisher_id {
                    continue;
                }
                matches.remove(id.as_str()).map_err(db_error)?;
                by_publisher
                    .remove(scoped(publisher_id.as_str(), sort_key).as_str())
                    .map_err(db_error)?;
                by_page
                    .remove(scoped(found.page_id.as_str(), &id).as_str())
                    .map_err(db_error)?;
                by_score
                    .remove(scoped(publisher_id.as_str(), &match_score_key(&found)).as_str())
                    .map_err(db_error)?;
                deleted += 1;
            }
            Ok(deleted)
        })
        .await
    }

    async fn review_match(
        &self,
        publisher_id: &PublisherId,
        id: &MatchId,
        review: &Review,
    ) -> Result<Match> {
        let (publisher_id, id, review) = (publisher_id.clone(), id.clone(), review.clone());
        self.write(move |txn| {
            let mut matches = txn.open_table(MATCHES).map_err(db_error)?;
            let mut found = match get_doc::<Match>(&matches, id.as_str())? {
                Some(found) if found.publisher_id == publisher_id => found,
                _ => return Err(not_found(&id)),
            };
            found.status = review.status;
            found.reviews.push(review.clone());
            put_doc(&mut matches, id.as_str(), &found)?;
            Ok(found)
        })
        .await
    }
}
