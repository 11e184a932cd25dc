//! Registering works: JSON, TXT and EPUB uploads, news articles, previews,
//! re-registration, deletion and the licensed-hosts list.
//!
//! Registration stores the work and its chapters (fingerprint status `pending`)
//! and enqueues one `FingerprintWork` task; the worker fingerprints, indexes and
//! follows with a back-fill against pages already crawled. Deleting a work
//! removes it and its chapters, and drops the chapters' entries from the index
//! when the node has one; stored fingerprint records are left to the next index
//! rebuild (they are keyed by chapter and never match a deleted work).

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use copyhound_core::ids::{ChapterId, WorkId};
use copyhound_core::model::{Chapter, FingerprintOwner, Language, Work, WorkKind};
use copyhound_core::ports::Paged;
use serde::{Deserialize, Serialize};

use super::{ListQuery, page_request};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::error::{ApiBytes, ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, parse_id};
use crate::register::{self, ChapterDraft, ChapterPreview, HeadingPattern};
use crate::uploads::UploadPool;

mod service;

pub use service::{
    ChapterSummary, FingerprintProgress, WorkDetail, WorkMeta, load_work_detail, normalize_hosts,
    register_work,
};

/// One chapter of a JSON registration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChapterInput {
    /// Chapter id; `c_0001`... by position when absent.
    pub id: Option<String>,
    /// Title; `Chapter N` when empty.
    #[serde(default)]
    pub title: String,
    /// Body text.
    pub text: String,
}

/// Body of `POST /works` and `PUT /works/{work_id}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterWork {
    /// Work id (publisher-chosen, e.g. `w417`); generated when absent.
    pub id: Option<String>,
    /// Title.
    pub title: String,
    /// Author.
    #[serde(default)]
    pub author: String,
    /// `novel` (default) or `news`.
    #[serde(default = "default_kind")]
    pub kind: WorkKind,
    /// `zh` or `en`; guessed from the text when absent.
    pub language: Option<Language>,
    /// Hosts licensed to carry the work.
    #[serde(default)]
    pub licensed_hosts: Vec<String>,
    /// Chapters in reading order (articles of a news work; may be empty for news).
    #[serde(default)]
    pub chapters: Vec<ChapterInput>,
}

fn default_kind() -> WorkKind {
    WorkKind::Novel
}

fn drafts_of(chapters: Vec<ChapterInput>) -> ApiResult<Vec<(Option<ChapterId>, ChapterDraft)>> {
    chapters
        .into_iter()
        .enumerate()
        .map(|(position, input)| {
            let id = match &input.id {
                Some(raw) => Some(parse_id::<ChapterId>(
                    &format!("chapters[{position}].id"),
                    raw,
                )?),
                None => None,
            };
            Ok((
                id,
                ChapterDraft {
                    title: input.title,
                    text: input.text,
                },
            ))
        })
        .collect()
}

/// `GET /api/v1/works`.
pub async fn list_works(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Work>>> {
    let page = page_request(query.after, query.limit)?;
    Ok(Json(
        state
            .works
            .list_works(&caller.publisher_id, &page)
            .await
            .map_err(super::cursor_error)?,
    ))
}

/// `POST /api/v1/works`: registers a work from JSON.
pub async fn register_json(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiJson(body): ApiJson<RegisterWork>,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    let meta = WorkMeta::from_request(&body)?;
    let drafts = drafts_of(body.chapters)?;
    let detail = register_work(&state, &caller, meta, drafts, None, Vec::new()).await?;
    Ok((StatusCode::CREATED, Json(detail)))
}

/// Query of the TXT/EPUB previews and imports.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportQuery {
    /// Work id; generated when absent.
    pub id: Option<String>,
    /// Title (TXT: required; EPUB: defaults to the package title).
    pub title: Option<String>,
    /// Author (EPUB: defaults to the package creator).
    pub author: Option<String>,
    /// `novel` (default) or `news`.
    pub kind: Option<WorkKind>,
    /// `zh` or `en`; guessed when absent.
    pub language: Option<Language>,
    /// TXT heading regex; the built-in 第X章/第X回/第X节/Chapter N pattern when absent.
    pub pattern: Option<String>,
}

/// A split preview.
#[derive(Debug, Serialize)]
pub struct SplitPreview {
    /// Detected encoding (TXT) or `UTF-8` (EPUB).
    pub encoding: &'static str,
    /// Title found in the file (EPUB).
    pub title: Option<String>,
    /// Author found in the file (EPUB).
    pub author: Option<String>,
    /// The chapters the import would register.
    pub chapters: Vec<ChapterPreview>,
    /// Oddities to check before committing.
    pub warnings: Vec<String>,
}

