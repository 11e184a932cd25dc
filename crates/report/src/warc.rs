//! Evidence packages: the captured responses behind a set of matches as one
//! WARC file (ISO 28500, WARC/1.1), with a manifest of SHA-256 digests and
//! capture times. A host's abuse desk or a court can open the WARC with any
//! archive tool (it is checked with `warcio` in the tests) and compare the
//! digests with the manifest and with the report.
//!
//! What is replayed is what the store kept: the latest capture of each page,
//! its status and header fields as received, and its body as decoded by the
//! HTTP client (chunking and gzip/brotli removed, so the header fields that
//! describe them are dropped and `Content-Length` is the stored length). A
//! body cut at the crawler's size cap says so (`WARC-Truncated: length`), and
//! the manifest keeps the SHA-256 of the whole body as it was received. Pages
//! stored before header fields were kept get a header rebuilt from the
//! status, Content-Type, ETag and Last-Modified, and the manifest says
//! `"headers": "reconstructed"`.
//!
//! Each response is dated by when it was received. A `304 Not Modified`
//! that later confirmed it is a `revisit` record of its own (profile
//! `server-not-modified`, referring to the response), dated by when the `304`
//! came: a revalidation never moves the date of the response it confirmed.

use std::fmt::Write as _;

use std::collections::BTreeMap;

use copyhound_core::ids::{PageId, sha256_hex};
use copyhound_core::model::{Match, Page, Timestamp};
use copyhound_core::ports::PageStore;
use copyhound_core::{ErrorKind, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Version of the manifest layout.
pub const MANIFEST_FORMAT: &str = "copyhound-evidence/1";

/// What the warcinfo record names as the writer.
const SOFTWARE: &str = concat!("CopyHound ", env!("CARGO_PKG_VERSION"));

/// A WARC file and its manifest.
#[derive(Debug)]
pub struct EvidencePackage {
    /// The WARC file's bytes.
    pub warc: Vec<u8>,
    /// Its manifest (write it beside the WARC, as JSON).
    pub manifest: Manifest,
}

/// What the package holds, with the digests to check it by.
#[derive(Debug, Serialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: &'static str,
    /// When the package was built.
    pub generated_at: Timestamp,
    /// File name the WARC is written under (the manifest names it).
    pub warc_file: String,
    /// Size of the WARC file.
    pub warc_bytes: u64,
    /// SHA-256 of the whole WARC file, hex.
    pub warc_sha256: String,
    /// One per response record, in file order.
    pub captures: Vec<Capture>,
}

/// One captured response: a `response` record of the WARC.
#[derive(Debug, Serialize)]
pub struct Capture {
    /// `WARC-Record-ID` of the response record.
    pub record_id: String,
    /// The stored page.
    pub page_id: String,
    /// Its normalized URL.
    pub url: String,
    /// The URL after redirects (the record's `WARC-Target-URI`).
    pub final_url: String,
    /// When this response was received (`WARC-Date`).
    pub captured_at: Timestamp,
    /// `received` (the response's own time) or `latest_visit` (a page stored
    /// before receive times were kept: its latest visit, which may have been
    /// a revalidation).
    pub captured_at_source: &'static str,
    /// The `revisit` records of the `304` answers that confirmed it.
    pub revisits: Vec<Revisit>,
    /// When the page was first seen with any content.
    pub first_seen: Timestamp,
    /// HTTP status.
    pub status: u16,
    /// `captured` (as received) or `reconstructed` (page stored before header
    /// fields were kept).
    pub headers: &'static str,
    /// Bytes of the stored body (the record's payload).
    pub payload_bytes: u64,
    /// SHA-256 of the stored body, hex (`WARC-Payload-Digest`).
    pub payload_sha256: String,
    /// SHA-256 of the whole body as received, hex (equal to `payload_sha256`
    /// unless `truncated`).
    pub received_body_sha256: String,
    /// The body was cut at the crawler's size cap (`WARC-Truncated`).
    pub truncated: bool,
    /// SHA-256 of the record block (HTTP header and payload), hex.
    pub block_sha256: String,
    /// The matches this capture is evidence for.
    pub matches: Vec<MatchRef>,
}

