//! The works routes: JSON, TXT and EPUB uploads, news articles, previews,
//! re-registration, deletion and the licensed-hosts list. Each route parses
//! its request and hands it to `copyhound_intake::works`, where registration
//! is checked and written (the same function `works import` and the console
//! use); the worker fingerprints, indexes and back-fills against pages
//! already crawled.

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use copyhound_core::ids::{ChapterId, WorkId};
use copyhound_core::model::{Chapter, Language, Work, WorkKind};
use copyhound_core::ports::Paged;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{IntoParams, ToSchema};

use super::{ListQuery, page_request};
use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{
    ApiBytes, ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody, json_from_bytes, parse_id,
};
use crate::openapi::{bounded, id_string, non_blank, non_blank_text_pattern, nullable};
use crate::uploads::UploadPool;
use copyhound_intake::formats::limits::{
    MAX_AUTHOR_CHARS, MAX_CHAPTER_CHARS, MAX_CHAPTER_TITLE_CHARS, MAX_TITLE_CHARS,
};
use copyhound_intake::formats::{self, ChapterDraft, ChapterPreview, HeadingPattern};

pub use copyhound_intake::works::MAX_ARTICLE_TITLE_CHARS;
use copyhound_intake::works::NewArticle;

fn nullable_id_schema() -> Schema {
    nullable(id_string())
}

fn id_param_schema() -> Schema {
    id_string().into()
}

fn title_schema() -> Schema {
    non_blank(MAX_TITLE_CHARS).into()
}

fn author_schema() -> Schema {
    bounded(MAX_AUTHOR_CHARS).into()
}

fn chapter_title_schema() -> Schema {
    bounded(MAX_CHAPTER_TITLE_CHARS).into()
}

fn article_title_schema() -> Schema {
    non_blank(MAX_ARTICLE_TITLE_CHARS).into()
}

fn body_text_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_CHAPTER_CHARS))
        .pattern(Some(non_blank_text_pattern()))
        .description(Some(
            "Body text: paragraphs separated by newlines, at least one non-blank line",
        ))
        .into()
}

fn heading_pattern_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(formats::MAX_PATTERN_LEN))
        .format(Some(SchemaFormat::Custom("heading-regex".to_string())))
        .description(Some(
            "Heading regex (Rust `regex` syntax) matched against short lines; blank: the built-in \
             第X章/第X回/第X节/Chapter N pattern",
        ))
        .into()
}

fn licensed_hosts_schema() -> Schema {
    ArrayBuilder::new()
        .items(host_schema())
        .max_items(Some(service::MAX_LICENSED_HOSTS))
        .into()
}

fn host_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(
            copyhound_intake::formats::limits::MAX_HOST_INPUT_BYTES,
        ))
        .pattern(Some(HOST_PATTERN))
        .description(Some(
            "A host name (`licensed.example`); the server also reduces a URL to its host",
        ))
}

/// A DNS host name whose last label starts with a letter (never an IP address).
pub const HOST_PATTERN: &str = "^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$";

mod service;

pub use service::{
    ChapterSummary, FingerprintProgress, WorkDetail, WorkMeta, load_work_detail, normalize_hosts,
    register_work, registrant,
};

/// One chapter of a JSON registration.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChapterInput {
    /// Chapter id, unique within the work; `c_0001`... by position when absent or `null`.
    #[schema(schema_with = nullable_id_schema)]
    pub id: Option<String>,
    /// Title; `Chapter N` when blank.
    #[serde(default)]
    #[schema(schema_with = chapter_title_schema)]
    pub title: String,
    /// Body text.
    #[schema(schema_with = body_text_schema)]
    pub text: String,
}

