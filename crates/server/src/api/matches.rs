//! Matches: filtered listings with keyset pagination, side-by-side evidence with
//! highlighted copied spans, and review decisions with an audit trail.

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use copyhound_core::ids::{ChapterId, MatchId, PublisherId, SiteId, WorkId};
use copyhound_core::model::{Match, MatchStatus, Review, Timestamp};
use copyhound_core::ports::{MatchFilter, MatchFilterInput, Paged};
use copyhound_core::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{IntoParams, ToSchema};

use super::{cursor_schema, limit_schema, page_request};
use crate::AppState;
use crate::api::key_errors;
use crate::auth::PublisherCaller;
use crate::error::{ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody, parse_id};
use crate::openapi::{bounded, date_or_time, id_string, nullable};

/// Comma-separated status names, empty items ignored.
pub const STATUS_LIST_PATTERN: &str = "^(?:new|confirmed|dismissed|licensed|taken_down)?(?:,(?:new|confirmed|dismissed|licensed|taken_down)?)*$";

fn id_param_schema() -> Schema {
    id_string().into()
}

fn status_list_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(STATUS_LIST_PATTERN))
        .into()
}

fn score_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::Number)
        .minimum(Some(0.0))
        .maximum(Some(1.0))
        .into()
}

fn sort_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["newest", "score"]))
        .into()
}

fn time_param_schema() -> Schema {
    date_or_time()
}

fn note_schema() -> Schema {
    nullable(bounded(MAX_NOTE_CHARS))
}
use crate::evidence::{Segment, segments};
use copyhound_report::warc::{MatchRef, evidence_package};

/// Longest review note, characters.
pub const MAX_NOTE_CHARS: usize = 2000;

/// Query of `GET /matches`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MatchQuery {
    /// Only this work.
    #[param(schema_with = id_param_schema)]
    pub work_id: Option<String>,
    /// Only chapters with this id (of `work_id` when given, else of any work).
    #[param(schema_with = id_param_schema)]
    pub chapter_id: Option<String>,
    /// Only this site.
    #[param(schema_with = id_param_schema)]
    pub site_id: Option<String>,
    /// Comma-separated statuses (`new,confirmed`).
    #[param(schema_with = status_list_schema)]
    pub status: Option<String>,
    /// Only scores at least this, in [0, 1].
    #[param(schema_with = score_schema)]
    pub min_score: Option<f32>,
    /// Only matches last seen at or after (RFC 3339 or `YYYY-MM-DD`).
    #[param(schema_with = time_param_schema)]
    pub since: Option<String>,
    /// Only matches first seen before (RFC 3339 or `YYYY-MM-DD`).
    #[param(schema_with = time_param_schema)]
    pub before: Option<String>,
    /// `newest` (last seen, the default) or `score` (highest first).
    #[param(schema_with = sort_schema)]
    pub sort: Option<String>,
    /// Cursor from the previous page (its `next`).
    #[param(schema_with = cursor_schema)]
    pub after: Option<String>,
    /// Page size: default 50, at least 1; values over 200 are capped at 200.
    #[param(schema_with = limit_schema)]
    pub limit: Option<u64>,
}

/// Returns the store filter of a listing query, scoped to `publisher_id`
/// (the rules are `MatchFilter::parse`'s, shared with the CLI).
pub fn match_filter(publisher_id: &PublisherId, query: &MatchQuery) -> ApiResult<MatchFilter> {
    let input = MatchFilterInput {
        work_id: query.work_id.as_deref(),
        chapter_id: query.chapter_id.as_deref(),
        site_id: query.site_id.as_deref(),
        status: query.status.as_deref(),
        min_score: query.min_score,
        since: query.since.as_deref(),
        before: query.before.as_deref(),
        sort: query.sort.as_deref(),
    };
    Ok(MatchFilter::parse(publisher_id, &input)?)
}

