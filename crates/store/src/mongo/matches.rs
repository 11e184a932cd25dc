use async_trait::async_trait;
use copyhound_core::ids::{MatchId, PageId, PublisherId, WorkId};
use copyhound_core::model::{Match, Review};
use copyhound_core::ports::{MatchFilter, MatchOrder, MatchStore, PageRequest, Paged};
use copyhound_core::{Error, ErrorKind, Result};
use mongodb::bson::{Bson, Document, doc};
use mongodb::options::ReturnDocument;

use super::codec::{from_document, object_to_document, to_document};
use super::error::is_duplicate_key;
use super::{MongoStore, after_time_id, mongo_error, newest_first};
use crate::codec;
use crate::collections::MATCHES;

const LAST_SEEN_NS: &str = "_last_seen_ns";
/// Fields an upsert never overwrites on an existing match: the review state.
const KEPT_ON_REFRESH: [&str; 3] = ["status", "reviews", "first_seen"];

fn match_sort_key(found: &Match) -> String {
    codec::time_id_key(codec::timestamp_ns(&found.last_seen), found.id.as_str())
}

fn match_score_key(found: &Match) -> String {
    codec::score_id_key(found.score, found.id.as_str())
}

/// A score as stored: the widened `f32` (what `to_document` writes), so a
/// cursor's score compares equal to the stored one.
fn stored_score(score: f32) -> f64 {
    f64::from(score)
}

/// The largest double below `value` (finite `value`).
fn next_down(value: f64) -> f64 {
    if value > 0.0 {
        f64::from_bits(value.to_bits() - 1)
    } else if value == 0.0 {
        -f64::from_bits(1)
    } else {
        f64::from_bits(value.to_bits() + 1)
    }
}

/// Restricts `filter` to the matches after a score cursor (highest first,
/// then id descending).
fn after_score_id(filter: Document, after: Option<String>) -> Result<Document> {
    let Some(after) = after else {
        return Ok(filter);
    };
    let (score, id) = codec::split_score_id_key(&after)?;
    let score = stored_score(score);
    let keyset = doc! {
        "$or": [
            { "score": { "$lt": score } },
            { "score": score, "_id": { "$lt": id } },
        ]
    };
    Ok(doc! { "$and": [Bson::Document(filter), Bson::Document(keyset)] })
}

fn filter_document(filter: &MatchFilter) -> Document {
    let mut query = doc! { "publisher_id": filter.publisher_id.as_str() };
    if let Some(work_id) = &filter.work_id {
        query.insert("work_id", work_id.as_str());
    }
    if let Some(chapter_id) = &filter.chapter_id {
        query.insert("chapter_id", chapter_id.as_str());
    }
    if let Some(site_id) = &filter.site_id {
        query.insert("site_id", site_id.as_str());
    }
    if !filter.statuses.is_empty() {
        let statuses: Vec<Bson> = filter
            .statuses
            .iter()
            .map(|status| Bson::from(status.as_str()))
            .collect();
        query.insert("status", doc! { "$in": statuses });
    }
    if let Some(min_score) = filter.min_score {
        // `$gt` the next double down, not `$gte`: the same on doubles, and the
        // test server drops inclusive bounds on index scans (see `since`).
        query.insert("score", doc! { "$gt": next_down(stored_score(min_score)) });
    }
    if let Some(since) = &filter.seen_since {
        // `$gt n - 1`, not `$gte n`: the same on integers, and SecantusDB (the test
        // server) drops inclusive bounds on some index scans.
        query.insert(
            LAST_SEEN_NS,
            doc! { "$gt": codec::timestamp_ns(since).saturating_sub(1) },
        );
    }
    if let Some(before) = &filter.seen_before {
        query.insert(
            "_first_seen_ns",
            doc! { "$lt": codec::timestamp_ns(before) },
        );
    }
    query
}

fn encode_review(review: &Review) -> Result<Bson> {
    let mut object = serde_json::Map::new();
    object.insert(
        "review".into(),
        serde_json::to_value(review).map_err(|error| {
            Error::with_source(ErrorKind::Internal, "failed to encode a review", error)
        })?,
    );
    let mut document = object_to_document(object)?;
    document
        .remove("review")
        .ok_or_else(|| Error::internal("encoded review vanished"))
}

