//! Evidence bundles that verify themselves: one archive per match or set of
//! matches that a court, a host's abuse desk or the publisher's counsel can
//! check offline, with no CopyHound service and no network.
//!
//! The archive (canonical ustar, see [`tar`]) holds:
//! - `manifest.json`: the SHA-256 and size of every other file, the WARC's
//!   per-record digests ([`crate::warc::Manifest`]), the product version and
//!   the time the bundle was made, and whether screenshots could be taken;
//! - `manifest.tsr`: an RFC 3161 time-stamp response over the manifest's
//!   SHA-256 from the configured time-stamping authority ([`timestamp`]);
//! - `tsa-chain.pem`: the certificates the token does not carry that its
//!   chain needs, up to the root;
//! - `evidence.warc`: the captured responses, each dated by when it was
//!   received, with `revisit` records for later `304` revalidations;
//! - `capture-log.json`: per capture, its time, the resolver's answer, the
//!   peer address, the TLS certificates, the request and response header
//!   fields and the product version, or `"not recorded"` where the crawler
//!   did not keep it (pages stored before it did);
//! - `screenshot-N.png`: the N-th capture's stored body as headless Chromium
//!   renders it offline, when a browser is configured.
//!
//! [`verify_bundle`] checks every byte: the archive against its canonical
//! form, each file against the manifest, the manifest against the token, the
//! token's signature and certificate chain. The token is the only external
//! trust: it dates the manifest, and its root's fingerprint is reported so a
//! reader can compare it with the TSA's.

pub mod tar;
#[cfg(any(test, feature = "testsuite"))]
pub mod test_tsa;
pub mod timestamp;

use std::fmt;
use std::path::PathBuf;

use async_trait::async_trait;
use copyhound_core::ids::sha256_hex;
use copyhound_core::model::{Connection, Page, Timestamp};
use copyhound_core::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::warc::{MatchRef, evidence_package};
pub use timestamp::VerifiedTimestamp;

/// Version of the bundle layout.
pub const BUNDLE_FORMAT: &str = "copyhound-evidence-bundle/1";
/// The product that writes bundles, as its manifest and capture log name it.
pub const PRODUCT: &str = concat!("CopyHound ", env!("CARGO_PKG_VERSION"));

const MANIFEST: &str = "manifest.json";
const TOKEN: &str = "manifest.tsr";
const CHAIN: &str = "tsa-chain.pem";
const WARC: &str = "evidence.warc";
const CAPTURE_LOG: &str = "capture-log.json";
const NOT_RECORDED: &str = "not recorded";

/// A time-stamping authority (RFC 3161 over HTTP): the binary provides the
/// HTTP one, tests a local one.
#[async_trait]
pub trait TimestampAuthority: fmt::Debug + Send + Sync + 'static {
    /// Where it is, as the manifest names it.
    fn url(&self) -> &str;
    /// Sends a DER `TimeStampReq`, returns the DER `TimeStampResp`.
    async fn timestamp(&self, request_der: &[u8]) -> Result<Vec<u8>>;
}

/// How bundles are made.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    /// The certificates (DER) that complete the TSA's chain up to its root,
    /// from the configuration (`evidence.tsa_certificates`).
    pub tsa_certificates: Vec<Vec<u8>>,
    /// The browser for screenshots; none: the manifest says they were not taken.
    pub chromium: Option<PathBuf>,
}

/// What a process makes bundles with: its TSA and options, built once from
/// `[evidence]` (the server holds one when `evidence.tsa_url` is set).
#[derive(Debug, Clone)]
pub struct BundleMaker {
    /// The time-stamping authority.
    pub tsa: std::sync::Arc<dyn TimestampAuthority>,
    /// Chain certificates and the browser.
    pub options: BundleOptions,
}

impl BundleMaker {
    /// The bundle of `matches`, dated now (see [`bundle_for`]).
    pub async fn bundle(
        &self,
        pages: &dyn copyhound_core::ports::PageStore,
        matches: &[copyhound_core::model::Match],
    ) -> Result<Vec<u8>> {
        bundle_for(
            pages,
            matches,
            self.tsa.as_ref(),
            &self.options,
            chrono::Utc::now(),
        )
        .await
    }
}

