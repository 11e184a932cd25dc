//! The work editor: the upload preview (a TXT, EPUB or JSON file split into
//! chapters to edit before anything is stored), its confirmation, and the
//! same editor over a registered work. A refused confirmation gives the form
//! back as it was sent, with why beside the field at fault.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use copyhound_core::ErrorKind;
use copyhound_core::ids::WorkId;
use serde_json::json;

use super::front_matter::{self, FrontMatter};
use super::{UiCaller, UiError, render};
use crate::AppState;
use crate::auth::PublisherCaller;
use crate::error::parse_id;
use copyhound_intake::formats;

type UiResult = Result<Response, UiError>;

/// Chapters the console previews for editing; longer works go through the API.
pub(super) const MAX_PREVIEW_CHAPTERS: usize = 2000;
/// Most chapter text the editor echoes in one page, bytes once HTML-escaped:
/// a 30 MiB upload once became a 179 MiB page, on every preview and edit.
pub(crate) const MAX_EDITOR_ECHO_BYTES: usize = 8 << 20;

/// Refuses a work whose chapters the editor would echo past [`MAX_EDITOR_ECHO_BYTES`];
/// `instead` says where such a work is registered or edited.
fn check_editor_echo<'a>(
    texts: impl Iterator<Item = &'a str>,
    instead: &str,
) -> Result<(), UiError> {
    let escaped: usize = texts.map(escaped_len).sum();
    if escaped <= MAX_EDITOR_ECHO_BYTES {
        return Ok(());
    }
    Err(UiError::from(copyhound_core::Error::new(
        copyhound_core::ErrorKind::TooLarge,
        format!(
            "this work's text is {} MiB in the editor, more than the console edits ({} MiB); {instead}",
            escaped >> 20,
            MAX_EDITOR_ECHO_BYTES >> 20
        ),
    )))
}

/// Length of `text` HTML-escaped as the templates escape it.
fn escaped_len(text: &str) -> usize {
    text.bytes()
        .map(|byte| match byte {
            b'<' | b'>' => 4,
            b'&' | b'\'' => 5,
            b'"' | b'/' => 6,
            _ => 1,
        })
        .sum()
}

