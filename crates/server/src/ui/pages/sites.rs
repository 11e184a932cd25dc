//! The sites list and a site's page: where a publisher names the sites it
//! suspects, tunes how they are crawled, and sees what each one copied.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use chrono::Utc;
use copyhound_core::ids::{SiteId, WorkId};
use copyhound_core::ports::MatchFilter;
use serde::Deserialize;
use serde_json::json;

use super::{LISTED, UiResult, first_page, refused};
use crate::AppState;
use crate::api::owned_site;
use crate::auth::PublisherCaller;
use crate::error::parse_id;
use crate::ui::{UiCaller, UiError, render};

pub(in crate::ui) async fn sites(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    let sites = state
        .ports
        .sites
        .list_sites(Some(&caller.publisher_id), &first_page(LISTED))
        .await?;
    Ok(render(
        "sites.html",
        json!({ "publisher": caller.publisher_id, "sites": sites.items, "site": null, "form": {} }),
    ))
}

/// The "add a site" form; empty fields take the API's defaults.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
pub(in crate::ui) struct SiteForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    seeds: String,
    #[serde(default)]
    schedule: String,
    #[serde(default)]
    max_pages_per_run: String,
    #[serde(default)]
    rate_limit_per_second: String,
    #[serde(default)]
    audience: String,
    /// `auto`, `never` or `chromium`; empty keeps what the site has.
    #[serde(default)]
    render: String,
}

impl SiteForm {
    /// The API's body (of `POST` or `PATCH`), or the field that is not a number.
    fn to_body<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        let pages = optional_number::<u32>("pages per run", &self.max_pages_per_run)?;
        let rate = optional_number::<f64>("requests per second", &self.rate_limit_per_second)?;
        if rate.is_some_and(|rate| !rate.is_finite()) {
            return Err("requests per second must be a number".into());
        }
        let audience = optional_number::<u64>("visits a month", &self.audience)?;
        let mut body = json!({
            "name": self.name,
            "seeds": self.seeds.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>(),
            "schedule": self.schedule.trim(),
            "max_pages_per_run": pages,
            "rate_limit_per_second": rate,
            "audience": audience,
        });
        if !self.render.trim().is_empty() {
            body["extraction"] = json!({ "render": self.render.trim() });
        }
        serde_json::from_value(body).map_err(|error| error.to_string())
    }
}

/// A form's number field: empty is `None`; anything else must parse.
fn optional_number<N: std::str::FromStr>(label: &str, raw: &str) -> Result<Option<N>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse()
        .map(Some)
        .map_err(|_| format!("{label} must be a number"))
}

pub(in crate::ui) async fn create_site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<SiteForm>,
) -> UiResult {
    let created = match form.to_body::<crate::api::sites::CreateSite>() {
        Ok(body) => crate::api::sites::create_site(
            State(state.clone()),
            caller.clone(),
            crate::error::ApiJson(body),
        )
        .await
        .map(|(_, axum::Json(site))| site)
        .map_err(|error| error.0.message().to_string()),
        Err(message) => Err(message),
    };
    match created {
        Ok(site) => Ok(Redirect::to(&format!("/ui/sites/{}", site.id)).into_response()),
        Err(message) => {
            // The form again, with what was typed and why it was refused.
            let sites = state
                .ports
                .sites
                .list_sites(Some(&caller.publisher_id), &first_page(LISTED))
                .await?;
            Ok(refused(render(
                "sites.html",
                json!({ "publisher": caller.publisher_id, "sites": sites.items, "site": null,
                        "form": form, "error": message }),
            )))
        }
    }
}

/// Most matches a site page reads to say what the site copied.
const SITE_SAMPLE: usize = 2000;

/// What a site copied: per chapter, the best coverage, the pages, first and last seen.
async fn copied_by_site(
    state: &AppState,
    publisher_id: &copyhound_core::ids::PublisherId,
    site_id: &SiteId,
) -> Result<serde_json::Value, UiError> {
    let filter = MatchFilter {
        site_id: Some(site_id.clone()),
        ..MatchFilter::of_publisher(publisher_id.clone())
    };
    let mut found = Vec::new();
    let mut page = first_page(200);
    loop {
        let listed = state.ports.matches.list_matches(&filter, &page).await?;
        found.extend(
            listed
                .items
                .into_iter()
                .filter(|m| copyhound_report::is_infringing(m.status)),
        );
        match listed.next {
            Some(next) if found.len() < SITE_SAMPLE => page.after = Some(next),
            next => {
                let truncated = next.is_some();
                let titles = copyhound_report::Titles::load(
                    state.ports.works.as_ref(),
                    publisher_id,
                    found.iter().map(|m| (&m.work_id, &m.chapter_id)),
                )
                .await?;
                return Ok(summarize_copies(&found, &titles, truncated));
            }
        }
    }
}

