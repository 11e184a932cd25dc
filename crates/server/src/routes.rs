//! The route table of the JSON API. Routes are registered through [`RouteTable`],
//! which records every (method, path) it adds, so a test can hold the OpenAPI
//! document and the router to the same list. Every route bounds its request
//! body: routes that carry works (JSON registrations, TXT/EPUB files, articles)
//! take up to `server.max_upload_bytes`, every other route [`MAX_BODY_BYTES`].

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::routing::{MethodRouter, delete, get, patch, post, put};

use crate::AppState;
use crate::api::{
    admin, alerts, matches, policy, profile, report_schedules, reports, sites, system, works,
};

/// Prefix of the versioned API.
pub const API_PREFIX: &str = "/api/v1";

/// Largest request body of a route that carries no work text (sites, reviews,
/// keys, reports, licensed hosts), bytes.
pub const MAX_BODY_BYTES: usize = 256 << 10;

/// A router that remembers what it registered.
#[derive(Debug, Default)]
pub struct RouteTable {
    router: Router<AppState>,
    entries: Vec<(&'static str, String)>,
}

macro_rules! method {
    ($name:ident, $method:literal, $routing:ident) => {
        /// Registers a handler for this method on `path`; bodies up to [`MAX_BODY_BYTES`].
        pub fn $name<H, T>(self, path: &str, handler: H) -> Self
        where
            H: Handler<T, AppState>,
            T: 'static,
        {
            let method_router = $routing(handler).layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
            self.add($method, path, method_router)
        }
    };
}

macro_rules! upload_method {
    ($name:ident, $method:literal, $routing:ident) => {
        /// Registers a handler for this method on `path` that takes work text:
        /// bodies up to `server.max_upload_bytes` (the router-wide limit).
        pub fn $name<H, T>(self, path: &str, handler: H) -> Self
        where
            H: Handler<T, AppState>,
            T: 'static,
        {
            self.add($method, path, $routing(handler))
        }
    };
}

impl RouteTable {
    fn add(
        mut self,
        method: &'static str,
        path: &str,
        method_router: MethodRouter<AppState>,
    ) -> Self {
        self.router = self.router.route(path, method_router);
        self.entries.push((method, path.to_string()));
        self
    }

    method!(get, "get", get);
    method!(post, "post", post);
    method!(put, "put", put);
    method!(patch, "patch", patch);
    method!(delete, "delete", delete);
    upload_method!(post_upload, "post", post);
    upload_method!(put_upload, "put", put);

    /// Returns the registered (method, path) pairs, paths in OpenAPI `{param}` form.
    pub fn entries(&self) -> &[(&'static str, String)] {
        &self.entries
    }

    /// Returns the router.
    pub fn into_router(self) -> Router<AppState> {
        self.router
    }
}

/// Returns every JSON route: `/health`, `/metrics` and `/api/v1/...`.
pub fn api_routes() -> RouteTable {
    let v1 = |path: &str| format!("{API_PREFIX}{path}");
    RouteTable::default()
        .get("/health", system::health)
        .get("/metrics", system::metrics)
        .get(&v1("/openapi.json"), system::openapi)
        .get(&v1("/me"), system::me)
        .get(&v1("/alerts"), alerts::get_alerts)
        .put(&v1("/alerts"), alerts::put_alerts)
        .get(&v1("/profile"), profile::get_profile)
        .put(&v1("/profile"), profile::put_profile)
        .get(&v1("/report-schedules"), report_schedules::get_schedules)
        .put(&v1("/report-schedules"), report_schedules::put_schedules)
        .get(&v1("/policy"), policy::get_policy)
        .put(&v1("/policy"), policy::put_policy)
        .post(&v1("/admin/publishers"), admin::create_publisher)
        .get(&v1("/admin/publishers"), admin::list_publishers)
        .post(
            &v1("/admin/publishers/{publisher_id}/keys"),
            admin::create_key,
        )
        .get(
            &v1("/admin/publishers/{publisher_id}/keys"),
            admin::list_keys,
        )
        .delete(&v1("/admin/keys/{key_id}"), admin::revoke_key)
        .get(&v1("/works"), works::list_works)
        .post_upload(&v1("/works"), works::register_json)
        .post_upload(&v1("/works/preview/txt"), works::preview_txt)
        .post_upload(&v1("/works/preview/epub"), works::preview_epub)
        .post_upload(&v1("/works/import/txt"), works::import_txt)
        .post_upload(&v1("/works/import/epub"), works::import_epub)
        .get(&v1("/works/{work_id}"), works::get_work)
        .put_upload(&v1("/works/{work_id}"), works::replace_work)
        .delete(&v1("/works/{work_id}"), works::delete_work)
        .get(
            &v1("/works/{work_id}/chapters/{chapter_id}"),
            works::get_chapter,
        )
        .post_upload(&v1("/works/{work_id}/articles"), works::add_article)
        .post_upload(
            &v1("/works/{work_id}/articles/bulk"),
            works::add_articles_bulk,
        )
        .get(
            &v1("/works/{work_id}/licensed-hosts"),
            works::get_licensed_hosts,
        )
        .put(
            &v1("/works/{work_id}/licensed-hosts"),
            works::put_licensed_hosts,
        )
        .get(&v1("/sites"), sites::list_sites)
        .post(&v1("/sites"), sites::create_site)
        .get(&v1("/sites/{site_id}"), sites::get_site)
        .patch(&v1("/sites/{site_id}"), sites::update_site)
        .post(&v1("/sites/{site_id}/crawls"), sites::start_crawl)
        .get(&v1("/sites/{site_id}/crawls"), sites::list_crawls)
        .get(&v1("/crawls/{run_id}"), sites::get_crawl)
        .get(&v1("/matches"), matches::list_matches)
        .get(&v1("/matches/{match_id}"), matches::get_match)
        .get(&v1("/matches/{match_id}/evidence"), matches::get_evidence)
        .post(&v1("/matches/{match_id}/review"), matches::review_match)
        .get(&v1("/reports"), reports::list_reports)
        .post(&v1("/reports"), reports::create_report)
        .get(&v1("/reports/{report_id}"), reports::get_report)
        .get(&v1("/reports/{report_id}/artifact"), reports::get_artifact)
}
