//! Evidence bundles against a time-stamping authority made at test time with
//! the `openssl` CLI (a test CA, a TSA certificate with extendedKeyUsage
//! critical timeStamping, `openssl ts -reply`): a bundle verifies offline,
//! `openssl ts -verify` agrees, and one changed byte anywhere fails it.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::path::PathBuf;
use std::process::Command;

use chrono::{DateTime, Utc};
use copyhound_core::ids::{PageId, SiteId, sha256_hex};
use copyhound_core::model::{Connection, FetchMeta, Page, Resolution, Revalidation};
use copyhound_report::evidence::test_tsa::OpensslTsa;
use copyhound_report::evidence::timestamp::certificates_from_pem;
use copyhound_report::evidence::{BundleOptions, build_bundle, tar, verify_bundle};
use serde_json::json;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

/// A captured page revalidated once by a `304`, with its connection facts,
/// and one stored before they were kept.
fn pages() -> Vec<(Page, Vec<copyhound_report::warc::MatchRef>)> {
    let page = |url: &str, body: &str| Page {
        id: PageId::for_url(url),
        url: url.to_owned(),
        site_id: "s1".parse::<SiteId>().unwrap(),
        title: "第一章".into(),
        raw_body: body.as_bytes().to_vec(),
        body_truncated: false,
        body_sha256: sha256_hex(body.as_bytes()),
        charset: "utf-8".into(),
        text: String::new(),
        content_sha256: String::new(),
        first_seen: at("2026-11-20T08:30:00Z"),
        last_seen: at("2026-11-22T10:00:00Z"),
        fetch: FetchMeta {
            status: 200,
            final_url: url.to_owned(),
            content_type: Some("text/html; charset=utf-8".into()),
            ..FetchMeta::default()
        },
        previous_versions: Vec::new(),
    };
    let connection = Connection {
        resolved: Some(Resolution {
            host: "pirate.example".into(),
            addresses: vec!["203.0.113.7".into()],
            at: at("2026-11-20T08:29:59Z"),
        }),
        peer_address: Some("203.0.113.7:443".into()),
        tls_certificates: vec!["MIIB".into()],
        request_headers: vec![("user-agent".into(), "CopyHound/0.1".into())],
    };
    let mut captured = page(
        "https://pirate.example/c/1",
        "<html><meta charset=utf-8><p>第一章 天下大势，分久必合</p></html>",
    );
    captured.fetch.headers = vec![("content-type".into(), "text/html; charset=utf-8".into())];
    captured.fetch.received_at = Some(at("2026-11-20T08:30:00Z"));
    captured.fetch.connection = Some(connection.clone());
    captured.fetch.revalidations = vec![Revalidation {
        at: at("2026-11-22T10:00:00Z"),
        headers: vec![("etag".into(), "\"v1\"".into())],
        connection: Some(connection),
    }];
    let old = page("http://pirate.example/old", "<p>old</p>");
    vec![(captured, Vec::new()), (old, Vec::new())]
}