/// The file list entry of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Name in the archive.
    pub name: String,
    /// Size, bytes.
    pub bytes: u64,
    /// SHA-256, hex.
    pub sha256: String,
}

/// What a verified bundle holds.
#[derive(Debug, Clone)]
pub struct VerifiedBundle {
    /// When the bundle says it was made.
    pub created_at: String,
    /// The product that made it.
    pub product: String,
    /// The files the manifest lists, all checked.
    pub files: Vec<FileDigest>,
    /// The time-stamp over the manifest.
    pub timestamp: VerifiedTimestamp,
}

/// Why a bundle did not verify: the message names the file or the check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VerifyError(pub String);

/// Builds the bundle of `pages` (each with the matches it is evidence for):
/// the archive's bytes. `subject` says what it is for (match ids, a scope);
/// `created_at` dates it. Fails when the TSA does not answer with a token
/// that verifies for the manifest.
pub async fn build_bundle(
    pages: &[(Page, Vec<MatchRef>)],
    subject: Value,
    tsa: &dyn TimestampAuthority,
    options: &BundleOptions,
    created_at: Timestamp,
) -> Result<Vec<u8>> {
    let package = evidence_package(pages, WARC, created_at);
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (WARC.to_owned(), package.warc),
        (CAPTURE_LOG.to_owned(), to_json(&capture_log(pages))?),
    ];
    let screenshots = screenshots(pages, options.chromium.clone()).await;
    let screenshot_status = match screenshots {
        Ok(shots) => {
            let names: Vec<String> = shots.iter().map(|(name, _)| name.clone()).collect();
            files.extend(shots);
            json!({ "taken": true, "files": names,
                "how": "each capture's stored body, decoded in its recorded charset, rendered by headless Chromium at bundle time with no network (nothing it links is fetched)" })
        }
        Err(reason) => json!({ "taken": false, "reason": reason }),
    };
    let file_digests: Vec<FileDigest> = files
        .iter()
        .map(|(name, bytes)| FileDigest {
            name: name.clone(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        })
        .collect();
    let manifest = json!({
        "format": BUNDLE_FORMAT,
        "product": PRODUCT,
        "created_at": created_at,
        "subject": subject,
        "files": file_digests,
        "warc": package.manifest,
        "screenshots": screenshot_status,
        "timestamp": { "tsa_url": tsa.url(), "hash_algorithm": "sha256", "over": MANIFEST },
    });
    let manifest_bytes = to_json(&manifest)?;
    let digest: [u8; 32] = Sha256::digest(&manifest_bytes).into();
    // The random low half of a v7 UUID: an answer to another request (a
    // replay) cannot match it.
    let nonce = uuid::Uuid::now_v7().as_u64_pair().1;
    let request = timestamp::timestamp_request(&digest, nonce).map_err(tsa_error)?;
    let response = tsa.timestamp(&request).await?;
    let verified =
        timestamp::check_fresh_response(&response, &digest, nonce, &options.tsa_certificates)
            .map_err(tsa_error)?;
    let carried = timestamp::token_certificates(&response).map_err(tsa_error)?;
    let chain: Vec<Vec<u8>> = verified
        .chain
        .iter()
        .filter(|der| !carried.contains(der))
        .cloned()
        .collect();
    let mut entries = vec![
        (MANIFEST.to_owned(), manifest_bytes),
        (TOKEN.to_owned(), response),
        (
            CHAIN.to_owned(),
            timestamp::certificates_to_pem(&chain).into_bytes(),
        ),
    ];
    entries.extend(files);
    let mtime = u64::try_from(created_at.timestamp()).unwrap_or(0);
    Ok(tar::write(&entries, mtime))
}

fn tsa_error(error: timestamp::TimestampError) -> Error {
    Error::new(
        ErrorKind::Transient,
        format!("the time-stamping authority's answer did not verify: {error}"),
    )
}

fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|error| {
        Error::with_source(ErrorKind::Internal, "failed to serialize evidence", error)
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The capture log: what the crawler recorded of each capture, and
/// [`NOT_RECORDED`] for what it did not.
fn capture_log(pages: &[(Page, Vec<MatchRef>)]) -> Value {
    let captures: Vec<Value> = pages
        .iter()
        .map(|(page, _)| {
            let fetch = &page.fetch;
            let revalidations: Vec<Value> = fetch
                .revalidations
                .iter()
                .map(|revalidation| {
                    let mut entry = connection_fields(revalidation.connection.as_ref());
                    entry["time"] = json!(revalidation.at);
                    entry["status"] = json!(304);
                    entry["response_headers"] = json!(revalidation.headers);
                    entry
                })
                .collect();
            let mut entry = connection_fields(fetch.connection.as_ref());
            entry["page_id"] = json!(page.id.to_string());
            entry["url"] = json!(page.url);
            entry["final_url"] = json!(fetch.final_url);
            entry["time"] = match fetch.received_at {
                Some(at) => json!(at),
                None => json!(NOT_RECORDED),
            };
            entry["latest_visit"] = json!(page.last_seen);
            entry["status"] = json!(fetch.status);
            entry["response_headers"] = if fetch.headers.is_empty() {
                json!(NOT_RECORDED)
            } else {
                json!(fetch.headers)
            };
            entry["revalidations"] = json!(revalidations);
            entry
        })
        .collect();
    json!({ "product": PRODUCT, "captures": captures })
}

fn connection_fields(connection: Option<&Connection>) -> Value {
    let Some(connection) = connection else {
        return json!({
            "resolver_answers": NOT_RECORDED,
            "peer_address": NOT_RECORDED,
            "tls_certificates": NOT_RECORDED,
            "request_headers": NOT_RECORDED,
        });
    };
    let https = !connection.tls_certificates.is_empty();
    json!({
        "resolver_answers": connection.resolved.as_ref().map_or_else(
            || json!("none (the host is an address literal, or resolved before the log kept answers)"),
            |resolved| json!(resolved)),
        "peer_address": connection.peer_address.as_ref().map_or_else(|| json!(NOT_RECORDED), |peer| json!(peer)),
        "tls_certificates": if https {
            json!({ "der_base64": connection.tls_certificates, "note": "leaf only: the HTTP client exposes no more of the chain" })
        } else {
            json!("none (plain http)")
        },
        "request_headers": connection.request_headers,
        "request_headers_note": "as set by the crawler; the HTTP client adds Host, Accept and Accept-Encoding",
    })
}

/// The stored body decoded with the charset the crawler read it in, as
/// UTF-8 behind a byte-order mark (which outranks any `<meta charset>`): a
/// page loaded from a file has no `Content-Type` to say its encoding.
fn as_utf8_html(page: &Page) -> Vec<u8> {
    let Some(encoding) = copyhound_core::charset::encoding_for_label(&page.charset) else {
        return page.raw_body.clone();
    };
    let (text, _, _) = encoding.decode(&page.raw_body);
    let mut html = b"\xEF\xBB\xBF".to_vec();
    html.extend_from_slice(text.as_bytes());
    html
}

/// Renders each page's stored body with `chromium`, offline; the reason
/// when none can be taken.
async fn screenshots(
    pages: &[(Page, Vec<MatchRef>)],
    chromium: Option<PathBuf>,
) -> std::result::Result<Vec<(String, Vec<u8>)>, String> {
    let Some(chromium) = chromium else {
        return Err("no browser configured (crawler.chromium)".into());
    };
    let bodies: Vec<Vec<u8>> = pages.iter().map(|(page, _)| as_utf8_html(page)).collect();
    let shots = tokio::task::spawn_blocking(move || {
        bodies
            .iter()
            .enumerate()
            .map(|(index, body)| {
                crate::pdf::screenshot_with_chromium(body, &chromium)
                    .map(|png| (format!("screenshot-{}.png", index + 1), png))
            })
            .collect::<Result<Vec<_>>>()
    })
    .await
    .map_err(|error| format!("screenshot task failed: {error}"))?;
    shots.map_err(|error| format!("chromium could not render: {error}"))
}

/// Builds the bundle of `matches` (see [`build_bundle`]): their pages from
/// the store, the subject naming the match ids. `NotFound` when none of
/// their pages is stored any more.
pub async fn bundle_for(
    pages: &dyn copyhound_core::ports::PageStore,
    matches: &[copyhound_core::model::Match],
    tsa: &dyn TimestampAuthority,
    options: &BundleOptions,
    created_at: Timestamp,
) -> Result<Vec<u8>> {
    let found = crate::warc::matched_pages(pages, matches).await?;
    if found.is_empty() {
        return Err(Error::not_found(
            "the pages of these matches are no longer stored",
        ));
    }
    let match_ids: Vec<String> = matches.iter().map(|m| m.id.to_string()).collect();
    build_bundle(
        &found,
        json!({ "match_ids": match_ids }),
        tsa,
        options,
        created_at,
    )
    .await
}

/// Reads the WARC record by record: each block hashes to its
/// `WARC-Block-Digest`, and each capture and revisit the manifest lists is a
/// record with the manifest's block digest.
fn check_warc(warc: &[u8], manifest: &Value) -> std::result::Result<(), String> {
    let mut digests: Vec<(String, String)> = Vec::new();
    let mut rest = warc;
    while !rest.is_empty() {
        let head_end = rest
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
            .ok_or("a record has no end of header")?;
        let head =
            std::str::from_utf8(&rest[..head_end]).map_err(|_| "a record header is not text")?;
        let field = |name: &str| {
            head.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
                .map(str::to_owned)
        };
        let length: usize = field("Content-Length")
            .and_then(|value| value.parse().ok())
            .ok_or("a record has no Content-Length")?;
        let block_start = head_end + 4;
        let block_end = block_start
            .checked_add(length)
            .filter(|end| end + 4 <= rest.len())
            .ok_or("a record runs past the file")?;
        let block = &rest[block_start..block_end];
        let id = field("WARC-Record-ID").ok_or("a record has no id")?;
        let digest = format!("sha256:{}", sha256_hex(block));
        if field("WARC-Block-Digest").as_deref() != Some(digest.as_str()) {
            return Err(format!("record {id}: its block does not match its digest"));
        }
        if &rest[block_end..block_end + 4] != b"\r\n\r\n" {
            return Err(format!("record {id} is not terminated"));
        }
        digests.push((id, digest));
        rest = &rest[block_end + 4..];
    }
    let captures = manifest["captures"]
        .as_array()
        .ok_or("the manifest lists no captures")?;
    let records = captures.iter().flat_map(|capture| {
        std::iter::once(capture).chain(capture["revisits"].as_array().into_iter().flatten())
    });
    for record in records {
        let id = record["record_id"].as_str().unwrap_or_default();
        let expected = format!(
            "sha256:{}",
            record["block_sha256"].as_str().unwrap_or_default()
        );
        if !digests
            .iter()
            .any(|(found, digest)| found == id && *digest == expected)
        {
            return Err(format!(
                "record {id} of the manifest is not in the file as listed"
            ));
        }
    }
    Ok(())
}

/// Verifies a bundle offline (see the module docs); `trusted_root`: the
/// SHA-256 (hex) the TSA's root must have, when the reader pins it.
pub fn verify_bundle(
    archive: &[u8],
    trusted_root: Option<&str>,
) -> std::result::Result<VerifiedBundle, VerifyError> {
    let fail = |message: String| VerifyError(message);
    let (entries, mtime) =
        tar::read_canonical(archive).map_err(|error| fail(format!("archive: {error}")))?;
    let mut names: Vec<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(fail("archive: a file name appears twice".into()));
    }
    let entry = |name: &str| {
        entries
            .iter()
            .find(|(entry_name, _)| entry_name == name)
            .map(|(_, bytes)| bytes.as_slice())
            .ok_or_else(|| fail(format!("{name} is missing")))
    };
    let manifest_bytes = entry(MANIFEST)?;
    let manifest: Value = serde_json::from_slice(manifest_bytes)
        .map_err(|error| fail(format!("{MANIFEST} is not JSON: {error}")))?;
    if manifest["format"] != BUNDLE_FORMAT {
        return Err(fail(format!(
            "{MANIFEST}: unknown format {}",
            manifest["format"]
        )));
    }
    let files: Vec<FileDigest> = serde_json::from_value(manifest["files"].clone())
        .map_err(|error| fail(format!("{MANIFEST}: bad file list: {error}")))?;
    for file in &files {
        let bytes = entry(&file.name)?;
        if bytes.len() as u64 != file.bytes || sha256_hex(bytes) != file.sha256 {
            return Err(fail(format!(
                "{}: its SHA-256 is not the manifest's (the file was changed)",
                file.name
            )));
        }
    }
    check_warc(entry(WARC)?, &manifest["warc"])
        .map_err(|error| fail(format!("{WARC}: {error}")))?;
    let listed = |name: &str| files.iter().any(|file| file.name == name);
    if let Some((name, _)) = entries
        .iter()
        .find(|(name, _)| ![MANIFEST, TOKEN, CHAIN].contains(&name.as_str()) && !listed(name))
    {
        return Err(fail(format!("{name} is not in the manifest")));
    }
    let created_at = manifest["created_at"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let created = chrono::DateTime::parse_from_rfc3339(&created_at)
        .map_err(|_| fail(format!("{MANIFEST}: bad created_at")))?;
    if u64::try_from(created.timestamp()).ok() != Some(mtime) {
        return Err(fail(
            "archive: entry times differ from the manifest's".into(),
        ));
    }
    let chain_text =
        std::str::from_utf8(entry(CHAIN)?).map_err(|_| fail(format!("{CHAIN} is not text")))?;
    let chain = timestamp::certificates_from_pem(chain_text)
        .map_err(|error| fail(format!("{CHAIN}: {error}")))?;
    let digest: [u8; 32] = Sha256::digest(manifest_bytes).into();
    let verified = timestamp::verify_response(entry(TOKEN)?, &digest, &chain)
        .map_err(|error| fail(format!("{TOKEN}: {error}")))?;
    let carried = timestamp::token_certificates(entry(TOKEN)?)
        .map_err(|error| fail(format!("{TOKEN}: {error}")))?;
    if chain
        .iter()
        .any(|der| carried.contains(der) || !verified.chain.contains(der))
    {
        return Err(fail(format!(
            "{CHAIN}: holds a certificate outside the chain"
        )));
    }
    if let Some(root) = trusted_root
        && !root.eq_ignore_ascii_case(&verified.root_sha256)
    {
        return Err(fail(format!(
            "{TOKEN}: the TSA's root is {}, not the trusted {root}",
            verified.root_sha256
        )));
    }
    Ok(VerifiedBundle {
        created_at,
        product: manifest["product"].as_str().unwrap_or_default().to_owned(),
        files,
        timestamp: verified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screenshots_render_the_body_in_its_recorded_charset() {
        let gbk = [0xb5, 0xda, 0xd2, 0xbb, 0xd5, 0xc2]; // 第一章 in GBK
        let mut page = crate::warc::tests::page("http://127.0.0.1:1/g", &gbk, Vec::new());
        page.charset = "gbk".into();
        let html = as_utf8_html(&page);
        assert_eq!(html, "\u{feff}第一章".as_bytes());
        page.charset = "no-such-charset".into();
        assert_eq!(as_utf8_html(&page), gbk);
    }

    #[test]
    fn each_warc_record_is_checked_against_its_digest_and_the_manifest() {
        let body = "<p>第一章</p>".as_bytes();
        let mut page = crate::warc::tests::page("http://127.0.0.1:1/c/1", body, Vec::new());
        page.fetch.revalidations = vec![copyhound_core::model::Revalidation {
            at: page.last_seen,
            headers: Vec::new(),
            connection: None,
        }];
        let package = evidence_package(&[(page, Vec::new())], WARC, chrono::Utc::now());
        let manifest = serde_json::to_value(&package.manifest).expect("json");
        check_warc(&package.warc, &manifest).expect("verifies");
        let mut changed = package.warc.clone();
        let at = changed.len() - 6;
        changed[at] ^= 0x01;
        let error = check_warc(&changed, &manifest).unwrap_err();
        assert!(error.contains("does not match its digest"), "{error}");
        let mut other = manifest.clone();
        other["captures"][0]["revisits"][0]["block_sha256"] = json!("00");
        let error = check_warc(&package.warc, &other).unwrap_err();
        assert!(error.contains("not in the file"), "{error}");
    }
}