/// A match in listings (no spans or evidence).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct MatchSummary {
    /// Id.
    pub id: MatchId,
    /// The copying page's URL.
    pub page_url: String,
    /// Its site.
    pub site_id: SiteId,
    /// The copied work.
    pub work_id: WorkId,
    /// The copied chapter.
    pub chapter_id: ChapterId,
    /// Confidence.
    pub score: f32,
    /// Share of the chapter on the page.
    pub chapter_coverage: f32,
    /// Share of the page that is copied.
    pub page_coverage: f32,
    /// Review state.
    pub status: MatchStatus,
    /// First detection.
    #[schema(value_type = String, format = DateTime)]
    pub first_seen: Timestamp,
    /// Latest detection.
    #[schema(value_type = String, format = DateTime)]
    pub last_seen: Timestamp,
}

impl From<&Match> for MatchSummary {
    fn from(found: &Match) -> Self {
        Self {
            id: found.id.clone(),
            page_url: found.page_url.clone(),
            site_id: found.site_id.clone(),
            work_id: found.work_id.clone(),
            chapter_id: found.chapter_id.clone(),
            score: found.score,
            chapter_coverage: found.chapter_coverage,
            page_coverage: found.page_coverage,
            status: found.status,
            first_seen: found.first_seen,
            last_seen: found.last_seen,
        }
    }
}

/// `GET /api/v1/matches`: newest first, filtered, keyset-paginated.
#[utoipa::path(
    get,
    path = "/api/v1/matches",
    tag = "matches",
    params(MatchQuery),
    responses(
        (status = 200, description = "One page of matches", body = Paged<MatchSummary>),
        (status = 400, description = "Invalid query", body = ErrorBody),
        key_errors::PublisherKey,
    )
)]
pub async fn list_matches(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiQuery(query): ApiQuery<MatchQuery>,
) -> ApiResult<Json<Paged<MatchSummary>>> {
    let filter = match_filter(&caller.publisher_id, &query)?;
    let page = page_request(query.after.clone(), query.limit)?;
    let found = state
        .ports
        .matches
        .list_matches(&filter, &page)
        .await
        .map_err(super::cursor_error)?;
    Ok(Json(Paged {
        items: found.items.iter().map(MatchSummary::from).collect(),
        next: found.next,
    }))
}

/// A match with its context: titles and both texts cut into highlighted segments.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct MatchDetail {
    /// The match, evidence excerpts and review history included.
    #[serde(flatten)]
    pub found: Match,
    /// Title of the copied work; `null` if the work was deleted since.
    pub work_title: Option<String>,
    /// Title of the copied chapter; `null` if it was deleted since.
    pub chapter_title: Option<String>,
    /// Title of the page; `null` if the page is no longer stored.
    pub page_title: Option<String>,
    /// The chapter text, copied spans marked.
    pub chapter_segments: Vec<Segment>,
    /// The page text, copied spans marked.
    pub page_segments: Vec<Segment>,
}

fn optional<T>(outcome: Result<T>) -> Result<Option<T>> {
    match outcome {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Returns the detail of a match of `publisher_id` (`NotFound` for other tenants).
pub async fn load_match_detail(
    state: &AppState,
    publisher_id: &PublisherId,
    match_id: &MatchId,
) -> Result<MatchDetail> {
    let found = state
        .ports
        .matches
        .get_match(publisher_id, match_id)
        .await?;
    let work = optional(
        state
            .ports
            .works
            .get_work(publisher_id, &found.work_id)
            .await,
    )?;
    let chapter = match &work {
        Some(_) => optional(
            state
                .ports
                .works
                .get_chapter(&found.work_id, &found.chapter_id)
                .await,
        )?,
        None => None,
    };
    let page = optional(state.ports.pages.get_page(&found.page_id).await)?;
    let chapter_segments = chapter
        .as_ref()
        .map(|chapter| {
            segments(
                &chapter.text,
                found
                    .spans
                    .iter()
                    .map(|span| (span.chapter_start, span.chapter_end)),
            )
        })
        .unwrap_or_default();
    let page_segments = page
        .as_ref()
        .map(|page| {
            segments(
                &page.text,
                found
                    .spans
                    .iter()
                    .map(|span| (span.page_start, span.page_end)),
            )
        })
        .unwrap_or_default();
    Ok(MatchDetail {
        work_title: work.map(|work| work.title),
        chapter_title: chapter.map(|chapter| chapter.title),
        page_title: page.map(|page| page.title),
        chapter_segments,
        page_segments,
        found,
    })
}

/// `GET /api/v1/matches/{match_id}`: the match, its evidence and highlighted texts.
#[utoipa::path(
    get,
    path = "/api/v1/matches/{match_id}",
    tag = "matches",
    params(("match_id" = MatchId, Path, description = "The match")),
    responses(
        (status = 200, description = "The match", body = MatchDetail),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such match", body = ErrorBody),
    )
)]
pub async fn get_match(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(match_id): ApiPath<String>,
) -> ApiResult<Json<MatchDetail>> {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    Ok(Json(
        load_match_detail(&state, &caller.publisher_id, &match_id).await?,
    ))
}

