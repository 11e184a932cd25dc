//! Response headers that keep console pages to themselves. Every console
//! answer carries a Content-Security-Policy that runs only the console's own
//! inline scripts (by hash, computed from the embedded templates, so an
//! injected `<script>` or `onerror=` never runs), posts forms only to this
//! origin, and refuses to be framed (`frame-ancestors 'none'`, plus
//! `X-Frame-Options` for older browsers). Console answers hold tenant data
//! and, once, new keys: none is stored by a browser or proxy cache.
//! `X-Content-Type-Options: nosniff` goes on every answer of the server
//! ([`nosniff`]), so an uploaded or crawled text is never sniffed into HTML,
//! and the JSON API's answers are not stored either.

use std::sync::OnceLock;

use axum::extract::Request;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine;
use sha2::{Digest, Sha256};

/// Middleware of the whole router: `X-Content-Type-Options: nosniff` on
/// every answer, and `Cache-Control: no-store` on the JSON API's unless a
/// handler chose otherwise (they hold tenant data, and new keys once).
pub async fn nosniff(request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with(crate::routes::API_PREFIX);
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if api {
        headers
            .entry(CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-store"));
    }
    response
}

/// Middleware of the console: its policy, no framing, no caching.
pub async fn console(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers: &mut HeaderMap = response.headers_mut();
    headers.insert(CONTENT_SECURITY_POLICY, policy().clone());
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The console's Content-Security-Policy.
fn policy() -> &'static HeaderValue {
    static POLICY: OnceLock<HeaderValue> = OnceLock::new();
    POLICY.get_or_init(|| {
        let hashes: Vec<String> =
            inline_scripts(super::TEMPLATES.iter().map(|(_, source)| *source))
                .iter()
                .map(|script| {
                    let digest = Sha256::digest(script.as_bytes());
                    format!(
                        "'sha256-{}'",
                        base64::engine::general_purpose::STANDARD.encode(digest)
                    )
                })
                .collect();
        let policy = format!(
            "default-src 'none'; script-src 'unsafe-hashes' {}; style-src 'unsafe-inline'; \
             img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
             base-uri 'none'",
            hashes.join(" ")
        );
        HeaderValue::from_str(&policy).expect("hashes are base64")
    })
}

/// Returns the inline scripts of the templates: `<script>` bodies and the
/// values of `on...="..."` attributes, as the browser hashes them.
fn inline_scripts<'a>(sources: impl Iterator<Item = &'a str>) -> Vec<String> {
    let element = regex::Regex::new(r"(?s)<script>(.*?)</script>").expect("valid pattern");
    let handler = regex::Regex::new(r#"\son[a-z]+="([^"]*)""#).expect("valid pattern");
    let mut scripts = Vec::new();
    for source in sources {
        for found in element.captures_iter(source) {
            scripts.push(found[1].to_string());
        }
        for found in handler.captures_iter(source) {
            scripts.push(found[1].to_string());
        }
    }
    scripts.sort();
    scripts.dedup();
    scripts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_inline_script_is_hashed_and_rendered_verbatim() {
        let scripts = inline_scripts(super::super::TEMPLATES.iter().map(|(_, source)| *source));
        assert!(scripts.len() >= 4, "{scripts:?}");
        for script in &scripts {
            // A template expression would make the rendered script differ from its hash.
            assert!(!script.contains("{{") && !script.contains("{%"), "{script}");
        }
        // The browser decodes entities in an attribute before hashing it.
        let handlers = regex::Regex::new(r#"\son[a-z]+="([^"]*)""#).unwrap();
        for (name, source) in super::super::TEMPLATES {
            for found in handlers.captures_iter(source) {
                assert!(!found[1].contains('&'), "{name}: {}", &found[1]);
            }
        }
        let policy = policy().to_str().unwrap();
        assert_eq!(policy.matches("'sha256-").count(), scripts.len());
        assert!(policy.contains("frame-ancestors 'none'"));
        assert!(!policy.contains("script-src 'unsafe-inline'"));
    }
}
