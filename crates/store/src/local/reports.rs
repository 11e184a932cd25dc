use async_trait::async_trait;
use copyhound_core::ids::{PublisherId, ReportId};
use copyhound_core::model::{AlertState, Report};
use copyhound_core::ports::{PageRequest, Paged, ReportStore};
use copyhound_core::{Error, Result};

use super::{
    ALERT_STATES, LocalStore, REPORT_ARTIFACTS, REPORTS, REPORTS_BY_PUBLISHER, db_error, get_doc,
    load_all, put_doc, scan_scope, scoped,
};
use crate::codec;

fn report_sort_key(report: &Report) -> String {
    codec::time_id_key(codec::timestamp_ns(&report.created_at), report.id.as_str())
}

#[async_trait]
impl ReportStore for LocalStore {
    async fn put_report(&self, report: &Report) -> Result<()> {
        let report = report.clone();
        self.write(move |txn| {
            let mut reports = txn.open_table(REPORTS).map_err(db_error)?;
            let previous = get_doc::<Report>(&reports, report.id.as_str())?;
            put_doc(&mut reports, report.id.as_str(), &report)?;
            let mut index = txn.open_table(REPORTS_BY_PUBLISHER).map_err(db_error)?;
            if let Some(previous) = previous {
                let old_key = scoped(
                    previous.scope.publisher_id.as_str(),
                    &report_sort_key(&previous),
                );
                index.remove(old_key.as_str()).map_err(db_error)?;
            }
            let key = scoped(
                report.scope.publisher_id.as_str(),
                &report_sort_key(&report),
            );
            index.insert(key.as_str(), ()).map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_report(&self, publisher_id: &PublisherId, id: &ReportId) -> Result<Report> {
        let (publisher_id, id) = (publisher_id.clone(), id.clone());
        self.point(move |txn| {
            let reports = txn.open_table(REPORTS).map_err(db_error)?;
            match get_doc::<Report>(&reports, id.as_str())? {
                Some(report) if report.scope.publisher_id == publisher_id => Ok(report),
                _ => Err(Error::not_found(format!("report {id}"))),
            }
        })
        .await
    }

    async fn list_reports(
        &self,
        publisher_id: &PublisherId,
        page: &PageRequest,
    ) -> Result<Paged<Report>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let publisher_id = publisher_id.clone();
        let items = self
            .read(move |txn| {
                let index = txn.open_table(REPORTS_BY_PUBLISHER).map_err(db_error)?;
                let sort_keys = scan_scope(
                    &index,
                    publisher_id.as_str(),
                    after.as_deref(),
                    limit + 1,
                    true,
                )?;
                let ids = sort_keys
                    .iter()
                    .map(|key| codec::split_time_id_key(key).map(|(_, id)| id))
                    .collect::<Result<Vec<_>>>()?;
                load_all::<Report>(&txn.open_table(REPORTS).map_err(db_error)?, &ids)
            })
            .await?;
        Ok(codec::paged(items, limit, report_sort_key))
    }

    async fn put_artifact(&self, id: &ReportId, bytes: &[u8]) -> Result<()> {
        let id = id.clone();
        let compressed = codec::compress(bytes);
        self.write(move |txn| {
            let mut artifacts = txn.open_table(REPORT_ARTIFACTS).map_err(db_error)?;
            artifacts
                .insert(id.as_str(), compressed.as_slice())
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_artifact(&self, id: &ReportId) -> Result<Vec<u8>> {
        let id = id.clone();
        self.read(move |txn| {
            let artifacts = txn.open_table(REPORT_ARTIFACTS).map_err(db_error)?;
            let compressed = artifacts
                .get(id.as_str())
                .map_err(db_error)?
                .ok_or_else(|| Error::not_found(format!("artifact of report {id}")))?;
            codec::decompress(compressed.value())
        })
        .await
    }

    async fn get_alert_state(&self, id: &str) -> Result<Option<AlertState>> {
        let id = id.to_owned();
        self.point(move |txn| {
            get_doc::<AlertState>(&txn.open_table(ALERT_STATES).map_err(db_error)?, &id)
        })
        .await
    }

    async fn swap_alert_state(&self, expected: Option<u64>, state: &AlertState) -> Result<bool> {
        let state = state.clone();
        // One write transaction at a time: the read and the write are atomic.
        self.write(move |txn| {
            let mut states = txn.open_table(ALERT_STATES).map_err(db_error)?;
            let stored = get_doc::<AlertState>(&states, &state.id)?;
            if stored.map(|stored| stored.version) != expected {
                return Ok(false);
            }
            put_doc(&mut states, &state.id, &state)?;
            Ok(true)
        })
        .await
    }
}