/// Which file of a match's evidence package to return.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidencePart {
    /// The WARC file (`application/warc`).
    #[default]
    Warc,
    /// Its manifest: digests, capture time, the match (JSON).
    Manifest,
}

/// Query of `GET /api/v1/matches/{match_id}/evidence`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EvidenceQuery {
    /// `warc` (default) or `manifest`.
    #[param(inline)]
    pub part: Option<EvidencePart>,
}

/// `GET /api/v1/matches/{match_id}/evidence`: the match's evidence package,
/// the captured response of its page as a WARC/1.1 file or that file's
/// manifest. Both derive from the stored capture alone (the package is dated
/// by the capture), so the manifest's digests describe the WARC served.
#[utoipa::path(
    get,
    path = "/api/v1/matches/{match_id}/evidence",
    tag = "matches",
    params(("match_id" = MatchId, Path, description = "The match"), EvidenceQuery),
    responses(
        (status = 200, description = "The WARC file or its manifest",
            content(
                (String = "application/warc"),
                (Object = "application/json"),
            )
        ),
        (status = 400, description = "Invalid id or query", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such match, or its page is no longer stored", body = ErrorBody),
    )
)]
pub async fn get_evidence(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(match_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<EvidenceQuery>,
) -> ApiResult<Response> {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    Ok(evidence(
        &state,
        &caller.publisher_id,
        &match_id,
        query.part.unwrap_or_default(),
    )
    .await?)
}

/// One file of a match's evidence package, as the API and the UI serve it.
pub async fn evidence(
    state: &AppState,
    publisher_id: &PublisherId,
    match_id: &MatchId,
    part: EvidencePart,
) -> Result<Response> {
    let found = state
        .ports
        .matches
        .get_match(publisher_id, match_id)
        .await?;
    let page = state
        .ports
        .pages
        .get_page(&found.page_id)
        .await
        .map_err(|err| {
            if err.kind() == ErrorKind::NotFound {
                Error::not_found(format!("the stored page of match {match_id}"))
            } else {
                err
            }
        })?;
    let file = format!("match-{match_id}.warc");
    let captured = page.last_seen;
    let package = evidence_package(&[(page, vec![MatchRef::of(&found)])], &file, captured);
    Ok(match part {
        EvidencePart::Warc => (
            [
                (header::CONTENT_TYPE, "application/warc".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{file}\""),
                ),
            ],
            package.warc,
        )
            .into_response(),
        EvidencePart::Manifest => Json(package.manifest).into_response(),
    })
}

/// `GET /api/v1/matches/{match_id}/evidence/bundle`: the match's evidence
/// bundle, a tar archive that verifies itself offline (`copyhound evidence
/// verify`): the WARC, a capture log, screenshots, a SHA-256 manifest and an
/// RFC 3161 time-stamp over it from the configured TSA.
#[utoipa::path(
    get,
    path = "/api/v1/matches/{match_id}/evidence/bundle",
    tag = "matches",
    params(("match_id" = MatchId, Path, description = "The match")),
    responses(
        (status = 200, description = "The bundle (a tar archive)",
            content((Vec<u8> = "application/x-tar"))),
        (status = 400, description = "Invalid id", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such match, or its page is no longer stored", body = ErrorBody),
        (status = 502, description = "The time-stamping authority failed, or its answer did not verify", body = ErrorBody),
        (status = 503, description = "Evidence bundles are not configured (`evidence.tsa_url`)", body = ErrorBody),
    )
)]
pub async fn get_evidence_bundle(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(match_id): ApiPath<String>,
) -> ApiResult<Response> {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    Ok(evidence_bundle(&state, &caller.publisher_id, &match_id).await?)
}

