use async_trait::async_trait;
use copyhound_core::model::{FingerprintOwner, FingerprintRecord};
use copyhound_core::ports::{FingerprintStore, PageRequest, Paged};
use copyhound_core::{Error, ErrorKind, Result};
use redb::WriteTransaction;

use super::{
    FINGERPRINTS, FINGERPRINTS_BY_VERSION, LocalStore, db_error, get_doc, put_doc, scan_scope,
    scoped,
};
use crate::codec;

fn version_scope(version: u32) -> String {
    format!("{version:010}")
}

fn record_key(owner_key: &str, version: u32) -> String {
    scoped(owner_key, &version_scope(version))
}

fn put_in(txn: &WriteTransaction, records: &[FingerprintRecord]) -> Result<()> {
    let mut table = txn.open_table(FINGERPRINTS).map_err(db_error)?;
    let mut index = txn.open_table(FINGERPRINTS_BY_VERSION).map_err(db_error)?;
    for record in records {
        let owner_key = record.owner.index_key();
        put_doc(&mut table, &record_key(&owner_key, record.version), record)?;
        index
            .insert(
                scoped(&version_scope(record.version), &owner_key).as_str(),
                (),
            )
            .map_err(db_error)?;
    }
    Ok(())
}

#[async_trait]
impl FingerprintStore for LocalStore {
    async fn put_fingerprint(&self, record: &FingerprintRecord) -> Result<()> {
        self.put_fingerprints(std::slice::from_ref(record)).await
    }

    async fn put_fingerprints(&self, records: &[FingerprintRecord]) -> Result<()> {
        let records = records.to_vec();
        self.write(move |txn| put_in(txn, &records)).await
    }

    async fn get_fingerprint(
        &self,
        owner: &FingerprintOwner,
        version: u32,
    ) -> Result<FingerprintRecord> {
        let owner_key = owner.index_key();
        self.point(move |txn| {
            let table = txn.open_table(FINGERPRINTS).map_err(db_error)?;
            get_doc(&table, &record_key(&owner_key, version))?.ok_or_else(|| {
                Error::not_found(format!("fingerprint of {owner_key} at version {version}"))
            })
        })
        .await
    }

    async fn delete_fingerprints(&self, owner: &FingerprintOwner) -> Result<()> {
        let owner_key = owner.index_key();
        self.write(move |txn| {
            let mut table = txn.open_table(FINGERPRINTS).map_err(db_error)?;
            let versions = scan_scope(&table, &owner_key, None, usize::MAX, false)?;
            let mut index = txn.open_table(FINGERPRINTS_BY_VERSION).map_err(db_error)?;
            for version in versions {
                table
                    .remove(scoped(&owner_key, &version).as_str())
                    .map_err(db_error)?;
                index
                    .remove(scoped(&version, &owner_key).as_str())
                    .map_err(db_error)?;
            }
            Ok(())
        })
        .await
    }

    async fn list_fingerprints(
        &self,
        version: u32,
        page: &PageRequest,
    ) -> Result<Paged<FingerprintRecord>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let items = self
            .read(move |txn| {
                let index = txn.open_table(FINGERPRINTS_BY_VERSION).map_err(db_error)?;
                let owners = scan_scope(
                    &index,
                    &version_scope(version),
                    after.as_deref(),
                    limit + 1,
                    false,
                )?;
                let table = txn.open_table(FINGERPRINTS).map_err(db_error)?;
                owners
                    .iter()
                    .map(|owner_key| {
                        get_doc(&table, &record_key(owner_key, version))?.ok_or_else(|| {
                            Error::new(
                                ErrorKind::Corrupt,
                                format!("index names missing fingerprint {owner_key}"),
                            )
                        })
                    })
                    .collect::<Result<Vec<FingerprintRecord>>>()
            })
            .await?;
        Ok(codec::paged(items, limit, |record| {
            record.owner.index_key()
        }))
    }
}