/// Decodes and splits a TXT upload (blocking work: run it on the upload pool).
fn split_txt(
    bytes: &[u8],
    pattern: Option<&str>,
) -> copyhound_core::Result<(&'static str, Vec<ChapterDraft>, Vec<String>)> {
    let pattern = HeadingPattern::from_option(pattern)?;
    let decoded = register::decode_text(bytes)?;
    let (chapters, split_warnings) = register::split_txt_chapters(&decoded.text, &pattern)?;
    if chapters.is_empty() {
        return Err(copyhound_core::Error::invalid("the file holds no text"));
    }
    let mut warnings = decoded.warnings;
    warnings.extend(split_warnings);
    Ok((decoded.encoding, chapters, warnings))
}

/// Splits a TXT upload on the upload pool, off the async runtime.
async fn split_txt_off_runtime(
    pool: &UploadPool,
    body: axum::body::Bytes,
    pattern: Option<String>,
) -> ApiResult<(&'static str, Vec<ChapterDraft>, Vec<String>)> {
    Ok(pool
        .run(move || split_txt(&body, pattern.as_deref()))
        .await?)
}

/// Parses an EPUB upload on the upload pool, off the async runtime.
async fn parse_epub_off_runtime(
    pool: &UploadPool,
    body: axum::body::Bytes,
) -> ApiResult<register::EpubBook> {
    Ok(pool.run(move || register::parse_epub(&body)).await?)
}

/// `POST /api/v1/works/preview/txt`: shows how a TXT upload would be split.
pub async fn preview_txt(
    _caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiQuery(query): ApiQuery<ImportQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<Json<SplitPreview>> {
    let (encoding, chapters, warnings) = split_txt_off_runtime(&pool, body, query.pattern).await?;
    let chapters = register::preview(&chapters);
    Ok(Json(SplitPreview {
        encoding,
        title: None,
        author: None,
        chapters,
        warnings,
    }))
}

/// `POST /api/v1/works/preview/epub`: shows the chapters of an EPUB upload.
pub async fn preview_epub(
    _caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<Json<SplitPreview>> {
    let book = parse_epub_off_runtime(&pool, body).await?;
    let chapters = register::preview(&book.chapters);
    Ok(Json(SplitPreview {
        encoding: "UTF-8",
        title: book.title,
        author: book.author,
        chapters,
        warnings: book.warnings,
    }))
}

/// `POST /api/v1/works/import/txt`: registers a novel from one TXT file.
pub async fn import_txt(
    State(state): State<AppState>,
    caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiQuery(query): ApiQuery<ImportQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    let title = query
        .title
        .clone()
        .ok_or_else(|| ApiError::invalid("`title` query parameter is required"))?;
    // Metadata first: a bad field is refused before the file is parsed.
    let meta = WorkMeta::from_query(&query, title, query.author.clone().unwrap_or_default())?;
    let (encoding, chapters, warnings) =
        split_txt_off_runtime(&pool, body, query.pattern.clone()).await?;
    let drafts = chapters.into_iter().map(|draft| (None, draft)).collect();
    let mut detail = register_work(&state, &caller, meta, drafts, None, warnings).await?;
    detail.encoding = Some(encoding);
    Ok((StatusCode::CREATED, Json(detail)))
}

/// `POST /api/v1/works/import/epub`: registers a novel from an EPUB.
pub async fn import_epub(
    State(state): State<AppState>,
    caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiQuery(query): ApiQuery<ImportQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    if query.pattern.is_some() {
        return Err(ApiError::invalid("`pattern` applies to TXT imports only"));
    }
    let book = parse_epub_off_runtime(&pool, body).await?;
    let title = query.title.clone().or(book.title).ok_or_else(|| {
        ApiError::invalid("the EPUB has no dc:title; pass `title` as a query parameter")
    })?;
    let author = query.author.clone().or(book.author).unwrap_or_default();
    let meta = WorkMeta::from_query(&query, title, author)?;
    let drafts = book
        .chapters
        .into_iter()
        .map(|draft| (None, draft))
        .collect();
    let detail = register_work(&state, &caller, meta, drafts, None, book.warnings).await?;
    Ok((StatusCode::CREATED, Json(detail)))
}

/// `GET /api/v1/works/{work_id}`: the work, its chapters and fingerprint progress.
pub async fn get_work(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
) -> ApiResult<Json<WorkDetail>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    Ok(Json(
        load_work_detail(&state, &caller.publisher_id, &work_id).await?,
    ))
}

/// `PUT /api/v1/works/{work_id}`: re-registers a work (metadata and all chapters).
pub async fn replace_work(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    ApiJson(body): ApiJson<RegisterWork>,
) -> ApiResult<Json<WorkDetail>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    if body.id.as_deref().is_some_and(|id| id != work_id.as_str()) {
        return Err(ApiError::invalid(
            "the body `id` differs from the path; omit it or repeat the path id",
        ));
    }
    let existing = state.works.get_work(&caller.publisher_id, &work_id).await?;
    let mut meta = WorkMeta::from_request(&body)?;
    meta.id = Some(work_id);
    let drafts = drafts_of(body.chapters)?;
    Ok(Json(
        register_work(&state, &caller, meta, drafts, Some(existing), Vec::new()).await?,
    ))
}

