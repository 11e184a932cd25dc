use async_trait::async_trait;
use copyhound_core::ids::{PublisherId, ReportId};
use copyhound_core::model::{AlertState, Report};
use copyhound_core::ports::{PageRequest, Paged, ReportStore};
use copyhound_core::{Error, ErrorKind, Result};
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{Binary, Bson, doc};

use super::codec::to_document;
use super::error::is_duplicate_key;
use super::{MongoStore, after_time_id, mongo_error, newest_first};
use crate::codec;
use crate::collections::{ALERT_STATES, REPORT_ARTIFACTS, REPORTS};

const CREATED_NS: &str = "_created_ns";
/// Compressed artifact bytes per chunk document, well under the 16 MiB limit.
const CHUNK_BYTES: usize = 8 << 20;

fn report_sort_key(report: &Report) -> String {
    codec::time_id_key(codec::timestamp_ns(&report.created_at), report.id.as_str())
}

#[async_trait]
impl ReportStore for MongoStore {
    async fn put_report(&self, report: &Report) -> Result<()> {
        let id = report.id.as_str();
        let mut document = to_document(report, id)?;
        document.insert(CREATED_NS, codec::timestamp_ns(&report.created_at));
        self.replace_by_id(REPORTS, id, document).await
    }

    async fn get_report(&self, publisher_id: &PublisherId, id: &ReportId) -> Result<Report> {
        self.find_decoded(
            REPORTS,
            doc! { "_id": id.as_str(), "scope.publisher_id": publisher_id.as_str() },
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("report {id}")))
    }

    async fn list_reports(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Report>> {
        let limit = codec::page_limit(page);
        let scope = doc! { "scope.publisher_id": publisher_id.as_str() };
        let filter = after_time_id(scope, CREATED_NS, codec::cursor_key(page)?)?;
        let items = self
            .find_decoded_many(REPORTS, filter, newest_first(CREATED_NS), Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, report_sort_key))
    }

    /// Writes the chunks of a new generation, then points the manifest at it,
    /// then drops older generations: readers always see one whole artifact.
    async fn put_artifact(&self, id: &ReportId, bytes: &[u8]) -> Result<()> {
        let compressed = codec::compress(bytes);
        let generation = uuid::Uuid::now_v7().simple().to_string();
        let artifacts = self.collection(REPORT_ARTIFACTS);
        let chunks: Vec<_> = compressed
            .chunks(CHUNK_BYTES)
            .enumerate()
            .map(|(position, data)| {
                doc! {
                    "_id": format!("{id}:{generation}:{position:06}"),
                    "report_id": id.as_str(),
                    "generation": &generation,
                    "chunk": i64::try_from(position).unwrap_or(i64::MAX),
                    "data": Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: data.to_vec() }),
                    "schema_version": 1_i64,
                }
            })
            .collect();
        for chunk in &chunks {
            artifacts.insert_one(chunk).await.map_err(mongo_error)?;
        }
        let manifest = doc! {
            "_id": id.as_str(),
            "report_id": id.as_str(),
            "generation": &generation,
            "chunks": i64::try_from(chunks.len()).unwrap_or(i64::MAX),
            "schema_version": 1_i64,
        };
        self.replace_by_id(REPORT_ARTIFACTS, id.as_str(), manifest)
            .await?;
        artifacts
            .delete_many(doc! { "report_id": id.as_str(), "generation": { "$ne": &generation }, "chunk": { "$exists": true } })
            .await
            .map_err(mongo_error)?;
        Ok(())
    }

    async fn get_artifact(&self, id: &ReportId) -> Result<Vec<u8>> {
        let manifest = self
            .find_by_id(REPORT_ARTIFACTS, id.as_str())
            .await?
            .ok_or_else(|| Error::not_found(format!("artifact of report {id}")))?;
        let generation = manifest.get_str("generation").map_err(|error| {
            Error::with_source(
                ErrorKind::Corrupt,
                "artifact manifest has no generation",
                error,
            )
        })?;
        let filter = doc! { "report_id": id.as_str(), "generation": generation, "chunk": { "$exists": true } };
        let chunks = self
            .find_many(REPORT_ARTIFACTS, filter, doc! { "chunk": 1 }, None)
            .await?;
        let mut compressed = Vec::new();
        for chunk in chunks {
            let data = chunk.get_binary_generic("data").map_err(|error| {
                Error::with_source(ErrorKind::Corrupt, "artifact chunk has no data", error)
            })?;
            compressed.extend_from_slice(data);
        }
        codec::decompress(&compressed)
    }

    async fn get_alert_state(&self, id: &str) -> Result<Option<AlertState>> {
        self.find_decoded(ALERT_STATES, doc! { "_id": id }).await
    }

    async fn swap_alert_state(&self, expected: Option<u64>, state: &AlertState) -> Result<bool> {
        let document = to_document(state, &state.id)?;
        let states = self.collection(ALERT_STATES);
        match expected {
            // The unique `_id` decides between concurrent first writers.
            None => match states.insert_one(document).await {
                Ok(_) => Ok(true),
                Err(error) if is_duplicate_key(&error) => Ok(false),
                Err(error) => Err(mongo_error(error)),
            },
            Some(version) => {
                let version = i64::try_from(version)
                    .map_err(|_| Error::invalid(format!("alert state version {version}")))?;
                let result = states
                    .replace_one(doc! { "_id": &state.id, "version": version }, document)
                    .await
                    .map_err(mongo_error)?;
                Ok(result.matched_count == 1)
            }
        }
    }
}