/// A `304 Not Modified` answer: a `revisit` record (profile
/// [`REVISIT_PROFILE`]) referring to the response it confirmed.
#[derive(Debug, Serialize)]
pub struct Revisit {
    /// `WARC-Record-ID` of the revisit record.
    pub record_id: String,
    /// When the `304` was received (`WARC-Date`).
    pub revalidated_at: Timestamp,
    /// SHA-256 of the record block (the `304`'s HTTP header), hex.
    pub block_sha256: String,
}

/// The WARC 1.1 profile of a revisit whose server answered `304`.
pub const REVISIT_PROFILE: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/// A match, as the manifest names it.
#[derive(Clone, Debug, Serialize)]
pub struct MatchRef {
    /// The match.
    pub match_id: String,
    /// The copied work.
    pub work_id: String,
    /// The copied chapter.
    pub chapter_id: String,
    /// The match's score.
    pub score: f32,
    /// Share of the chapter found on the page.
    pub chapter_coverage: f32,
}

impl MatchRef {
    /// The reference to `m`.
    pub fn of(m: &Match) -> Self {
        Self {
            match_id: m.id.to_string(),
            work_id: m.work_id.to_string(),
            chapter_id: m.chapter_id.to_string(),
            score: m.score,
            chapter_coverage: m.chapter_coverage,
        }
    }
}

/// The package of `matches`: each matched page once, with the matches it is
/// evidence for. A page that is gone from the store is left out with a
/// warning (the manifest lists what the file holds).
pub async fn evidence_for(
    pages: &dyn PageStore,
    matches: &[Match],
    warc_file: &str,
    generated_at: Timestamp,
) -> Result<EvidencePackage> {
    let found = matched_pages(pages, matches).await?;
    Ok(evidence_package(&found, warc_file, generated_at))
}

/// Each page `matches` are on, once, with the matches it is evidence for. A
/// page that is gone from the store is left out with a warning.
pub async fn matched_pages(
    pages: &dyn PageStore,
    matches: &[Match],
) -> Result<Vec<(Page, Vec<MatchRef>)>> {
    let mut by_page: BTreeMap<PageId, Vec<MatchRef>> = BTreeMap::new();
    for m in matches {
        by_page
            .entry(m.page_id.clone())
            .or_default()
            .push(MatchRef::of(m));
    }
    let mut found = Vec::with_capacity(by_page.len());
    for (page_id, refs) in by_page {
        match pages.get_page(&page_id).await {
            Ok(page) => found.push((page, refs)),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                tracing::warn!(page = %page_id, "matched page no longer stored; left out of the evidence package");
            }
            Err(error) => return Err(error),
        }
    }
    Ok(found)
}