/// Body of `POST /works` and `PUT /works/{work_id}`. A novel needs at least
/// one chapter; a news work may start empty and take articles later.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterWork {
    /// Work id (publisher-chosen, e.g. `w417`); generated when absent or `null`.
    /// On `PUT` it may only repeat the path id.
    #[schema(schema_with = nullable_id_schema)]
    pub id: Option<String>,
    /// Title.
    #[schema(schema_with = title_schema)]
    pub title: String,
    /// Author.
    #[serde(default)]
    #[schema(schema_with = author_schema)]
    pub author: String,
    /// `novel` (default) or `news`.
    #[serde(default = "default_kind")]
    #[schema(default = "novel")]
    pub kind: WorkKind,
    /// `zh` or `en`; guessed from the text when absent or `null`.
    pub language: Option<Language>,
    /// Hosts licensed to carry the work.
    #[serde(default)]
    #[schema(schema_with = licensed_hosts_schema)]
    pub licensed_hosts: Vec<String>,
    /// Chapters in reading order (articles of a news work; may be empty for news).
    #[serde(default, deserialize_with = "chapters_within_limit")]
    #[schema(max_items = 50000)]
    pub chapters: Vec<ChapterInput>,
}

/// Reads at most [`MAX_CHAPTERS`](formats::limits::MAX_CHAPTERS) chapters, refusing more while parsing.
fn chapters_within_limit<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ChapterInput>, D::Error> {
    formats::limits::deserialize_at_most(deserializer, formats::limits::MAX_CHAPTERS, || {
        format!("more than {} chapters", formats::limits::MAX_CHAPTERS)
    })
}

/// Parses a JSON work on the upload pool: a body of up to
/// `server.max_upload_bytes` is CPU work that must not hold an async worker.
async fn parse_work_off_runtime(
    pool: &UploadPool,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<RegisterWork> {
    Ok(pool
        .run(move || json_from_bytes::<RegisterWork>(&headers, &body).map_err(|error| error.0))
        .await?)
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

/// `GET /api/v1/works`: the publisher's works.
#[utoipa::path(
    get,
    path = "/api/v1/works",
    tag = "works",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of works", body = Paged<Work>),
        (status = 400, description = "Invalid query", body = ErrorBody),
        key_errors::PublisherKey,
    )
)]
pub async fn list_works(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Work>>> {
    let page = page_request(query.after, query.limit)?;
    Ok(Json(
        state
            .ports
            .works
            .list_works(&caller.publisher_id, &page)
            .await
            .map_err(super::cursor_error)?,
    ))
}

/// `POST /api/v1/works`: registers a work from JSON. Sending the same work
/// again under the same id answers the stored work.
#[utoipa::path(
    post,
    path = "/api/v1/works",
    tag = "works",
    request_body = RegisterWork,
    responses(
        (status = 201, description = "Registered; fingerprinting is queued", body = WorkDetail),
        (status = 400, description = "Invalid body", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 409, description = "The id is in use by another work", body = ErrorBody),
        (status = 413, description = "Body or chapter text too large", body = ErrorBody),
    )
)]
pub async fn register_json(
    State(state): State<AppState>,
    caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    headers: axum::http::HeaderMap,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    let body = parse_work_off_runtime(&pool, headers, body).await?;
    register_parsed(&state, &caller, body).await
}

/// Registers a work already parsed (the API's body, the console's form).
pub(crate) async fn register_parsed(
    state: &AppState,
    caller: &PublisherCaller,
    body: RegisterWork,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    let meta = service::meta_of_request(&body)?;
    let drafts = drafts_of(body.chapters)?;
    let detail = register_work(state, caller, meta, drafts, None, Vec::new()).await?;
    Ok((StatusCode::CREATED, Json(detail)))
}

/// Query of the EPUB import.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// Work id; generated when absent.
    #[param(schema_with = id_param_schema)]
    pub id: Option<String>,
    /// Title; defaults to the package title (`dc:title`).
    #[param(schema_with = title_schema)]
    pub title: Option<String>,
    /// Author; defaults to the package creator.
    #[param(schema_with = author_schema)]
    pub author: Option<String>,
    /// `novel` (default) or `news`.
    #[param(inline)]
    pub kind: Option<WorkKind>,
    /// `zh` or `en`; guessed when absent.
    #[param(inline)]
    pub language: Option<Language>,
}

/// Query of the TXT import.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImportTxtQuery {
    /// Work id; generated when absent.
    #[param(schema_with = id_param_schema)]
    pub id: Option<String>,
    /// Title.
    #[param(schema_with = title_schema, required = true)]
    pub title: String,
    /// Author.
    #[param(schema_with = author_schema)]
    pub author: Option<String>,
    /// `novel` (default) or `news`.
    #[param(inline)]
    pub kind: Option<WorkKind>,
    /// `zh` or `en`; guessed when absent.
    #[param(inline)]
    pub language: Option<Language>,
    /// Heading regex; the built-in 第X章/第X回/第X节/Chapter N pattern when absent.
    #[param(schema_with = heading_pattern_schema)]
    pub pattern: Option<String>,
}

