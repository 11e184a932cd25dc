//! Cross-site request forgery defence of the console. `SameSite=Strict` keeps
//! the session cookie off cross-site posts, but not off posts from another
//! origin of the same site (a sibling subdomain, another port), and `/login`
//! needs no cookie at all: a forged login signs the victim into the attacker's
//! tenant, where their next upload lands. So every console request that may
//! change something must prove it comes from the console's own pages.
//!
//! Browsers send `Sec-Fetch-Site` (and `Origin` on every cross-origin post),
//! and a page can set neither: a form or `fetch` from another origin carries
//! them as the browser computed them. A post is accepted when
//! `Sec-Fetch-Site` reads `same-origin`, or, from a browser without it, when
//! `Origin` names the host the request was sent to. A post with neither is
//! refused too: every browser the console supports sends one, and scripts use
//! the JSON API with a key in `Authorization`, which a browser never attaches
//! by itself, so the API needs no such check.

use axum::extract::Request;
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use copyhound_core::{Error, ErrorKind};

use super::UiError;

/// What the browser says about where a request comes from.
const SEC_FETCH_SITE: &str = "sec-fetch-site";
/// The host a reverse proxy was asked for, when it rewrites `Host`.
const X_FORWARDED_HOST: &str = "x-forwarded-host";
/// The scheme a reverse proxy was reached over.
pub(crate) const X_FORWARDED_PROTO: &str = "x-forwarded-proto";

/// Middleware: refuses a state-changing console request that does not come
/// from the console's own origin, with 403 before any handler runs.
pub async fn same_origin_only(request: Request, next: Next) -> Response {
    if is_safe(request.method()) {
        return next.run(request).await;
    }
    match check(request.headers()) {
        Ok(()) => next.run(request).await,
        Err(reason) => {
            tracing::warn!(
                method = %request.method(),
                path = request.uri().path(),
                reason,
                "cross-origin console request refused"
            );
            UiError::from(Error::new(
                ErrorKind::Forbidden,
                format!("this form was not sent from the console's own pages ({reason}); open the page again and resubmit"),
            ))
            .into_response()
        }
    }
}

/// Methods that change nothing, so any origin may send them.
fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Returns why a state-changing request is refused, if it is.
pub(crate) fn check(headers: &HeaderMap) -> Result<(), &'static str> {
    if let Some(site) = headers.get(SEC_FETCH_SITE) {
        return match site.as_bytes() {
            b"same-origin" => Ok(()),
            _ => Err("Sec-Fetch-Site is not same-origin"),
        };
    }
    let Some(origin) = headers.get(ORIGIN) else {
        return Err("neither Sec-Fetch-Site nor Origin was sent");
    };
    let origin = origin.to_str().map_err(|_| "Origin is not ASCII")?;
    if origin_matches(origin, headers) {
        Ok(())
    } else {
        Err("Origin is another origin than this server")
    }
}

/// Whether `origin` (`scheme://host[:port]`) is the origin the request was
/// sent to: its host and port are the `Host` header's (or a proxy's
/// `X-Forwarded-Host`), and its scheme is the proxy's `X-Forwarded-Proto`
/// when one says so.
fn origin_matches(origin: &str, headers: &HeaderMap) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // `null` (sandboxed frames, file: pages) and garbage
    };
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => ":80",
        "https" => ":443",
        _ => return false,
    };
    if let Some(proto) = first_value(headers, X_FORWARDED_PROTO)
        && !proto.eq_ignore_ascii_case(&scheme)
    {
        return false;
    }
    let authority = authority.to_ascii_lowercase();
    let origin_authority = authority.strip_suffix(default_port).unwrap_or(&authority);
    [
        first_value(headers, X_FORWARDED_HOST),
        first_value(headers, HOST.as_str()),
    ]
    .into_iter()
    .flatten()
    .any(|host| {
        let host = host.to_ascii_lowercase();
        host.strip_suffix(default_port).unwrap_or(&host) == origin_authority
    })
}

/// The first comma-separated value of a header (proxies append theirs).
fn first_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = headers.get(name)?.to_str().ok()?;
    value
        .split(',')
        .next()
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_the_requests_own_origin_passes() {
        let host = ("host", "console.example:8080");
        for (pairs, expected) in [
            (vec![("sec-fetch-site", "same-origin")], true),
            (vec![("sec-fetch-site", "same-site")], false),
            (vec![("sec-fetch-site", "cross-site")], false),
            (vec![("sec-fetch-site", "none")], false),
            // Sec-Fetch-Site is the browser's own verdict: a proxy's Host does not overrule it.
            (
                vec![
                    ("sec-fetch-site", "cross-site"),
                    ("origin", "http://console.example:8080"),
                    host,
                ],
                false,
            ),
            (vec![("origin", "http://console.example:8080"), host], true),
            (vec![("origin", "http://CONSOLE.example:8080"), host], true),
            (vec![("origin", "http://console.example:9090"), host], false),
            (vec![("origin", "http://evil.example"), host], false),
            (
                vec![("origin", "http://sub.console.example:8080"), host],
                false,
            ),
            (vec![("origin", "null"), host], false),
            (vec![("origin", "ftp://console.example:8080"), host], false),
            (vec![("origin", "http://console.example:8080")], false),
            (vec![host], false),
            (vec![], false),
            // Default ports are implied on either side.
            (
                vec![
                    ("origin", "https://console.example"),
                    ("host", "console.example"),
                ],
                true,
            ),
            (
                vec![
                    ("origin", "https://console.example"),
                    ("host", "console.example:443"),
                ],
                true,
            ),
            // Behind a proxy: its Host or X-Forwarded-Host, and its scheme.
            (
                vec![
                    ("origin", "https://console.example"),
                    ("host", "127.0.0.1:8080"),
                    ("x-forwarded-host", "console.example"),
                ],
                true,
            ),
            (
                vec![
                    ("origin", "https://console.example"),
                    ("host", "console.example"),
                    ("x-forwarded-proto", "https"),
                ],
                true,
            ),
            (
                vec![
                    ("origin", "http://console.example"),
                    ("host", "console.example"),
                    ("x-forwarded-proto", "https"),
                ],
                false,
            ),
        ] {
            assert_eq!(check(&headers(&pairs)).is_ok(), expected, "{pairs:?}");
        }
    }
}