#[async_trait]
impl MatchStore for MongoStore {
    async fn upsert_match(&self, found: &Match) -> Result<()> {
        let id = found.id.as_str();
        let mut refreshed = to_document(found, id)?;
        refreshed.remove("_id");
        refreshed.insert(LAST_SEEN_NS, codec::timestamp_ns(&found.last_seen));
        let mut on_insert = doc! { "_first_seen_ns": codec::timestamp_ns(&found.first_seen) };
        for field in KEPT_ON_REFRESH {
            if let Some(value) = refreshed.remove(field) {
                on_insert.insert(field, value);
            }
        }
        let update = doc! { "$set": refreshed, "$setOnInsert": on_insert };
        let matches = self.collection(MATCHES);
        // Two workers inserting the same new match race on `_id`: the loser's
        // upsert fails with a duplicate key and succeeds as an update on retry.
        // The owner is in the filter: a document of another publisher under the
        // same id makes the upsert's insert fail on `_id`, never an update of it.
        let owned = doc! { "_id": id, "publisher_id": found.publisher_id.as_str() };
        for _ in 0..3 {
            match matches
                .update_one(owned.clone(), update.clone())
                .upsert(true)
                .await
            {
                Ok(_) => return Ok(()),
                Err(error) if is_duplicate_key(&error) => continue,
                Err(error) => return Err(mongo_error(error)),
            }
        }
        Err(Error::new(
            ErrorKind::Conflict,
            format!("match {id} keeps conflicting or is held by another publisher"),
        ))
    }

    async fn get_match(&self, publisher_id: &PublisherId, id: &MatchId) -> Result<Match> {
        self.find_decoded(
            MATCHES,
            doc! { "_id": id.as_str(), "publisher_id": publisher_id.as_str() },
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("match {id}")))
    }

    async fn list_matches(&self, filter: &MatchFilter, page: &PageRequest) -> Result<Paged<Match>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        if filter.order == MatchOrder::Score {
            let query = after_score_id(filter_document(filter), after)?;
            let items = self
                .find_decoded_many(
                    MATCHES,
                    query,
                    doc! { "score": -1, "_id": -1 },
                    Some(limit + 1),
                )
                .await?;
            return Ok(codec::paged(items, limit, match_score_key));
        }
        let query = after_time_id(filter_document(filter), LAST_SEEN_NS, after)?;
        let items = self
            .find_decoded_many(MATCHES, query, newest_first(LAST_SEEN_NS), Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, match_sort_key))
    }

    async fn matches_of_page(&self, page_id: &PageId) -> Result<Vec<Match>> {
        self.find_decoded_many(
            MATCHES,
            doc! { "page_id": page_id.as_str() },
            doc! { "_id": 1 },
            None,
        )
        .await
    }

    async fn delete_matches_of_work(
        &self,
        publisher_id: &PublisherId,
        work_id: &WorkId,
    ) -> Result<u64> {
        let deleted = self
            .collection(MATCHES)
            .delete_many(
                doc! { "publisher_id": publisher_id.as_str(), "work_id": work_id.as_str() },
            )
            .await
            .map_err(mongo_error)?;
        Ok(deleted.deleted_count)
    }

    async fn review_match(
        &self,
        publisher_id: &PublisherId,
        id: &MatchId,
        review: &Review,
    ) -> Result<Match> {
        let update = doc! {
            "$set": { "status": review.status.as_str() },
            "$push": { "reviews": encode_review(review)? },
        };
        let updated = self
            .collection(MATCHES)
            .find_one_and_update(
                doc! { "_id": id.as_str(), "publisher_id": publisher_id.as_str() },
                update,
            )
            .return_document(ReturnDocument::After)
            .await
            .map_err(mongo_error)?;
        updated
            .map(from_document)
            .transpose()?
            .ok_or_else(|| Error::not_found(format!("match {id}")))
    }
}
