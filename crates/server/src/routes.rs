//! The route table of the JSON API, written once: [`with_api_handlers`] lists
//! every handler, and each handler's method and path are those of its
//! `#[utoipa::path]` annotation. The router ([`api_routes`]) and the OpenAPI
//! document ([`crate::openapi::ApiDoc`]) are both built from that list, and
//! [`RouteTable`] records every (method, path) it adds, so a test can hold the
//! document, the router and `docs/api.md` to the same routes. Every route bounds
//! its request body: routes that carry works (JSON registrations, TXT/EPUB
//! files, articles; marked `(upload)` in the list) take up to
//! `server.max_upload_bytes`, every other route [`MAX_BODY_BYTES`].

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter, on};
use utoipa::OpenApi;
use utoipa::openapi::path::Operation;

use crate::AppState;
use crate::api::{
    admin, alerts, matches, policy, profile, releases, report_schedules, reports, sites,
    suggestions, system, works,
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

/// How large a request body a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLimit {
    /// Up to [`MAX_BODY_BYTES`].
    Small,
    /// Work text: up to `server.max_upload_bytes` (the router-wide limit).
    Upload,
}

/// Expands `$then! { module::handler, module::handler (upload), ... }` with
/// every handler of the JSON API: the one list the router and the OpenAPI
/// document are built from. A handler marked `(upload)` takes work text.
macro_rules! with_api_handlers {
    ($then:ident) => {
        $then! {
            system::health,
            system::metrics,
            system::openapi,
            system::me,
            alerts::get_alerts,
            alerts::put_alerts,
            profile::get_profile,
            profile::put_profile,
            policy::get_policy,
            policy::put_policy,
            admin::create_publisher,
            admin::list_publishers,
            admin::create_key,
            admin::list_keys,
            admin::revoke_key,
            works::list_works,
            works::register_json (upload),
            works::preview_txt (upload),
            works::preview_epub (upload),
            works::import_txt (upload),
            works::import_epub (upload),
            works::get_work,
            works::replace_work (upload),
            works::delete_work,
            works::get_chapter,
            works::add_article (upload),
            works::add_articles_bulk (upload),
            works::get_licensed_hosts,
            works::put_licensed_hosts,
            releases::get_release_schedule,
            releases::put_release_schedule,
            sites::list_sites,
            sites::create_site,
            sites::get_site,
            sites::update_site,
            sites::start_crawl,
            sites::list_crawls,
            sites::get_crawl,
            sites::get_recipients,
            suggestions::list_suggestions,
            suggestions::get_suggestion,
            suggestions::accept_suggestion,
            suggestions::dismiss_suggestion,
            suggestions::import_book_sources (upload),
            matches::list_matches,
            matches::get_match,
            matches::get_evidence,
            matches::get_evidence_bundle,
            matches::review_match,
            reports::list_reports,
            reports::create_report,
            reports::get_report,
            reports::get_artifact,
            report_schedules::get_schedules,
            report_schedules::put_schedules,
        }
    };
}
pub(crate) use with_api_handlers;

/// Returns the body limit a handler's `(upload)` mark in the list stands for.
macro_rules! body_limit {
    () => {
        BodyLimit::Small
    };
    (upload) => {
        BodyLimit::Upload
    };
}

impl RouteTable {
    /// Registers `handler` under the method and path of the operation whose id
    /// is `operation_id` (utoipa's default: the handler's name) in `document`.
    fn add_documented<H, T>(
        mut self,
        document: &utoipa::openapi::OpenApi,
        operation_id: &str,
        limit: BodyLimit,
        handler: H,
    ) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let (method, filter, path) = documented_route(document, operation_id)
            .unwrap_or_else(|| panic!("`{operation_id}` has no #[utoipa::path] operation"));
        let method_router: MethodRouter<AppState> = match limit {
            BodyLimit::Small => on(filter, handler).layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
            BodyLimit::Upload => on(filter, handler),
        };
        self.router = self.router.route(&path, method_router);
        self.entries.push((method, path));
        self
    }

    /// Returns the registered (method, path) pairs, paths in OpenAPI `{param}` form.
    pub fn entries(&self) -> &[(&'static str, String)] {
        &self.entries
    }

    /// Returns the router.
    pub fn into_router(self) -> Router<AppState> {
        self.router
    }
}

/// Returns the method (as OpenAPI spells it and as axum filters it) and the
/// path of the one operation of `document` with id `operation_id`.
fn documented_route(
    document: &utoipa::openapi::OpenApi,
    operation_id: &str,
) -> Option<(&'static str, MethodFilter, String)> {
    let is_it = |operation: &Option<Operation>| {
        operation
            .as_ref()
            .is_some_and(|operation| operation.operation_id.as_deref() == Some(operation_id))
    };
    document.paths.paths.iter().find_map(|(path, item)| {
        let method = [
            ("get", MethodFilter::GET, &item.get),
            ("put", MethodFilter::PUT, &item.put),
            ("post", MethodFilter::POST, &item.post),
            ("patch", MethodFilter::PATCH, &item.patch),
            ("delete", MethodFilter::DELETE, &item.delete),
        ]
        .into_iter()
        .find(|(_, _, operation)| is_it(operation));
        method.map(|(name, filter, _)| (name, filter, path.clone()))
    })
}

macro_rules! api_route_table {
    ($($module:ident::$handler:ident $(($limit:ident))?),* $(,)?) => {
        /// Returns every JSON route: `/health`, `/metrics` and `/api/v1/...`,
        /// each handler under the method and path its annotation documents.
        pub fn api_routes() -> RouteTable {
            let document = crate::openapi::ApiDoc::openapi();
            RouteTable::default()
                $(.add_documented(
                    &document,
                    stringify!($handler),
                    body_limit!($($limit)?),
                    $module::$handler,
                ))*
        }
    };
}

with_api_handlers!(api_route_table);