impl ImportTxtQuery {
    /// Returns the metadata fields shared with the EPUB import.
    fn metadata(&self) -> ImportQuery {
        ImportQuery {
            id: self.id.clone(),
            title: Some(self.title.clone()),
            author: self.author.clone(),
            kind: self.kind,
            language: self.language,
        }
    }
}

/// Query of the TXT preview.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PreviewTxtQuery {
    /// Heading regex; the built-in 第X章/第X回/第X节/Chapter N pattern when absent.
    #[param(schema_with = heading_pattern_schema)]
    pub pattern: Option<String>,
}

/// A split preview.
#[derive(Debug, Serialize, ToSchema)]
pub struct SplitPreview {
    /// Detected encoding (TXT) or `UTF-8` (EPUB).
    #[schema(value_type = String)]
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
    let decoded = formats::decode_text(bytes)?;
    let (chapters, split_warnings) = formats::split_txt_chapters(&decoded.text, &pattern)?;
    if chapters.is_empty() {
        return Err(copyhound_core::Error::invalid("the file holds no text"));
    }
    let mut warnings = decoded.warnings;
    warnings.extend(split_warnings);
    Ok((decoded.encoding, chapters, warnings))
}

/// Splits a TXT upload on the upload pool, off the async runtime.
pub(crate) async fn split_txt_off_runtime(
    pool: &UploadPool,
    body: axum::body::Bytes,
    pattern: Option<String>,
) -> ApiResult<(&'static str, Vec<ChapterDraft>, Vec<String>)> {
    Ok(pool
        .run(move || split_txt(&body, pattern.as_deref()))
        .await?)
}

/// Parses an EPUB upload on the upload pool, off the async runtime.
pub(crate) async fn parse_epub_off_runtime(
    pool: &UploadPool,
    body: axum::body::Bytes,
) -> ApiResult<formats::EpubBook> {
    Ok(pool.run(move || formats::parse_epub(&body)).await?)
}

/// `POST /api/v1/works/preview/txt`: shows how a TXT upload would be split.
#[utoipa::path(
    post,
    path = "/api/v1/works/preview/txt",
    tag = "works",
    params(PreviewTxtQuery),
    request_body(content = TxtFile, content_type = "text/plain", description = "The file: UTF-8, GBK or GB18030 (detected)"),
    responses(
        (status = 200, description = "The split; nothing is stored", body = SplitPreview),
        (status = 400, description = "Invalid pattern, or the file holds no text", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 413, description = "File too large", body = ErrorBody),
        (status = 503, description = "Every upload worker is busy; retry later", body = ErrorBody),
    )
)]
pub async fn preview_txt(
    _caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiQuery(query): ApiQuery<PreviewTxtQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<Json<SplitPreview>> {
    let (encoding, chapters, warnings) = split_txt_off_runtime(&pool, body, query.pattern).await?;
    let chapters = formats::preview(&chapters);
    Ok(Json(SplitPreview {
        encoding,
        title: None,
        author: None,
        chapters,
        warnings,
    }))
}

/// `POST /api/v1/works/preview/epub`: shows the chapters of an EPUB upload.
#[utoipa::path(
    post,
    path = "/api/v1/works/preview/epub",
    tag = "works",
    request_body(content = EpubFile, content_type = "application/epub+zip", description = "The EPUB file"),
    responses(
        (status = 200, description = "The chapters in spine order; nothing is stored", body = SplitPreview),
        (status = 400, description = "Not a readable EPUB", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 413, description = "File too large, or decompressing past the limit", body = ErrorBody),
        (status = 503, description = "Every upload worker is busy; retry later", body = ErrorBody),
    )
)]
pub async fn preview_epub(
    _caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<Json<SplitPreview>> {
    let book = parse_epub_off_runtime(&pool, body).await?;
    let chapters = formats::preview(&book.chapters);
    Ok(Json(SplitPreview {
        encoding: "UTF-8",
        title: book.title,
        author: book.author,
        chapters,
        warnings: book.warnings,
    }))
}

/// `POST /api/v1/works/import/txt`: registers a novel from one TXT file.
#[utoipa::path(
    post,
    path = "/api/v1/works/import/txt",
    tag = "works",
    params(ImportTxtQuery),
    request_body(content = TxtFile, content_type = "text/plain", description = "The file: UTF-8, GBK or GB18030 (detected)"),
    responses(
        (status = 201, description = "Registered; fingerprinting is queued", body = WorkDetail),
        (status = 400, description = "Invalid query, or the file holds no text", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 409, description = "The id is in use by another work", body = ErrorBody),
        (status = 413, description = "File or chapter too large", body = ErrorBody),
        (status = 503, description = "Every upload worker is busy; retry later", body = ErrorBody),
    )
)]
pub async fn import_txt(
    State(state): State<AppState>,
    caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiQuery(query): ApiQuery<ImportTxtQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    // Metadata first: a bad field is refused before the file is parsed.
    let meta = service::meta_of_query(
        &query.metadata(),
        &query.title,
        query.author.as_deref().unwrap_or_default(),
    )?;
    let (encoding, chapters, warnings) =
        split_txt_off_runtime(&pool, body, query.pattern.clone()).await?;
    let drafts = chapters.into_iter().map(|draft| (None, draft)).collect();
    let mut detail = register_work(&state, &caller, meta, drafts, None, warnings).await?;
    detail.encoding = Some(encoding);
    Ok((StatusCode::CREATED, Json(detail)))
}

