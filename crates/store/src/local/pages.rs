use async_trait::async_trait;
use copyhound_core::ids::{PageId, SiteId};
use copyhound_core::model::Page;
use copyhound_core::ports::{PageRequest, PageStore, PageUpsert, Paged};
use copyhound_core::{Error, ErrorKind, Result};
use redb::{ReadableTable, WriteTransaction};

use super::{
    LocalStore, PAGE_BODIES, PAGES, PAGES_BY_SITE, PAGES_BY_URL, db_error, put_object, scan_scope,
    scoped,
};
use crate::codec;

/// Applies one fetched page inside a write transaction.
fn upsert_in(txn: &WriteTransaction, incoming: Page) -> Result<PageUpsert> {
    let id = incoming.id.to_string();
    let mut by_url = txn.open_table(PAGES_BY_URL).map_err(db_error)?;
    let url_owner = by_url
        .get(incoming.url.as_str())
        .map_err(db_error)?
        .map(|owner| owner.value().to_vec());
    if url_owner.is_some_and(|owner| owner != id.as_bytes()) {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("url {} is stored under another page id", incoming.url),
        ));
    }
    let mut pages = txn.open_table(PAGES).map_err(db_error)?;
    let existing = match pages.get(id.as_str()).map_err(db_error)? {
        Some(meta) => Some(page_state(&id, meta.value(), Vec::new())?),
        None => None,
    };
    let previous_site = existing.as_ref().map(|state| state.page.site_id.clone());
    let stored_body = existing
        .as_ref()
        .map(|state| state.page.body_sha256.clone());
    let (outcome, mut state) = codec::merge_page(existing, incoming);
    put_object(&mut pages, &id, &codec::page_meta_object(&mut state)?)?;
    let body_changed = stored_body.as_ref() != Some(&state.page.body_sha256);
    if outcome == PageUpsert::Unchanged && !body_changed {
        return Ok(outcome);
    }
    let mut bodies = txn.open_table(PAGE_BODIES).map_err(db_error)?;
    bodies
        .insert(
            id.as_str(),
            codec::compress(&state.page.raw_body).as_slice(),
        )
        .map_err(db_error)?;
    if outcome == PageUpsert::Unchanged {
        return Ok(outcome);
    }
    by_url
        .insert(state.page.url.as_str(), id.as_bytes())
        .map_err(db_error)?;
    let mut by_site = txn.open_table(PAGES_BY_SITE).map_err(db_error)?;
    if let Some(previous_site) = previous_site {
        by_site
            .remove(scoped(previous_site.as_str(), &id).as_str())
            .map_err(db_error)?;
    }
    by_site
        .insert(scoped(state.page.site_id.as_str(), &id).as_str(), ())
        .map_err(db_error)?;
    Ok(outcome)
}

/// Reads a page with its body.
fn load_page(
    pages: &impl ReadableTable<&'static str, &'static [u8]>,
    bodies: &impl ReadableTable<&'static str, &'static [u8]>,
    id: &str,
) -> Result<Option<Page>> {
    let Some(meta) = pages.get(id).map_err(db_error)? else {
        return Ok(None);
    };
    let body = match bodies.get(id).map_err(db_error)? {
        Some(compressed) => codec::decompress(compressed.value())?,
        None => {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("page {id} has no stored body"),
            ));
        }
    };
    Ok(Some(page_state(id, meta.value(), body)?.page))
}

/// A stored page's state from its metadata and its body: read directly
/// when it is of this build's version (see `direct`), else the general way.
fn page_state(id: &str, meta: &[u8], body: Vec<u8>) -> Result<codec::PageState> {
    // The body is stored apart; the model wants the field.
    match super::direct::decode::<Page>(meta, &[("raw_body", "")]) {
        Some(direct) => {
            let mut page = direct.value;
            page.raw_body = body;
            let first_seen = direct
                .extras
                .into_iter()
                .find(|(name, _)| name == codec::VERSION_FIRST_SEEN)
                .map(|(_, value)| value);
            Ok(codec::page_state_with(page, first_seen))
        }
        None => codec::page_state_from(super::parse_object(id, meta)?, body),
    }
}

impl LocalStore {
    /// Stores many fetched pages in one transaction; see [`PageStore::upsert_page`].
    async fn upsert_batch(&self, pages: &[Page]) -> Result<Vec<PageUpsert>> {
        let limits = self.limits();
        let capped: Vec<Page> = pages
            .iter()
            .map(|page| codec::cap_page(page, limits))
            .collect();
        self.write(move |txn| {
            capped
                .iter()
                .map(|page| upsert_in(txn, page.clone()))
                .collect()
        })
        .await
    }
}

#[async_trait]
impl PageStore for LocalStore {
    async fn upsert_page(&self, page: &Page) -> Result<PageUpsert> {
        let outcomes = self.upsert_batch(std::slice::from_ref(page)).await?;
        outcomes
            .into_iter()
            .next()
            .ok_or_else(|| Error::internal("page upsert returned no outcome"))
    }

    async fn upsert_pages(&self, pages: &[Page]) -> Result<Vec<PageUpsert>> {
        self.upsert_batch(pages).await
    }

    async fn get_page(&self, id: &PageId) -> Result<Page> {
        let id = id.clone();
        self.point(move |txn| {
            let pages = txn.open_table(PAGES).map_err(db_error)?;
            let bodies = txn.open_table(PAGE_BODIES).map_err(db_error)?;
            load_page(&pages, &bodies, id.as_str())?
                .ok_or_else(|| Error::not_found(format!("page {id}")))
        })
        .await
    }

    async fn list_pages(&self, site_id: &SiteId, page: &PageRequest) -> Result<Paged<Page>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let site_id = site_id.clone();
        let items = self
            .read(move |txn| {
                let index = txn.open_table(PAGES_BY_SITE).map_err(db_error)?;
                let ids = scan_scope(&index, site_id.as_str(), after.as_deref(), limit + 1, false)?;
                let pages = txn.open_table(PAGES).map_err(db_error)?;
                let bodies = txn.open_table(PAGE_BODIES).map_err(db_error)?;
                ids.iter()
                    .map(|id| {
                        load_page(&pages, &bodies, id)?.ok_or_else(|| {
                            Error::new(ErrorKind::Corrupt, format!("index names missing page {id}"))
                        })
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .await?;
        Ok(codec::paged(items, limit, |page| page.id.to_string()))
    }
}