/// `DELETE /api/v1/works/{work_id}`.
pub async fn delete_work(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
) -> ApiResult<StatusCode> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    state.works.get_work(&caller.publisher_id, &work_id).await?;
    let chapters = state.works.list_chapters(&work_id).await?;
    // What hangs off the work goes first and the work record last: a delete cut
    // short leaves the work in place, and repeating the call finishes it. Nothing
    // of this work survives for a later owner of the same id to inherit.
    service::unindex_chapters(
        &state,
        &work_id,
        chapters.iter().map(|chapter| chapter.id.clone()),
    )
    .await;
    for chapter in &chapters {
        let owner = FingerprintOwner::Chapter {
            work_id: work_id.clone(),
            chapter_id: chapter.id.clone(),
        };
        state.fingerprints.delete_fingerprints(&owner).await?;
    }
    let matches = state
        .matches
        .delete_matches_of_work(&caller.publisher_id, &work_id)
        .await?;
    state
        .works
        .delete_work(&caller.publisher_id, &work_id)
        .await?;
    tracing::info!(work_id = %work_id, matches, by = %caller.key_id, "work deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/v1/works/{work_id}/chapters/{chapter_id}`: one chapter with its text.
pub async fn get_chapter(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath((work_id, chapter_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<Chapter>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let chapter_id = parse_id::<ChapterId>("chapter_id", &chapter_id)?;
    state.works.get_work(&caller.publisher_id, &work_id).await?;
    Ok(Json(state.works.get_chapter(&work_id, &chapter_id).await?))
}

/// One news article.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArticleInput {
    /// Article (chapter) id; next `c_NNNN` when absent.
    pub id: Option<String>,
    /// Headline.
    pub title: String,
    /// Body text.
    pub text: String,
}

/// What adding articles did.
#[derive(Debug, Serialize)]
pub struct ArticlesAdded {
    /// The news work.
    pub work_id: WorkId,
    /// Ids of the stored articles, in input order.
    pub chapter_ids: Vec<ChapterId>,
}

/// `POST /api/v1/works/{work_id}/articles`: adds one article to a news work.
pub async fn add_article(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    ApiJson(article): ApiJson<ArticleInput>,
) -> ApiResult<(StatusCode, Json<ArticlesAdded>)> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let added = service::add_articles(&state, &caller, &work_id, vec![article]).await?;
    Ok((StatusCode::CREATED, Json(added)))
}

/// Most articles of one bulk request.
pub const MAX_BULK_ARTICLES: usize = 10_000;

/// `POST /api/v1/works/{work_id}/articles/bulk`: adds articles given as JSON lines;
/// one bad line refuses the whole batch, naming the line.
pub async fn add_articles_bulk(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<ArticlesAdded>)> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let text =
        std::str::from_utf8(&body).map_err(|_| ApiError::invalid("JSON lines must be UTF-8"))?;
    let mut articles = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if articles.len() == MAX_BULK_ARTICLES {
            return Err(ApiError::invalid(format!(
                "more than {MAX_BULK_ARTICLES} articles in one request"
            )));
        }
        let article: ArticleInput = serde_json::from_str(line)
            .map_err(|error| ApiError::invalid(format!("line {}: {error}", number + 1)))?;
        articles.push(article);
    }
    if articles.is_empty() {
        return Err(ApiError::invalid("the body holds no JSON lines"));
    }
    let added = service::add_articles(&state, &caller, &work_id, articles).await?;
    Ok((StatusCode::CREATED, Json(added)))
}

/// Body of the licensed-hosts routes.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LicensedHosts {
    /// Host names (`example.com`); URLs are reduced to their host.
    pub hosts: Vec<String>,
}

/// `GET /api/v1/works/{work_id}/licensed-hosts`.
pub async fn get_licensed_hosts(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
) -> ApiResult<Json<LicensedHosts>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let work = state.works.get_work(&caller.publisher_id, &work_id).await?;
    Ok(Json(LicensedHosts {
        hosts: work.licensed_hosts,
    }))
}

/// `PUT /api/v1/works/{work_id}/licensed-hosts`: replaces the list.
pub async fn put_licensed_hosts(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    ApiJson(body): ApiJson<LicensedHosts>,
) -> ApiResult<Json<LicensedHosts>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let mut work = state.works.get_work(&caller.publisher_id, &work_id).await?;
    work.licensed_hosts = normalize_hosts(&body.hosts)?;
    state.works.put_work(&work).await?;
    tracing::info!(work_id = %work_id, by = %caller.key_id, hosts = work.licensed_hosts.len(), "licensed hosts updated");
    Ok(Json(LicensedHosts {
        hosts: work.licensed_hosts,
    }))
}

#[doc(hidden)]
pub fn owner_key(work_id: &WorkId, chapter_id: &ChapterId) -> String {
    FingerprintOwner::Chapter {
        work_id: work_id.clone(),
        chapter_id: chapter_id.clone(),
    }
    .index_key()
}
