//! Reads a text or HTML file the way the crawler reads a page: bytes are decoded
//! by BOM, declared charset or detection (UTF-8, GBK, Big5 ...), and HTML is
//! reduced to its main text, so `copyhound fingerprint page.html` fingerprints
//! what the pipeline would.

use std::path::Path;

use anyhow::Context;
use copyhound_core::model::ExtractionHints;
use copyhound_crawler::{charset, extract};

/// A file's text and how it was read.
#[derive(Debug)]
pub struct InputText {
    /// The text (main text for HTML).
    pub text: String,
    /// The charset used.
    pub charset: String,
    /// Whether the file was HTML.
    pub html: bool,
}

/// Reads and decodes `path`.
pub fn read(path: &Path) -> anyhow::Result<InputText> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let decoded = charset::decode_body(&bytes, None, None);
    let html = looks_like_html(path, &decoded.text);
    let text = if html {
        extract::extract(&decoded.text, &ExtractionHints::default()).text
    } else {
        decoded.text
    };
    Ok(InputText {
        text,
        charset: decoded.charset,
        html,
    })
}

fn looks_like_html(path: &Path, text: &str) -> bool {
    let extension = path
        .extension()
        .and_then(|ext| ext.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(extension.as_str(), "html" | "htm" | "shtml" | "xhtml") {
        return true;
    }
    let head: String = text
        .chars()
        .take(512)
        .collect::<String>()
        .to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}
