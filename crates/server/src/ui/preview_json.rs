//! The JSON file of the console's upload preview. It used to be read into a
//! `serde_json::Value` on the async runtime and counted afterwards: 60 MiB
//! of tiny chapters peaked at 2.5 GB while every other request waited. Now
//! it is read into typed chapters on the upload pool, and the preview's
//! chapter limit stops the parse as soon as it is passed.

use serde::Deserialize;

use super::work_editor::MAX_PREVIEW_CHAPTERS;
use copyhound_intake::formats::limits::deserialize_at_most;

/// A work as the preview reads it; other fields are ignored.
#[derive(Debug, Deserialize)]
pub(super) struct PreviewWork {
    pub title: Option<String>,
    pub author: Option<String>,
    pub kind: Option<String>,
    pub id: Option<String>,
    #[serde(default, deserialize_with = "chapters_within_limit")]
    pub chapters: Vec<PreviewChapter>,
}

/// A chapter as the preview reads it.
#[derive(Debug, Deserialize)]
pub(super) struct PreviewChapter {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub text: String,
}

fn chapters_within_limit<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<PreviewChapter>, D::Error> {
    deserialize_at_most(deserializer, MAX_PREVIEW_CHAPTERS, || {
        format!(
            "more than {MAX_PREVIEW_CHAPTERS} chapters, more than the console edits; register this file through the API"
        )
    })
}

/// Parses the uploaded `filename` (blocking work: run it on the upload pool).
pub(super) fn parse(bytes: &[u8], filename: &str) -> copyhound_core::Result<PreviewWork> {
    serde_json::from_slice(bytes).map_err(|error| {
        copyhound_core::Error::invalid(format!("{filename} is not valid JSON: {error}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_past_the_limit_stop_the_parse() {
        let chapter = r#"{"title":"t","text":"x"},"#;
        let body = format!(
            r#"{{"title":"w","extra":[1,2],"chapters":[{}{{"text":"y"}}]}}"#,
            chapter.repeat(MAX_PREVIEW_CHAPTERS)
        );
        let error = parse(body.as_bytes(), "w.json").unwrap_err();
        assert!(
            error.message().contains("more than 2000 chapters"),
            "{error}"
        );
        let body = format!(
            r#"{{"title":"w","chapters":[{}{{"text":"y"}}]}}"#,
            chapter.repeat(MAX_PREVIEW_CHAPTERS - 1)
        );
        let work = parse(body.as_bytes(), "w.json").unwrap();
        assert_eq!(work.chapters.len(), MAX_PREVIEW_CHAPTERS);
        assert_eq!(work.title.as_deref(), Some("w"));
        assert!(parse(b"{\"chapters\": 5}", "w.json").is_err());
    }
}