/// A match's evidence bundle as the API and the console serve it
/// (`Unavailable` when `evidence.tsa_url` is not set).
pub async fn evidence_bundle(
    state: &AppState,
    publisher_id: &PublisherId,
    match_id: &MatchId,
) -> Result<Response> {
    // The match first: another tenant's id is not found, configured or not.
    let found = state
        .ports
        .matches
        .get_match(publisher_id, match_id)
        .await?;
    let Some(maker) = &state.evidence else {
        return Err(Error::new(
            ErrorKind::Unavailable,
            "evidence bundles are not configured: set evidence.tsa_url",
        ));
    };
    let archive = maker.bundle(state.ports.pages.as_ref(), &[found]).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"match-{match_id}-evidence.tar\""),
            ),
        ],
        archive,
    )
        .into_response())
}

/// A review decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewAction {
    /// The page infringes.
    Confirm,
    /// Not an infringement.
    Dismiss,
    /// The site is licensed.
    MarkLicensed,
    /// The page was taken down.
    MarkTakenDown,
    /// Back to `new`.
    Reopen,
}

impl ReviewAction {
    /// Returns the status the action sets.
    pub fn status(self) -> MatchStatus {
        match self {
            ReviewAction::Confirm => MatchStatus::Confirmed,
            ReviewAction::Dismiss => MatchStatus::Dismissed,
            ReviewAction::MarkLicensed => MatchStatus::Licensed,
            ReviewAction::MarkTakenDown => MatchStatus::TakenDown,
            ReviewAction::Reopen => MatchStatus::New,
        }
    }
}

/// Body of `POST /matches/{match_id}/review`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewBody {
    /// The decision.
    pub action: ReviewAction,
    /// Free-text note for the audit trail; blank or `null`: none.
    #[schema(schema_with = note_schema)]
    pub note: Option<String>,
}

/// Records a review by `caller` (who = key id, when = now) and returns the match.
pub async fn review(
    state: &AppState,
    caller: &PublisherCaller,
    match_id: &MatchId,
    body: ReviewBody,
) -> Result<Match> {
    if body
        .note
        .as_ref()
        .is_some_and(|note| note.chars().count() > MAX_NOTE_CHARS)
    {
        return Err(Error::invalid(format!(
            "`note` is longer than {MAX_NOTE_CHARS} characters"
        )));
    }
    let note = body
        .note
        .map(|note| note.trim().to_string())
        .filter(|note| !note.is_empty());
    let review = Review {
        status: body.action.status(),
        by: caller.reviewer(),
        at: Utc::now(),
        note,
    };
    let updated = state
        .ports
        .matches
        .review_match(&caller.publisher_id, match_id, &review)
        .await?;
    tracing::info!(match_id = %match_id, status = review.status.as_str(), by = %caller.key_id, "match reviewed");
    Ok(updated)
}

/// `POST /api/v1/matches/{match_id}/review`: records a decision in the audit trail.
#[utoipa::path(
    post,
    path = "/api/v1/matches/{match_id}/review",
    tag = "matches",
    params(("match_id" = MatchId, Path, description = "The match")),
    request_body = ReviewBody,
    responses(
        (status = 200, description = "The match with the review appended", body = Match),
        (status = 400, description = "Invalid id or body", body = ErrorBody),
        key_errors::PublisherKey,
        (status = 404, description = "No such match", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
    )
)]
pub async fn review_match(
    State(state): State<AppState>,
    caller: PublisherCaller,
    ApiPath(match_id): ApiPath<String>,
    ApiJson(body): ApiJson<ReviewBody>,
) -> ApiResult<Json<Match>> {
    let match_id = parse_id::<MatchId>("match_id", &match_id)?;
    Ok(Json(review(&state, &caller, &match_id, body).await?))
}