/// Reads the upload form, splits the file as the API would, and shows the
/// chapters for editing. Nothing is stored.
pub(super) async fn preview_upload(
    UiCaller(caller): UiCaller,
    axum::Extension(pool): axum::Extension<crate::uploads::UploadPool>,
    mut multipart: axum::extract::Multipart,
) -> UiResult {
    let bad = |message: String| UiError::from(copyhound_core::Error::invalid(message));
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut file: Option<(String, axum::body::Bytes)> = None;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|error| bad(format!("upload: {error}")))?
    {
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            let filename = field.file_name().unwrap_or("upload").to_string();
            let bytes = field
                .bytes()
                .await
                .map_err(|error| bad(format!("upload: {error}")))?;
            file = Some((filename, bytes));
        } else {
            let value = field
                .text()
                .await
                .map_err(|error| bad(format!("upload: {error}")))?;
            fields.insert(name, value);
        }
    }
    let (filename, bytes) = file.ok_or_else(|| bad("choose a file to upload".into()))?;
    let field = |name: &str| {
        fields
            .get(name)
            .map(|value| value.trim().to_string())
            .unwrap_or_default()
    };
    let lower = filename.to_lowercase();
    let starts_json = bytes.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'{');
    let (format, encoding, mut title, mut author, mut kind, mut id, chapters, warnings) =
        if lower.ends_with(".epub") || bytes.starts_with(b"PK\x03\x04") {
            let book = crate::api::works::parse_epub_off_runtime(&pool, bytes).await?;
            let chapters: Vec<(String, String)> = book
                .chapters
                .into_iter()
                .map(|draft| (draft.title, draft.text))
                .collect();
            (
                "EPUB",
                None,
                book.title,
                book.author,
                None,
                None,
                chapters,
                book.warnings,
            )
        } else if lower.ends_with(".json") || starts_json {
            let name = filename.clone();
            let work = pool
                .run(move || super::preview_json::parse(&bytes, &name))
                .await?;
            let chapters = work
                .chapters
                .into_iter()
                .map(|chapter| (chapter.title, chapter.text))
                .collect();
            (
                "JSON",
                None,
                work.title,
                work.author,
                work.kind,
                work.id,
                chapters,
                Vec::new(),
            )
        } else {
            let pattern = Some(field("pattern")).filter(|pattern| !pattern.is_empty());
            let txt = pool
                .run(move || split_txt(&bytes, pattern.as_deref()))
                .await?;
            (
                "TXT",
                Some(txt.encoding),
                txt.front_matter.title,
                txt.front_matter.author,
                None,
                None,
                txt.chapters,
                txt.warnings,
            )
        };
    if chapters.len() > MAX_PREVIEW_CHAPTERS {
        return Err(bad(format!(
            "{} chapters are more than the console edits ({MAX_PREVIEW_CHAPTERS}); register this file through the API",
            chapters.len()
        )));
    }
    check_editor_echo(
        chapters.iter().map(|(_, text)| text.as_str()),
        "register this file through the API (POST /api/v1/works/import/txt or /works/import/epub) or with `copyhound works import`",
    )?;
    for (name, slot) in [("title", &mut title), ("author", &mut author)] {
        let typed = field(name);
        if !typed.is_empty() {
            *slot = Some(typed);
        }
    }
    if kind.is_none() {
        kind = Some(field("kind")).filter(|kind| !kind.is_empty());
    }
    if id.is_none() {
        id = Some(field("id")).filter(|id| !id.is_empty());
    }
    let chapters: Vec<serde_json::Value> = chapters
        .into_iter()
        .map(|(title, text)| json!({ "title": title, "chars": text.chars().count(), "text": text }))
        .collect();
    Ok(render(
        "work_preview.html",
        json!({
            "publisher": caller.publisher_id,
            "filename": filename,
            "format": format,
            "encoding": encoding,
            "title": title.unwrap_or_default(),
            "author": author.unwrap_or_default(),
            "kind": kind.unwrap_or_else(|| "novel".into()),
            "id": id,
            "chapters": chapters,
            "warnings": warnings,
        }),
    ))
}

/// A TXT upload as the preview shows it.
struct TxtPreview {
    encoding: &'static str,
    front_matter: FrontMatter,
    /// (title, text) of each chapter.
    chapters: Vec<(String, String)>,
    warnings: Vec<String>,
}

/// Decodes a TXT upload, reads its front matter and splits the rest as the
/// API's TXT import would (blocking work: run it on the upload pool).
fn split_txt(bytes: &[u8], pattern: Option<&str>) -> copyhound_core::Result<TxtPreview> {
    let pattern = formats::HeadingPattern::from_option(pattern)?;
    let decoded = formats::decode_text(bytes)?;
    let (front_matter, lines, rest) = front_matter::split(&decoded.text);
    // Blank lines in its place keep the line numbers of warnings the file's.
    let text = if lines == 0 {
        std::borrow::Cow::Borrowed(rest)
    } else {
        std::borrow::Cow::Owned("\n".repeat(lines) + rest)
    };
    let (drafts, split_warnings) = formats::split_txt_chapters(&text, &pattern)?;
    if drafts.is_empty() {
        return Err(copyhound_core::Error::invalid("the file holds no text"));
    }
    let mut warnings = decoded.warnings;
    warnings.extend(split_warnings);
    Ok(TxtPreview {
        encoding: decoded.encoding,
        front_matter,
        chapters: drafts
            .into_iter()
            .map(|draft| (draft.title, draft.text))
            .collect(),
        warnings,
    })
}

