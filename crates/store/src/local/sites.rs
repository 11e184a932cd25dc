use async_trait::async_trait;
use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::model::{CrawlRun, Site, SiteSuggestion, SuggestionStatus};
use copyhound_core::ports::{PageRequest, Paged, SiteStore};
use copyhound_core::{Error, Result};

use super::{
    CRAWL_RUNS, LocalStore, RUNS_BY_SITE, SITE_SUGGESTIONS, SITES, SITES_BY_PUBLISHER,
    SUGGESTIONS_BY_PUBLISHER, db_error, get_doc, load_all, put_doc, scan_keys, scan_scope, scoped,
};
use crate::codec;

fn run_sort_key(run: &CrawlRun) -> String {
    codec::time_id_key(codec::timestamp_ns(&run.created_at), run.id.as_str())
}

#[async_trait]
impl SiteStore for LocalStore {
    async fn put_site(&self, site: &Site) -> Result<()> {
        let site = site.clone();
        self.write(move |txn| {
            let mut sites = txn.open_table(SITES).map_err(db_error)?;
            let previous = get_doc::<Site>(&sites, site.id.as_str())?;
            put_doc(&mut sites, site.id.as_str(), &site)?;
            let mut index = txn.open_table(SITES_BY_PUBLISHER).map_err(db_error)?;
            if let Some(previous) = previous {
                index
                    .remove(scoped(previous.publisher_id.as_str(), site.id.as_str()).as_str())
                    .map_err(db_error)?;
            }
            index
                .insert(
                    scoped(site.publisher_id.as_str(), site.id.as_str()).as_str(),
                    (),
                )
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_site(&self, id: &SiteId) -> Result<Site> {
        let id = id.clone();
        self.point(move |txn| {
            let sites = txn.open_table(SITES).map_err(db_error)?;
            get_doc(&sites, id.as_str())?.ok_or_else(|| Error::not_found(format!("site {id}")))
        })
        .await
    }

    async fn list_sites(
        &self,
        publisher_id: Option<&PublisherId>,
        page: &PageRequest,
    ) -> Result<Paged<Site>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let publisher_id = publisher_id.cloned();
        let items = self
            .read(move |txn| {
                let sites = txn.open_table(SITES).map_err(db_error)?;
                let keys = match &publisher_id {
                    Some(publisher_id) => {
                        let index = txn.open_table(SITES_BY_PUBLISHER).map_err(db_error)?;
                        scan_scope(
                            &index,
                            publisher_id.as_str(),
                            after.as_deref(),
                            limit + 1,
                            false,
                        )?
                    }
                    None => scan_keys(&sites, after.as_deref(), limit + 1)?,
                };
                load_all::<Site>(&sites, &keys)
            })
            .await?;
        Ok(codec::paged(items, limit, |site| site.id.to_string()))
    }

    async fn put_crawl_run(&self, run: &CrawlRun) -> Result<()> {
        let run = run.clone();
        self.write(move |txn| {
            let mut runs = txn.open_table(CRAWL_RUNS).map_err(db_error)?;
            let previous = get_doc::<CrawlRun>(&runs, run.id.as_str())?;
            put_doc(&mut runs, run.id.as_str(), &run)?;
            let mut index = txn.open_table(RUNS_BY_SITE).map_err(db_error)?;
            if let Some(previous) = previous {
                index
                    .remove(scoped(previous.site_id.as_str(), &run_sort_key(&previous)).as_str())
                    .map_err(db_error)?;
            }
            index
                .insert(
                    scoped(run.site_id.as_str(), &run_sort_key(&run)).as_str(),
                    (),
                )
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_crawl_run(&self, id: &CrawlRunId) -> Result<CrawlRun> {
        let id = id.clone();
        self.point(move |txn| {
            let runs = txn.open_table(CRAWL_RUNS).map_err(db_error)?;
            get_doc(&runs, id.as_str())?.ok_or_else(|| Error::not_found(format!("crawl run {id}")))
        })
        .await
    }

    async fn list_crawl_runs(
        &self,
        site_id: &SiteId,
        page: &PageRequest,
    ) -> Result<Paged<CrawlRun>> {
        let limit = codec::page_limit(page);
        let after = codec::cursor_key(page)?;
        let site_id = site_id.clone();
        let items = self
            .read(move |txn| {
                let index = txn.open_table(RUNS_BY_SITE).map_err(db_error)?;
                let sort_keys =
                    scan_scope(&index, site_id.as_str(), after.as_deref(), limit + 1, true)?;
                let ids = sort_keys
                    .iter()
                    .map(|key| codec::split_time_id_key(key).map(|(_, id)| id))
                    .collect::<Result<Vec<_>>>()?;
                load_all::<CrawlRun>(&txn.open_table(CRAWL_RUNS).map_err(db_error)?, &ids)
            })
            .await?;
        Ok(codec::paged(items, limit, run_sort_key))
    }

    async fn put_suggestion(&self, suggestion: &SiteSuggestion) -> Result<()> {
        let suggestion = suggestion.clone();
        self.write(move |txn| {
            let mut table = txn.open_table(SITE_SUGGESTIONS).map_err(db_error)?;
            put_doc(&mut table, &suggestion.id, &suggestion)?;
            txn.open_table(SUGGESTIONS_BY_PUBLISHER)
                .map_err(db_error)?
                .insert(
                    scoped(suggestion.publisher_id.as_str(), &suggestion.id).as_str(),
                    (),
                )
                .map_err(db_error)?;
            Ok(())
        })
        .await
    }

    async fn get_suggestion(&self, publisher_id: &PublisherId, id: &str) -> Result<SiteSuggestion> {
        let id = id.to_string();
        let publisher_id = publisher_id.clone();
        self.point(move |txn| {
            let table = txn.open_table(SITE_SUGGESTIONS).map_err(db_error)?;
            get_doc::<SiteSuggestion>(&table, &id)?
                .filter(|found| found.publisher_id == publisher_id)
                .ok_or_else(|| Error::not_found(format!("site suggestion {id}")))
        })
        .await
    }

    async fn list_suggestions(
        &self,
        publisher_id: &PublisherId,
        status: Option<SuggestionStatus>,
        page: &PageRequest,
    ) -> Result<Paged<SiteSuggestion>> {
        let limit = codec::page_limit(page);
        let mut after = codec::cursor_key(page)?;
        let publisher_id = publisher_id.clone();
        let items = self
            .read(move |txn| {
                let index = txn.open_table(SUGGESTIONS_BY_PUBLISHER).map_err(db_error)?;
                let table = txn.open_table(SITE_SUGGESTIONS).map_err(db_error)?;
                let mut items = Vec::new();
                // Filtered by status in batches, so a page is full when it can be.
                loop {
                    let keys =
                        scan_scope(&index, publisher_id.as_str(), after.as_deref(), 256, false)?;
                    let Some(last) = keys.last().cloned() else {
                        break;
                    };
                    for found in load_all::<SiteSuggestion>(&table, &keys)? {
                        if status.is_none_or(|status| found.status == status) {
                            items.push(found);
                        }
                    }
                    if items.len() > limit || keys.len() < 256 {
                        break;
                    }
                    after = Some(last);
                }
                items.truncate(limit + 1);
                Ok(items)
            })
            .await?;
        Ok(codec::paged(items, limit, |found| found.id.clone()))
    }
}