async fn bundle(tsa: &OpensslTsa, chromium: Option<PathBuf>) -> Vec<u8> {
    let options = BundleOptions {
        tsa_certificates: tsa.ca_der(),
        chromium,
    };
    build_bundle(
        &pages(),
        json!({ "match_ids": ["m1"] }),
        tsa,
        &options,
        at("2026-11-27T12:00:00Z"),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_bundle_verifies_offline_and_one_changed_byte_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(tsa) = OpensslTsa::new(dir.path()) else {
        return;
    };
    let archive = bundle(&tsa, None).await;
    let verified = verify_bundle(&archive, None).unwrap();
    assert_eq!(verified.timestamp.tsa_subject, "CN=CopyHound Test TSA");
    let root = verified.timestamp.root_sha256.clone();
    verify_bundle(&archive, Some(&root)).unwrap();
    let wrong_root = verify_bundle(&archive, Some(&"0".repeat(64))).unwrap_err();
    assert!(wrong_root.0.contains("root"), "{wrong_root}");

    let (entries, _) = tar::read_canonical(&archive).unwrap();
    let names: Vec<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "manifest.json",
            "manifest.tsr",
            "tsa-chain.pem",
            "evidence.warc",
            "capture-log.json"
        ]
    );
    let file = |name: &str| &entries.iter().find(|(n, _)| n == name).unwrap().1;
    let manifest: serde_json::Value = serde_json::from_slice(file("manifest.json")).unwrap();
    assert_eq!(manifest["screenshots"]["taken"], false);
    assert!(
        manifest["screenshots"]["reason"]
            .as_str()
            .unwrap()
            .contains("no browser")
    );
    let log: serde_json::Value = serde_json::from_slice(file("capture-log.json")).unwrap();
    let captures = log["captures"].as_array().unwrap();
    assert_eq!(captures[0]["peer_address"], "203.0.113.7:443");
    assert_eq!(captures[0]["time"], "2026-11-20T08:30:00Z");
    assert_eq!(captures[0]["revalidations"][0]["status"], 304);
    assert_eq!(captures[1]["peer_address"], "not recorded");
    assert_eq!(captures[1]["time"], "not recorded");
    let warc = String::from_utf8_lossy(file("evidence.warc"));
    assert!(warc.contains("WARC-Type: revisit\r\n"));
    assert!(warc.contains("WARC-Date: 2026-11-20T08:30:00Z\r\n"));

    // An independent check of the token: openssl over the extracted files.
    for (name, bytes) in &entries {
        std::fs::write(dir.path().join(format!("x-{name}")), bytes).unwrap();
    }
    let cross = Command::new("openssl")
        .args([
            "ts",
            "-verify",
            "-data",
            "x-manifest.json",
            "-in",
            "x-manifest.tsr",
        ])
        .args(["-CAfile", "x-tsa-chain.pem"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        cross.status.success(),
        "openssl ts -verify: {}{}",
        String::from_utf8_lossy(&cross.stdout),
        String::from_utf8_lossy(&cross.stderr)
    );
    assert_eq!(
        certificates_from_pem(&String::from_utf8_lossy(file("tsa-chain.pem")))
            .unwrap()
            .len(),
        1
    );

    // Every byte of the archive, flipped one at a time: headers, padding,
    // each file, the token, the chain, the end blocks.
    let mut failures_by_reason = std::collections::BTreeMap::<String, usize>::new();
    for position in 0..archive.len() {
        let mut changed = archive.clone();
        changed[position] ^= 0x01;
        match verify_bundle(&changed, None) {
            Ok(_) => panic!(
                "byte {position} of {} changed and the bundle verified",
                archive.len()
            ),
            Err(error) => {
                let reason = error.0.split(':').next().unwrap_or_default().to_owned();
                *failures_by_reason.entry(reason).or_default() += 1;
            }
        }
    }
    for named in [
        "archive",
        "manifest.tsr",
        "evidence.warc",
        "capture-log.json",
        "tsa-chain.pem",
    ] {
        assert!(
            failures_by_reason
                .keys()
                .any(|reason| reason.starts_with(named)),
            "{named} never named: {failures_by_reason:?}"
        );
    }
}

#[tokio::test]
async fn a_bundle_holds_a_screenshot_when_chromium_is_there() {
    let chromium = PathBuf::from("chromium");
    if Command::new(&chromium).arg("--version").output().is_err() {
        eprintln!("skipping: chromium not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(tsa) = OpensslTsa::new(dir.path()) else {
        return;
    };
    let archive = bundle(&tsa, Some(chromium)).await;
    verify_bundle(&archive, None).unwrap();
    let (entries, _) = tar::read_canonical(&archive).unwrap();
    let (_, png) = entries
        .iter()
        .find(|(name, _)| name == "screenshot-1.png")
        .expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"));
    let offset = archive
        .windows(8)
        .position(|w| w == b"\x89PNG\r\n\x1a\n")
        .unwrap();
    let mut changed = archive.clone();
    changed[offset + png.len() / 2] ^= 0x80;
    let error = verify_bundle(&changed, None).unwrap_err();
    assert!(error.0.starts_with("screenshot-1.png"), "{error}");
}