/// The chapters of a preview or edit form: kept ones, merged into the one
/// before where asked, as (title, text).
fn chapters_from_form(form: &BTreeMap<String, String>) -> Result<Vec<(String, String)>, UiError> {
    let count: usize = form
        .get("count")
        .and_then(|count| count.parse().ok())
        .filter(|count| *count <= MAX_PREVIEW_CHAPTERS)
        .ok_or_else(|| {
            UiError::from(copyhound_core::Error::invalid(
                "the chapter form is incomplete; open it again",
            ))
        })?;
    let on = |key: String| form.get(&key).is_some_and(|value| value == "on");
    let mut chapters: Vec<(String, String)> = Vec::new();
    for index in 0..count {
        if !on(format!("keep_{index}")) {
            continue;
        }
        let title = form
            .get(&format!("title_{index}"))
            .cloned()
            .unwrap_or_default();
        let text = form
            .get(&format!("text_{index}"))
            .cloned()
            .unwrap_or_default();
        match chapters.last_mut() {
            Some(previous) if on(format!("merge_{index}")) => {
                previous.1.push('\n');
                previous.1.push_str(&text);
            }
            _ => chapters.push((title, text)),
        }
    }
    Ok(chapters)
}

/// The API body of an editor form (upload preview or work editor): its
/// title, author, kind and chapters, with `extra` fields (an id, or what a
/// replaced work keeps). Returns it with its number of chapters.
fn work_from_form(
    form: &BTreeMap<String, String>,
    extra: serde_json::Value,
) -> Result<(crate::api::works::RegisterWork, usize), UiError> {
    let chapters = chapters_from_form(form)?;
    let value = |key: &str| {
        form.get(key)
            .map(|value| value.trim().to_string())
            .unwrap_or_default()
    };
    let mut body = json!({
        "title": value("title"),
        "author": value("author"),
        "kind": value("kind"),
        "chapters": chapters.iter().map(|(title, text)| json!({ "title": title, "text": text })).collect::<Vec<_>>(),
    });
    if let (Some(body), serde_json::Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    let body = serde_json::from_value(body)
        .map_err(|error| UiError::from(copyhound_core::Error::invalid(error.to_string())))?;
    Ok((body, chapters.len()))
}

/// Registers the previewed work as edited: kept chapters in order, each
/// "merge" chapter appended to the one before. A refused id (taken, or not
/// an id) gives the form back as it was sent, with why beside the id; other
/// refusals of what was typed, with why above the form.
pub(super) async fn confirm_upload(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    Form(form): Form<BTreeMap<String, String>>,
) -> UiResult {
    let id = form
        .get("id")
        .map(|id| id.trim())
        .filter(|id| !id.is_empty());
    let (body, chapters) = work_from_form(&form, json!({ "id": id }))?;
    let registered = match id.map(|raw| parse_id::<WorkId>("id", raw)) {
        Some(Err(refused)) => Err(refused),
        _ => crate::api::works::register_parsed(&state, &caller, body).await,
    };
    let error = match registered {
        Ok((_, axum::Json(detail))) => {
            tracing::info!(work_id = %detail.work.id, by = %caller.key_id, chapters, "work registered from the console");
            return Ok(Redirect::to(&format!("/ui/works/{}", detail.work.id)).into_response());
        }
        Err(error) => error.0,
    };
    let id_refused = match error.kind() {
        ErrorKind::Conflict => true,
        ErrorKind::InvalidInput | ErrorKind::TooLarge => !is_valid_id(id),
        _ => return Err(error.into()),
    };
    let (id_error, form_error) = if id_refused {
        (Some(error.message()), None)
    } else {
        (None, Some(error.message()))
    };
    let mut response = form_again(&caller, &form, id_error, form_error)?;
    *response.status_mut() = crate::error::status_of(error.kind());
    Ok(response)
}

/// Whether a typed work id is one.
fn is_valid_id(id: Option<&str>) -> bool {
    id.is_none_or(|raw| parse_id::<WorkId>("id", raw).is_ok())
}

/// The upload preview again, as its form was sent: every chapter with its
/// title, text, and whether it was dropped or merged; `id_error` beside the
/// id, `form_error` above the form.
fn form_again(
    caller: &PublisherCaller,
    form: &BTreeMap<String, String>,
    id_error: Option<&str>,
    form_error: Option<&str>,
) -> UiResult {
    let value = |key: &str| form.get(key).map(String::as_str).unwrap_or_default();
    let count: usize = value("count").parse().unwrap_or(0);
    let chapters: Vec<serde_json::Value> = (0..count.min(MAX_PREVIEW_CHAPTERS))
        .map(|index| {
            let text = value(&format!("text_{index}"));
            json!({
                "title": value(&format!("title_{index}")),
                "text": text,
                "chars": text.chars().count(),
                "dropped": value(&format!("keep_{index}")) != "on",
                "merged": value(&format!("merge_{index}")) == "on",
            })
        })
        .collect();
    check_editor_echo(
        (0..count.min(MAX_PREVIEW_CHAPTERS)).map(|index| value(&format!("text_{index}"))),
        "register this file through the API",
    )?;
    let encoding = Some(value("encoding")).filter(|encoding| !encoding.is_empty());
    Ok(render(
        "work_preview.html",
        json!({
            "publisher": caller.publisher_id,
            "filename": value("filename"),
            "format": value("format"),
            "encoding": encoding,
            "title": value("title").trim(),
            "author": value("author").trim(),
            "kind": value("kind"),
            "id": value("id").trim(),
            "chapters": chapters,
            "warnings": [],
            "id_error": id_error,
            "error": form_error,
        }),
    ))
}

/// The chapter editor over a registered work: its title, author, kind and
/// chapters, editable as in the upload preview.
pub(super) async fn edit_work(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
) -> UiResult {
    let work_id = parse_id::<WorkId>("work_id", &work_id)?;
    let work = state
        .ports
        .works
        .get_work(&caller.publisher_id, &work_id)
        .await?;
    let chapters = state.ports.works.list_chapters(&work_id).await?;
    if chapters.len() > MAX_PREVIEW_CHAPTERS {
        return Err(UiError::from(copyhound_core::Error::invalid(format!(
            "this work has more than {MAX_PREVIEW_CHAPTERS} chapters; replace it through the API (PUT /api/v1/works/{work_id})"
        ))));
    }
    check_editor_echo(
        chapters.iter().map(|chapter| chapter.text.as_str()),
        &format!("replace it through the API (PUT /api/v1/works/{work_id})"),
    )?;
    let chapters: Vec<serde_json::Value> = chapters
        .iter()
        .map(|chapter| json!({ "title": chapter.title, "text": chapter.text, "chars": chapter.chars }))
        .collect();
    Ok(render(
        "work_preview.html",
        json!({
            "publisher": caller.publisher_id,
            "editing": true,
            "title": work.title,
            "author": work.author,
            "kind": work.kind,
            "id": work.id,
            "chapters": chapters,
            "warnings": [],
        }),
    ))
}

/// Replaces a work's title, author, kind and chapters from the editor;
/// its licensed hosts and language stay.
pub(super) async fn replace_work(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
    axum::extract::Path(work_id): axum::extract::Path<String>,
    Form(form): Form<BTreeMap<String, String>>,
) -> UiResult {
    let id = parse_id::<WorkId>("work_id", &work_id)?;
    let work = state
        .ports
        .works
        .get_work(&caller.publisher_id, &id)
        .await?;
    let (body, chapters) = work_from_form(
        &form,
        json!({ "language": work.language, "licensed_hosts": work.licensed_hosts }),
    )?;
    let _replaced = crate::api::works::replace_parsed(&state, &caller, &work_id, body).await?;
    tracing::info!(work_id = %id, by = %caller.key_id, chapters, "work replaced from the console");
    Ok(Redirect::to(&format!("/ui/works/{id}")).into_response())
}