fn summarize_copies(
    found: &[copyhound_core::model::Match],
    titles: &copyhound_report::Titles,
    truncated: bool,
) -> serde_json::Value {
    #[derive(serde::Serialize)]
    struct Copied {
        work_id: WorkId,
        chapter_id: copyhound_core::ids::ChapterId,
        /// `None` when deleted since: the page shows the id.
        work_title: Option<String>,
        chapter_title: Option<String>,
        coverage: f32,
        pages: usize,
        first_seen: chrono::DateTime<Utc>,
        last_seen: chrono::DateTime<Utc>,
    }
    let mut chapters: BTreeMap<(WorkId, copyhound_core::ids::ChapterId), Copied> = BTreeMap::new();
    let mut pages = std::collections::BTreeSet::new();
    for m in found {
        pages.insert(m.page_id.clone());
        let entry = chapters
            .entry((m.work_id.clone(), m.chapter_id.clone()))
            .or_insert_with(|| Copied {
                work_id: m.work_id.clone(),
                chapter_id: m.chapter_id.clone(),
                work_title: titles.work(&m.work_id).map(str::to_string),
                chapter_title: titles
                    .chapter(&m.work_id, &m.chapter_id)
                    .map(str::to_string),
                coverage: 0.0,
                pages: 0,
                first_seen: m.first_seen,
                last_seen: m.last_seen,
            });
        entry.coverage = entry.coverage.max(m.chapter_coverage);
        entry.pages += 1;
        entry.first_seen = entry.first_seen.min(m.first_seen);
        entry.last_seen = entry.last_seen.max(m.last_seen);
    }
    let works: std::collections::BTreeSet<&WorkId> =
        chapters.keys().map(|(work, _)| work).collect();
    json!({
        "works": works.len(),
        "pages": pages.len(),
        "chapters": chapters.values().collect::<Vec<_>>(),
        "truncated": truncated,
        "sampled": found.len(),
    })
}

/// Edits a site from its page; a refused edit shows the page again with why.
pub(in crate::ui) async fn edit_site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
    Form(form): Form<SiteForm>,
) -> UiResult {
    let updated = match form.to_body::<crate::api::sites::UpdateSite>() {
        Ok(body) => crate::api::sites::update_site(
            State(state.clone()),
            caller.clone(),
            crate::error::ApiPath(site_id.clone()),
            crate::error::ApiJson(body),
        )
        .await
        .map(|_| ())
        .map_err(|error| error.0),
        Err(message) => Err(copyhound_core::Error::invalid(message)),
    };
    match updated {
        Ok(()) => Ok(Redirect::to(&format!("/ui/sites/{site_id}")).into_response()),
        // Unknown or foreign ids answer as the API does.
        Err(error) if error.kind() != copyhound_core::ErrorKind::InvalidInput => Err(error.into()),
        Err(error) => Ok(refused(
            site_page(&state, &caller, &site_id, Some(error.message().to_string())).await?,
        )),
    }
}

pub(in crate::ui) async fn crawl_site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
) -> UiResult {
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    let run = crate::api::sites::enqueue_crawl(&state, &site).await?;
    tracing::info!(site_id = %site_id, run_id = %run.id, by = %caller.key_id, "crawl enqueued from the console");
    Ok(Redirect::to(&format!("/ui/sites/{site_id}")).into_response())
}

#[derive(Debug, Deserialize)]
pub(in crate::ui) struct EnabledForm {
    enabled: bool,
}

pub(in crate::ui) async fn set_site_enabled(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
    Form(form): Form<EnabledForm>,
) -> UiResult {
    let raw = site_id.clone();
    let body: crate::api::sites::UpdateSite =
        serde_json::from_value(json!({ "enabled": form.enabled }))
            .map_err(|error| copyhound_core::Error::invalid(error.to_string()))?;
    let axum::Json(_) = crate::api::sites::update_site(
        State(state),
        caller,
        crate::error::ApiPath(raw),
        crate::error::ApiJson(body),
    )
    .await?;
    Ok(Redirect::to(&format!("/ui/sites/{site_id}")).into_response())
}

/// The site page's query: `notify=1` looks up who to notify.
#[derive(Debug, Default, Deserialize)]
pub(in crate::ui) struct SitePageQuery {
    #[serde(default)]
    notify: Option<String>,
}

pub(in crate::ui) async fn site(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(site_id): axum::extract::Path<String>,
    axum::extract::Query(query): axum::extract::Query<SitePageQuery>,
) -> UiResult {
    if query.notify.is_none() {
        return site_page(&state, &caller, &site_id, None).await;
    }
    let site_id = parse_id::<SiteId>("site_id", &site_id)?;
    let site = owned_site(&state, &caller.publisher_id, &site_id).await?;
    let notify = match crate::api::sites::lookup_recipients(&state, &site).await {
        Ok(recipients) => {
            json!({ "recipients": recipients, "primary": recipients.primary_email() })
        }
        Err(error) => json!({ "error": error.message() }),
    };
    site_page_with(&state, &caller, site, None, Some(notify)).await
}

/// A site's page: its settings (and the edit form), what it copied, its runs.
async fn site_page(
    state: &AppState,
    caller: &PublisherCaller,
    site_id: &str,
    error: Option<String>,
) -> UiResult {
    let site_id = parse_id::<SiteId>("site_id", site_id)?;
    let site = owned_site(state, &caller.publisher_id, &site_id).await?;
    site_page_with(state, caller, site, error, None).await
}

/// The same for a site already read, with who to notify when looked up.
async fn site_page_with(
    state: &AppState,
    caller: &PublisherCaller,
    site: copyhound_core::model::Site,
    error: Option<String>,
    notify: Option<serde_json::Value>,
) -> UiResult {
    let site_id = site.id.clone();
    let runs = state
        .ports
        .sites
        .list_crawl_runs(&site_id, &first_page(20))
        .await?;
    let copied = copied_by_site(state, &caller.publisher_id, &site_id).await?;
    Ok(render(
        "sites.html",
        json!({ "publisher": caller.publisher_id, "site": site, "runs": runs.items, "copied": copied,
                "error": error, "notify": notify, "notify_configured": state.recipients.is_some() }),
    ))
}
