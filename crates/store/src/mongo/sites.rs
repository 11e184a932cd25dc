use async_trait::async_trait;
use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::model::{CrawlRun, Site, SiteSuggestion, SuggestionStatus};
use copyhound_core::ports::{PageRequest, Paged, SiteStore};
use copyhound_core::{Error, Result};
use mongodb::bson::doc;

use super::codec::to_document;
use super::{MongoStore, after_id, after_time_id, newest_first};
use crate::codec;
use crate::collections::{CRAWL_RUNS, SITE_SUGGESTIONS, SITES};

const CREATED_NS: &str = "_created_ns";

fn run_sort_key(run: &CrawlRun) -> String {
    codec::time_id_key(codec::timestamp_ns(&run.created_at), run.id.as_str())
}

#[async_trait]
impl SiteStore for MongoStore {
    async fn put_site(&self, site: &Site) -> Result<()> {
        let id = site.id.as_str();
        self.replace_by_id(SITES, id, to_document(site, id)?).await
    }

    async fn get_site(&self, id: &SiteId) -> Result<Site> {
        self.find_decoded(SITES, doc! { "_id": id.as_str() })
            .await?
            .ok_or_else(|| Error::not_found(format!("site {id}")))
    }

    async fn list_sites(
        &self,
        publisher_id: Option<&PublisherId>,
        page: &PageRequest,
    ) -> Result<Paged<Site>> {
        let limit = codec::page_limit(page);
        let scope = match publisher_id {
            Some(publisher_id) => doc! { "publisher_id": publisher_id.as_str() },
            None => doc! {},
        };
        let filter = after_id(scope, codec::cursor_key(page)?);
        let items = self
            .find_decoded_many(SITES, filter, doc! { "_id": 1 }, Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, |site: &Site| {
            site.id.to_string()
        }))
    }

    async fn put_crawl_run(&self, run: &CrawlRun) -> Result<()> {
        let id = run.id.as_str();
        let mut document = to_document(run, id)?;
        document.insert(CREATED_NS, codec::timestamp_ns(&run.created_at));
        self.replace_by_id(CRAWL_RUNS, id, document).await
    }

    async fn get_crawl_run(&self, id: &CrawlRunId) -> Result<CrawlRun> {
        self.find_decoded(CRAWL_RUNS, doc! { "_id": id.as_str() })
            .await?
            .ok_or_else(|| Error::not_found(format!("crawl run {id}")))
    }

    async fn list_crawl_runs(
        &self,
        site_id: &SiteId,
        page: &PageRequest,
    ) -> Result<Paged<CrawlRun>> {
        let limit = codec::page_limit(page);
        let filter = after_time_id(
            doc! { "site_id": site_id.as_str() },
            CREATED_NS,
            codec::cursor_key(page)?,
        )?;
        let items = self
            .find_decoded_many(
                CRAWL_RUNS,
                filter,
                newest_first(CREATED_NS),
                Some(limit + 1),
            )
            .await?;
        Ok(codec::paged(items, limit, run_sort_key))
    }

    async fn put_suggestion(&self, suggestion: &SiteSuggestion) -> Result<()> {
        let id = suggestion.id.as_str();
        self.replace_by_id(SITE_SUGGESTIONS, id, to_document(suggestion, id)?)
            .await
    }

    async fn get_suggestion(&self, publisher_id: &PublisherId, id: &str) -> Result<SiteSuggestion> {
        self.find_decoded(
            SITE_SUGGESTIONS,
            doc! { "_id": id, "publisher_id": publisher_id.as_str() },
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("site suggestion {id}")))
    }

    async fn list_suggestions(
        &self,
        publisher_id: &PublisherId,
        status: Option<SuggestionStatus>,
        page: &PageRequest,
    ) -> Result<Paged<SiteSuggestion>> {
        let limit = codec::page_limit(page);
        let mut scope = doc! { "publisher_id": publisher_id.as_str() };
        if let Some(status) = status {
            scope.insert("status", status.as_str());
        }
        let filter = after_id(scope, codec::cursor_key(page)?);
        let items = self
            .find_decoded_many(SITE_SUGGESTIONS, filter, doc! { "_id": 1 }, Some(limit + 1))
            .await?;
        Ok(codec::paged(items, limit, |found: &SiteSuggestion| {
            found.id.clone()
        }))
    }
}
