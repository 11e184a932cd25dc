//! `copyhound evidence`: bundles of evidence that verify themselves
//! (`copyhound_report::evidence`), made from the stores and checked offline.

use std::process::ExitCode;

use anyhow::Context;
use chrono::Utc;
use copyhound_core::config::Config;
use copyhound_core::ids::{MatchId, PublisherId};
use copyhound_core::model::Match;
use copyhound_core::ports::collect_all;
use copyhound_report::evidence::{bundle_for, verify_bundle};
use copyhound_runtime::{Backends, HttpTimestampAuthority, bundle_options};

use crate::cli::{EvidenceBundleArgs, EvidenceVerifyArgs};

/// Writes the bundle of the matches `args` names.
pub async fn bundle(config: &Config, args: EvidenceBundleArgs) -> anyhow::Result<ExitCode> {
    let tsa = HttpTimestampAuthority::from_config(config)?;
    let options = bundle_options(config)?;
    let backends = Backends::open(config).await?;
    let stores = &backends.stores;
    let matches: Vec<Match> = if args.match_ids.is_empty() {
        let filter = args.filter.filter()?;
        let filter = &filter;
        let store = &stores.matches;
        collect_all(200, |request| async move {
            store.list_matches(filter, &request).await
        })
        .await?
    } else {
        let publisher_id: PublisherId = args.filter.publisher.parse()?;
        let mut found = Vec::with_capacity(args.match_ids.len());
        for id in &args.match_ids {
            let match_id: MatchId = id.parse().with_context(|| format!("--match {id}"))?;
            found.push(stores.matches.get_match(&publisher_id, &match_id).await?);
        }
        found
    };
    anyhow::ensure!(!matches.is_empty(), "no match selected: nothing to bundle");
    let archive = bundle_for(stores.pages.as_ref(), &matches, &tsa, &options, Utc::now()).await?;
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&args.out, &archive)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "wrote {} ({} bytes, {} matches, time-stamped by {}; screenshots {})",
        args.out.display(),
        archive.len(),
        matches.len(),
        config.evidence.tsa_url,
        if options.chromium.is_some() {
            "taken"
        } else {
            "not taken: no browser"
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// Checks a bundle offline; prints what it holds, or what failed.
pub fn verify(args: &EvidenceVerifyArgs) -> anyhow::Result<ExitCode> {
    let archive = std::fs::read(&args.bundle)
        .with_context(|| format!("cannot read {}", args.bundle.display()))?;
    match verify_bundle(&archive, args.trust.as_deref()) {
        Ok(verified) => {
            println!(
                "verified: {} made by {} at {}",
                args.bundle.display(),
                verified.product,
                verified.created_at
            );
            for file in &verified.files {
                println!(
                    "  {}  {} bytes  sha256 {}",
                    file.name, file.bytes, file.sha256
                );
            }
            let stamp = &verified.timestamp;
            println!(
                "time-stamp: {} by {} (serial {}, policy {})",
                stamp.time.to_rfc3339(),
                stamp.tsa_subject,
                stamp.serial,
                stamp.policy
            );
            println!(
                "TSA root sha256 {}{}",
                stamp.root_sha256,
                if args.trust.is_some() {
                    " (as trusted)"
                } else {
                    ": compare it with the TSA's published fingerprint, or pass --trust"
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("verification failed: {error}");
            Ok(ExitCode::FAILURE)
        }
    }
}