/// Builds the package for `pages`, each with the matches it is evidence for,
/// in the order given. `warc_file` is the name the manifest gives the WARC.
pub fn evidence_package(
    pages: &[(Page, Vec<MatchRef>)],
    warc_file: &str,
    generated_at: Timestamp,
) -> EvidencePackage {
    let mut warc = Vec::new();
    let info_id = record_id(&["warcinfo", warc_file, &generated_at.to_rfc3339()]);
    let mut info = String::new();
    let _ = write!(
        info,
        "software: {SOFTWARE}\r\nformat: WARC File Format 1.1\r\n\
         conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
         description: CopyHound evidence package, {} captured responses\r\n",
        pages.len()
    );
    write_record(
        &mut warc,
        &[
            ("WARC-Type", "warcinfo".into()),
            ("WARC-Record-ID", info_id.clone()),
            ("WARC-Date", warc_date(generated_at)),
            ("WARC-Filename", warc_file.into()),
            ("Content-Type", "application/warc-fields".into()),
            (
                "WARC-Block-Digest",
                format!("sha256:{}", sha256_hex(info.as_bytes())),
            ),
        ],
        info.as_bytes(),
    );
    let mut captures = Vec::with_capacity(pages.len());
    for (page, matches) in pages {
        let (head, reconstructed) = http_head(page);
        let mut block = head.into_bytes();
        block.extend_from_slice(&page.raw_body);
        let payload_sha256 = sha256_hex(&page.raw_body);
        let block_sha256 = sha256_hex(&block);
        let (captured_at, captured_at_source) = match page.fetch.received_at {
            Some(received_at) => (received_at, "received"),
            None => (page.last_seen, "latest_visit"),
        };
        let id = record_id(&["response", &page.id.to_string(), &captured_at.to_rfc3339()]);
        let target = if page.fetch.final_url.is_empty() {
            page.url.clone()
        } else {
            page.fetch.final_url.clone()
        };
        let mut fields = vec![
            ("WARC-Type", "response".to_owned()),
            ("WARC-Record-ID", id.clone()),
            ("WARC-Warcinfo-ID", info_id.clone()),
            ("WARC-Date", warc_date(captured_at)),
            ("WARC-Target-URI", target.clone()),
            (
                "Content-Type",
                "application/http;msgtype=response".to_owned(),
            ),
            ("WARC-Block-Digest", format!("sha256:{block_sha256}")),
            ("WARC-Payload-Digest", format!("sha256:{payload_sha256}")),
        ];
        if page.body_truncated {
            fields.push(("WARC-Truncated", "length".to_owned()));
        }
        write_record(&mut warc, &fields, &block);
        let revisits = page
            .fetch
            .revalidations
            .iter()
            .map(|revalidation| {
                write_revisit(&mut warc, &info_id, &id, &target, captured_at, revalidation)
            })
            .collect();
        captures.push(Capture {
            record_id: id,
            page_id: page.id.to_string(),
            url: page.url.clone(),
            final_url: target,
            captured_at,
            captured_at_source,
            revisits,
            first_seen: page.first_seen,
            status: page.fetch.status,
            headers: if reconstructed {
                "reconstructed"
            } else {
                "captured"
            },
            payload_bytes: page.raw_body.len() as u64,
            payload_sha256,
            received_body_sha256: page.body_sha256.clone(),
            truncated: page.body_truncated,
            block_sha256,
            matches: matches.clone(),
        });
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        generated_at,
        warc_file: warc_file.to_owned(),
        warc_bytes: warc.len() as u64,
        warc_sha256: sha256_hex(&warc),
        captures,
    };
    EvidencePackage { warc, manifest }
}

/// Writes the `revisit` record of a `304` that confirmed the response
/// `refers_to` (received at `refers_to_date`): the block is the `304`'s
/// status line and header, without payload.
fn write_revisit(
    warc: &mut Vec<u8>,
    info_id: &str,
    refers_to: &str,
    target: &str,
    refers_to_date: Timestamp,
    revalidation: &copyhound_core::model::Revalidation,
) -> Revisit {
    let mut head = String::from("HTTP/1.1 304 Not Modified\r\n");
    for (name, value) in &revalidation.headers {
        let value: String = value.chars().filter(|c| *c != '\r' && *c != '\n').collect();
        let _ = write!(head, "{name}: {value}\r\n");
    }
    head.push_str("\r\n");
    let block_sha256 = sha256_hex(head.as_bytes());
    let at = revalidation.at;
    let id = record_id(&["revisit", refers_to, &at.to_rfc3339()]);
    let fields = vec![
        ("WARC-Type", "revisit".to_owned()),
        ("WARC-Record-ID", id.clone()),
        ("WARC-Warcinfo-ID", info_id.to_owned()),
        ("WARC-Date", warc_date(at)),
        ("WARC-Target-URI", target.to_owned()),
        ("WARC-Profile", REVISIT_PROFILE.to_owned()),
        ("WARC-Refers-To", refers_to.to_owned()),
        ("WARC-Refers-To-Target-URI", target.to_owned()),
        ("WARC-Refers-To-Date", warc_date(refers_to_date)),
        (
            "Content-Type",
            "application/http;msgtype=response".to_owned(),
        ),
        ("WARC-Block-Digest", format!("sha256:{block_sha256}")),
    ];
    write_record(warc, &fields, head.as_bytes());
    Revisit {
        record_id: id,
        revalidated_at: at,
        block_sha256,
    }
}