/// `POST /api/v1/works/import/epub`: registers a novel from an EPUB.
#[utoipa::path(
    post,
    path = "/api/v1/works/import/epub",
    tag = "works",
    params(ImportQuery),
    request_body(content = EpubFile, content_type = "application/epub+zip", description = "The EPUB file"),
    responses(
        (status = 201, description = "Registered; fingerprinting is queued", body = WorkDetail),
        (status = 400, description = "Invalid query, not a readable EPUB, or no title", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 409, description = "The id is in use by another work", body = ErrorBody),
        (status = 413, description = "File or chapter too large", body = ErrorBody),
        (status = 503, description = "Every upload worker is busy; retry later", body = ErrorBody),
    )
)]
pub async fn import_epub(
    State(state): State<AppState>,
    caller: PublisherCaller,
    Extension(pool): Extension<UploadPool>,
    ApiQuery(query): ApiQuery<ImportQuery>,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<WorkDetail>)> {
    let book = parse_epub_off_runtime(&pool, body).await?;
    let title = query.title.clone().or(book.title).ok_or_else(|| {
        ApiError::invalid("the EPUB has no dc:title; pass `title` as a query parameter")
    })?;
    let author = query.author.clone().or(book.author).unwrap_or_default();
    let meta = service::meta_of_query(&query, &title, &author)?;
    let drafts = book
        .chapters
        .into_iter()
        .map(|draft| (None, draft))
        .collect();
    let detail = register_work(&state, &caller, meta, drafts, None, book.warnings).await?;
    Ok((StatusCode::CREATED, Json(detail)))
}

/// `GET /api/v1/works/{work_id}`: the work, its chapters and fingerprint progress.
#[utoipa::path(
    get,
    path = "/api/v1/works/{work_id}",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    responses(
        (status = 200, description = "The work", body = WorkDetail),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
    )
)]
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
#[utoipa::path(
    put,
    path = "/api/v1/works/{work_id}",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    request_body = RegisterWork,
    responses(
        (status = 200, description = "Re-registered; fingerprinting is queued", body = WorkDetail),
        (status = 400, description = "Invalid id or body", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
        (status = 413, description = "Body or chapter text too large", body = ErrorBody),
    )
)]
pub async fn replace_work(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    Extension(pool): Extension<UploadPool>,
    headers: axum::http::HeaderMap,
    ApiBytes(body): ApiBytes,
) -> ApiResult<Json<WorkDetail>> {
    let body = parse_work_off_runtime(&pool, headers, body).await?;
    replace_parsed(&state, &caller, &work_id, body).await
}