/// Header fields that describe a transfer the stored body no longer has.
const DROPPED: &[&str] = &["content-length", "transfer-encoding", "content-encoding"];

/// The HTTP status line and header of a capture; `true` if rebuilt from the
/// fetch metadata because the page was stored without its header fields.
fn http_head(page: &Page) -> (String, bool) {
    let fetch = &page.fetch;
    let mut head = format!("HTTP/1.1 {} {}\r\n", fetch.status, reason(fetch.status));
    let reconstructed = fetch.headers.is_empty();
    let mut fields: Vec<(&str, &str)> = Vec::new();
    if reconstructed {
        let known = [
            ("Content-Type", &fetch.content_type),
            ("ETag", &fetch.etag),
            ("Last-Modified", &fetch.last_modified),
        ];
        for (name, value) in known {
            if let Some(value) = value {
                fields.push((name, value));
            }
        }
    } else {
        fields.extend(
            fetch
                .headers
                .iter()
                .filter(|(name, _)| !DROPPED.contains(&name.to_ascii_lowercase().as_str()))
                .map(|(name, value)| (name.as_str(), value.as_str())),
        );
    }
    for (name, value) in fields {
        // A field cannot carry a line break into the record.
        let value: String = value.chars().filter(|c| *c != '\r' && *c != '\n').collect();
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let _ = write!(head, "Content-Length: {}\r\n\r\n", page.raw_body.len());
    (head, reconstructed)
}

/// One record: `fields` (the block digest among them), its length, the block.
fn write_record(out: &mut Vec<u8>, fields: &[(&str, String)], block: &[u8]) {
    let mut head = String::from("WARC/1.1\r\n");
    for (name, value) in fields {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let _ = write!(head, "Content-Length: {}\r\n\r\n", block.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
}

/// `WARC-Date`: UTC, seconds.
fn warc_date(t: Timestamp) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A stable `urn:uuid:` (version 8, RFC 9562) from what the record is, so
/// the same capture gets the same id in every package.
fn record_id(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    let mut b: [u8; 16] = [0; 16];
    b.copy_from_slice(&h.finalize()[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x: String = b.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        203 => "Non-Authoritative Information",
        206 => "Partial Content",
        304 => "Not Modified",
        _ => "",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use copyhound_core::ids::{PageId, SiteId};
    use copyhound_core::model::FetchMeta;

    pub(crate) fn page(url: &str, body: &[u8], headers: Vec<(String, String)>) -> Page {
        let t = chrono::DateTime::parse_from_rfc3339("2026-11-20T08:30:00Z")
            .expect("time")
            .to_utc();
        Page {
            id: PageId::for_url(url),
            url: url.to_owned(),
            site_id: "s1".parse::<SiteId>().expect("site id"),
            title: "t".into(),
            raw_body: body.to_vec(),
            body_truncated: false,
            body_sha256: sha256_hex(body),
            charset: "utf-8".into(),
            text: String::new(),
            content_sha256: String::new(),
            first_seen: t,
            last_seen: t,
            fetch: FetchMeta {
                status: 200,
                final_url: url.to_owned(),
                content_type: Some("text/html; charset=utf-8".into()),
                headers,
                ..FetchMeta::default()
            },
            previous_versions: Vec::new(),
        }
    }

    #[test]
    fn records_carry_their_lengths_and_digests() {
        let body = "<p>第一章 天下大势</p>".as_bytes();
        let headers = vec![
            ("content-type".into(), "text/html; charset=utf-8".into()),
            ("transfer-encoding".into(), "chunked".into()),
            ("x-evil".into(), "a\r\nWARC-Type: forged".into()),
        ];
        let pages = vec![(page("http://127.0.0.1:1/c/1", body, headers), Vec::new())];
        let t = pages[0].0.last_seen;
        let pkg = evidence_package(&pages, "e.warc", t);
        let text = String::from_utf8_lossy(&pkg.warc);
        assert!(text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"));
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 2);
        assert!(!text.contains("chunked"), "{text}");
        assert!(!text.contains("\r\nWARC-Type: forged"), "{text}");
        let capture = &pkg.manifest.captures[0];
        assert_eq!(capture.headers, "captured");
        assert_eq!(capture.payload_sha256, capture.received_body_sha256);
        assert_eq!(pkg.manifest.warc_sha256, sha256_hex(&pkg.warc));
        // The response block is exactly Content-Length bytes and hashes to the digest.
        let start = text.find("HTTP/1.1 200 OK").expect("http block");
        let block = &pkg.warc[start..start + block_len(&text)];
        assert_eq!(sha256_hex(block), capture.block_sha256);
        assert!(block.ends_with(body));
    }

    fn block_len(text: &str) -> usize {
        let record = &text[text.find("WARC-Type: response").expect("response")..];
        let line = record
            .lines()
            .find(|l| l.starts_with("Content-Length: "))
            .expect("length");
        line["Content-Length: ".len()..]
            .trim()
            .parse()
            .expect("number")
    }

    /// A `304` after the `200`: the response keeps the `200`'s time, the
    /// revalidation is a `revisit` record of its own time.
    #[test]
    fn a_revalidation_is_a_revisit_record_and_leaves_the_response_date() {
        let at = |text: &str| {
            chrono::DateTime::parse_from_rfc3339(text)
                .expect("time")
                .to_utc()
        };
        let mut page = page("http://127.0.0.1:1/c/2", b"<p>v1</p>", Vec::new());
        page.fetch.received_at = Some(at("2026-11-20T08:30:00Z"));
        page.last_seen = at("2026-11-22T10:00:00Z");
        page.fetch.revalidations = vec![copyhound_core::model::Revalidation {
            at: page.last_seen,
            headers: vec![("etag".into(), "\"v1\"".into())],
            connection: None,
        }];
        let pkg = evidence_package(&[(page, Vec::new())], "e.warc", at("2026-11-23T00:00:00Z"));
        let text = String::from_utf8_lossy(&pkg.warc);
        let response = &text[text.find("WARC-Type: response").expect("response")..];
        assert!(
            response.contains("WARC-Date: 2026-11-20T08:30:00Z\r\n"),
            "{text}"
        );
        let revisit = &text[text.find("WARC-Type: revisit").expect("revisit")..];
        assert!(
            revisit.contains("WARC-Date: 2026-11-22T10:00:00Z\r\n"),
            "{text}"
        );
        assert!(revisit.contains(&format!("WARC-Profile: {REVISIT_PROFILE}\r\n")));
        assert!(revisit.contains("WARC-Refers-To-Date: 2026-11-20T08:30:00Z\r\n"));
        let capture = &pkg.manifest.captures[0];
        assert!(revisit.contains(&format!("WARC-Refers-To: {}\r\n", capture.record_id)));
        assert!(revisit.contains("HTTP/1.1 304 Not Modified\r\netag: \"v1\"\r\n\r\n"));
        assert_eq!(capture.captured_at_source, "received");
        assert_eq!(capture.revisits.len(), 1);
        // A page stored before receive times were kept says so.
        let old = page_at_latest_visit();
        assert_eq!(old.manifest.captures[0].captured_at_source, "latest_visit");
    }

    fn page_at_latest_visit() -> EvidencePackage {
        let pages = vec![(page("http://127.0.0.1:1/old", b"x", Vec::new()), Vec::new())];
        evidence_package(&pages, "e.warc", pages[0].0.last_seen)
    }

    #[test]
    fn pages_without_kept_headers_get_a_rebuilt_one() {
        let pages = vec![(page("http://127.0.0.1:1/a", b"abc", Vec::new()), Vec::new())];
        let pkg = evidence_package(&pages, "e.warc", pages[0].0.last_seen);
        assert_eq!(pkg.manifest.captures[0].headers, "reconstructed");
        let text = String::from_utf8_lossy(&pkg.warc);
        assert!(text.contains("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 3\r\n\r\nabc"));
    }

    #[test]
    fn record_ids_are_stable_uuids() {
        let a = record_id(&["response", "p1", "t"]);
        assert_eq!(a, record_id(&["response", "p1", "t"]));
        assert_ne!(a, record_id(&["response", "p2", "t"]));
        assert_eq!(a.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&a[24..25], "8");
    }

    /// `warcio` (Python, the Webrecorder reader): `COPYHOUND_TEST_WARCIO`,
    /// else `warcio` on the PATH; `deploy/dev/services.sh` installs it. Under
    /// CI=true a missing reader fails the test.
    fn warcio() -> Option<String> {
        let candidate = std::env::var("COPYHOUND_TEST_WARCIO").unwrap_or_else(|_| "warcio".into());
        let found = std::process::Command::new(&candidate)
            .arg("--help")
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return Some(candidate);
        }
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "warcio is required in CI (deploy/dev/services.sh installs it)"
        );
        eprintln!("skipping: warcio not found (set COPYHOUND_TEST_WARCIO)");
        None
    }

    #[test]
    fn an_independent_reader_checks_every_digest() {
        let Some(warcio) = warcio() else { return };
        let mut truncated = page("http://127.0.0.1:1/big", &[b'x'; 300], Vec::new());
        truncated.body_truncated = true;
        truncated.body_sha256 = sha256_hex(&[b'x'; 900]);
        let captured = vec![
            ("Content-Type".into(), "text/html; charset=gbk".into()),
            ("Transfer-Encoding".into(), "chunked".into()),
            ("Content-Encoding".into(), "gzip".into()),
            ("Set-Cookie".into(), "a=1".into()),
            ("Set-Cookie".into(), "b=2".into()),
        ];
        let mut revalidated = page("http://127.0.0.1:1/c/1", "正文 第一章".as_bytes(), captured);
        revalidated.fetch.revalidations = vec![copyhound_core::model::Revalidation {
            at: revalidated.last_seen + chrono::Duration::hours(1),
            headers: vec![("ETag".into(), "\"v1\"".into())],
            connection: None,
        }];
        let pages = vec![
            (revalidated, Vec::new()),
            (
                page("http://127.0.0.1:1/old", b"<p>old</p>", Vec::new()),
                Vec::new(),
            ),
            (truncated, Vec::new()),
        ];
        let pkg = evidence_package(&pages, "e.warc", pages[0].0.last_seen);
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("e.warc");
        std::fs::write(&file, &pkg.warc).expect("write");
        let check = std::process::Command::new(&warcio)
            .args(["check", "-v"])
            .arg(&file)
            .output()
            .expect("run warcio check");
        let out = String::from_utf8_lossy(&check.stdout);
        assert!(check.status.success(), "warcio check failed: {out}");
        // The digests of the warcinfo and the three responses pass; warcio
        // leaves the revisit's block digest unchecked.
        assert_eq!(out.matches("digest pass").count(), 4, "{out}");
        assert_eq!(out.matches("not checked (revisit)").count(), 1, "{out}");
        let index = std::process::Command::new(&warcio)
            .args([
                "index",
                "-f",
                "warc-type,warc-target-uri,http:status,warc-payload-digest",
            ])
            .arg(&file)
            .output()
            .expect("run warcio index");
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&index.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert_eq!(lines[0]["warc-type"], "warcinfo");
        assert_eq!(lines[2]["warc-type"], "revisit");
        assert_eq!(lines[2]["http:status"], "304");
        let responses = [&lines[1], &lines[3], &lines[4]];
        for (line, capture) in responses.into_iter().zip(&pkg.manifest.captures) {
            assert_eq!(line["warc-type"], "response");
            assert_eq!(line["warc-target-uri"], capture.final_url.as_str());
            assert_eq!(line["http:status"], "200");
            assert_eq!(
                line["warc-payload-digest"],
                format!("sha256:{}", capture.payload_sha256)
            );
        }
    }
}