/// Replaces a work with one already parsed (the API's body, the console's editor).
pub(crate) async fn replace_parsed(
    state: &AppState,
    caller: &PublisherCaller,
    work_id: &str,
    body: RegisterWork,
) -> ApiResult<Json<WorkDetail>> {
    let work_id = parse_id::<WorkId>("work_id", work_id)?;
    if body.id.as_deref().is_some_and(|id| id != work_id.as_str()) {
        return Err(ApiError::invalid(
            "the body `id` differs from the path; omit it or repeat the path id",
        ));
    }
    let existing = state
        .ports
        .works
        .get_work(&caller.publisher_id, &work_id)
        .await?;
    let mut meta = service::meta_of_request(&body)?;
    meta.id = Some(work_id);
    let drafts = drafts_of(body.chapters)?;
    Ok(Json(
        register_work(state, caller, meta, drafts, Some(existing), Vec::new()).await?,
    ))
}

/// `DELETE /api/v1/works/{work_id}`: deletes the work, its chapters and its matches.
#[utoipa::path(
    delete,
    path = "/api/v1/works/{work_id}",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
    )
)]
pub async fn delete_work(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
) -> ApiResult<StatusCode> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    copyhound_intake::works::delete_work(&state.ports, service::registrant(&caller), &work_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/v1/works/{work_id}/chapters/{chapter_id}`: one chapter with its text.
#[utoipa::path(
    get,
    path = "/api/v1/works/{work_id}/chapters/{chapter_id}",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work"), ("chapter_id" = ChapterId, Path, description = "The chapter")),
    responses(
        (status = 200, description = "The chapter", body = Chapter),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work or chapter", body = ErrorBody),
    )
)]
pub async fn get_chapter(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath((work_id, chapter_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<Chapter>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let chapter_id = parse_id::<ChapterId>("chapter_id", &chapter_id)?;
    state
        .ports
        .works
        .get_work(&caller.publisher_id, &work_id)
        .await?;
    Ok(Json(
        state.ports.works.get_chapter(&work_id, &chapter_id).await?,
    ))
}

/// One news article.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ArticleInput {
    /// Article (chapter) id; next `c_NNNN` when absent or `null`.
    #[schema(schema_with = nullable_id_schema)]
    pub id: Option<String>,
    /// Headline.
    #[schema(schema_with = article_title_schema)]
    pub title: String,
    /// Body text.
    #[schema(schema_with = body_text_schema)]
    pub text: String,
}

/// What adding articles did.
#[derive(Debug, Serialize, ToSchema)]
pub struct ArticlesAdded {
    /// The news work.
    pub work_id: WorkId,
    /// Ids of the stored articles, in input order.
    pub chapter_ids: Vec<ChapterId>,
}

/// `POST /api/v1/works/{work_id}/articles`: adds one article to a news work.
#[utoipa::path(
    post,
    path = "/api/v1/works/{work_id}/articles",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    request_body = ArticleInput,
    responses(
        (status = 201, description = "Stored; fingerprinting is queued", body = ArticlesAdded),
        (status = 400, description = "Invalid id or body", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
        (status = 409, description = "The article id exists in the work, or the work is a novel", body = ErrorBody),
        (status = 413, description = "Body or article text too large", body = ErrorBody),
    )
)]
pub async fn add_article(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    headers: axum::http::HeaderMap,
    ApiBytes(body): ApiBytes,
) -> ApiResult<(StatusCode, Json<ArticlesAdded>)> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    // The work first: an unknown work is 404 whatever the body holds.
    state
        .ports
        .works
        .get_work(&caller.publisher_id, &work_id)
        .await?;
    let article = json_from_bytes::<ArticleInput>(&headers, &body)?;
    let added = add_articles(&state, &caller, &work_id, vec![article]).await?;
    Ok((StatusCode::CREATED, Json(added)))
}

/// Appends articles through intake, their ids parsed by position.
async fn add_articles(
    state: &AppState,
    caller: &PublisherCaller,
    work_id: &WorkId,
    articles: Vec<ArticleInput>,
) -> ApiResult<ArticlesAdded> {
    let mut parsed = Vec::with_capacity(articles.len());
    for (position, article) in articles.into_iter().enumerate() {
        let id = article
            .id
            .as_deref()
            .map(|raw| parse_id::<ChapterId>(&format!("article {} id", position + 1), raw))
            .transpose()?;
        parsed.push(NewArticle {
            id,
            title: article.title,
            text: article.text,
        });
    }
    let chapter_ids = copyhound_intake::works::add_articles(
        &state.ports,
        service::registrant(caller),
        work_id,
        parsed,
    )
    .await?;
    Ok(ArticlesAdded {
        work_id: work_id.clone(),
        chapter_ids,
    })
}

/// Most articles of one bulk request.
pub const MAX_BULK_ARTICLES: usize = 10_000;

/// `POST /api/v1/works/{work_id}/articles/bulk`: adds articles given as JSON lines;
/// one bad line refuses the whole batch, naming the line.
#[utoipa::path(
    post,
    path = "/api/v1/works/{work_id}/articles/bulk",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    request_body(content = JsonLines, content_type = "application/x-ndjson", description = "One article object (as for `POST .../articles`) per line, at most 10000"),
    responses(
        (status = 201, description = "Stored; fingerprinting is queued", body = ArticlesAdded),
        (status = 400, description = "Invalid id or a bad line (named)", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
        (status = 409, description = "An article id exists in the work, or the work is a novel", body = ErrorBody),
        (status = 413, description = "Body or article text too large", body = ErrorBody),
    )
)]
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
    let added = add_articles(&state, &caller, &work_id, articles).await?;
    Ok((StatusCode::CREATED, Json(added)))
}

/// Body of the licensed-hosts routes.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicensedHosts {
    /// Host names (`example.com`); URLs are reduced to their host.
    #[schema(schema_with = licensed_hosts_schema)]
    pub hosts: Vec<String>,
}

/// `GET /api/v1/works/{work_id}/licensed-hosts`.
#[utoipa::path(
    get,
    path = "/api/v1/works/{work_id}/licensed-hosts",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    responses(
        (status = 200, description = "The hosts licensed to carry the work", body = LicensedHosts),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
    )
)]
pub async fn get_licensed_hosts(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
) -> ApiResult<Json<LicensedHosts>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let work = state
        .ports
        .works
        .get_work(&caller.publisher_id, &work_id)
        .await?;
    Ok(Json(LicensedHosts {
        hosts: work.licensed_hosts,
    }))
}

/// `PUT /api/v1/works/{work_id}/licensed-hosts`: replaces the list.
#[utoipa::path(
    put,
    path = "/api/v1/works/{work_id}/licensed-hosts",
    tag = "works",
    params(("work_id" = WorkId, Path, description = "The work")),
    request_body = LicensedHosts,
    responses(
        (status = 200, description = "The stored list (normalized)", body = LicensedHosts),
        (status = 400, description = "Invalid id or host", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such work", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn put_licensed_hosts(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(work_id): ApiPath<String>,
    ApiJson(body): ApiJson<LicensedHosts>,
) -> ApiResult<Json<LicensedHosts>> {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let hosts = copyhound_intake::works::set_licensed_hosts(
        &state.ports,
        service::registrant(&caller),
        &work_id,
        &body.hosts,
    )
    .await?;
    Ok(Json(LicensedHosts { hosts }))
}

/// Request body of the TXT routes: the file's bytes.
#[derive(Debug)]
pub struct TxtFile;

impl utoipa::PartialSchema for TxtFile {
    fn schema() -> utoipa::openapi::RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(non_blank_text_pattern()))
            .description(Some("Text with at least one non-blank line"))
            .into()
    }
}

impl ToSchema for TxtFile {}

/// Request body of the EPUB routes: the file's bytes.
#[derive(Debug)]
pub struct EpubFile;

impl utoipa::PartialSchema for EpubFile {
    fn schema() -> utoipa::openapi::RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::Custom("binary".to_string())))
            .description(Some("An EPUB 2 or 3 file (a zip with a package document)"))
            .into()
    }
}

impl ToSchema for EpubFile {}

/// Request body of the bulk article route: one JSON article per line.
#[derive(Debug)]
pub struct JsonLines;

impl utoipa::PartialSchema for JsonLines {
    fn schema() -> utoipa::openapi::RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("\\{"))
            .description(Some(
                "JSON lines: one `{\"id\"?, \"title\", \"text\"}` object per line; blank lines are skipped",
            ))
            .into()
    }
}

impl ToSchema for JsonLines {}

#[doc(hidden)]
pub use copyhound_intake::works::owner_key;
