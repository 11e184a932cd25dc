//! `copyhound report`: infringement reports from the stores, in HTML (with
//! charts and side-by-side evidence), PDF, CSV or JSON; the evidence package
//! (WARC); takedown notices (a document or e-mail drafts).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::{NaiveDate, Utc};
use copyhound_core::config::Config;
use copyhound_core::ids::{PublisherId, SiteId, WorkId};
use copyhound_core::model::{ReportFormat, ReportScope, ReviewScope};
use copyhound_core::ports::collect_all;
use copyhound_report::warc::evidence_for;
use copyhound_report::{ReportInput, build_report_data, load_report_input, render};

use crate::cli::{ReportArgs, ReportFormatArg, ReviewArg};
use copyhound_runtime::Backends;

pub async fn run(config: &Config, args: ReportArgs) -> anyhow::Result<ExitCode> {
    let backends = Backends::open(config).await?;
    let stores = &backends.stores;
    let publisher_id: PublisherId = match (&args.publisher, &args.work) {
        (Some(publisher), _) => publisher.parse()?,
        (None, Some(work)) => {
            stores
                .works
                .get_work_any(&work.parse::<WorkId>()?)
                .await?
                .publisher_id
        }
        (None, None) => bail!("name the report's scope with --publisher or --work"),
    };
    let since = day_flag("--since", args.since.as_deref())?;
    let until = day_flag("--until", args.until.as_deref())?;
    if let (Some(since), Some(until)) = (since, until)
        && until <= since
    {
        bail!("--until must come after --since");
    }
    let format = match args.format {
        ReportFormatArg::Html => ReportFormat::Html,
        ReportFormatArg::Pdf => ReportFormat::Pdf,
        ReportFormatArg::Csv => ReportFormat::Csv,
        ReportFormatArg::Json => ReportFormat::Json,
        ReportFormatArg::Warc => ReportFormat::Warc,
        ReportFormatArg::Takedown => ReportFormat::Takedown,
        ReportFormatArg::TakedownEmail => ReportFormat::TakedownEmail,
    };
    let review = match args.review {
        Some(ReviewArg::Confirmed) => ReviewScope::Confirmed,
        Some(ReviewArg::ConfirmedAndUnreviewed) => ReviewScope::ConfirmedAndUnreviewed,
        Some(ReviewArg::All) => ReviewScope::All,
        None => ReviewScope::default_for(format),
    };
    let scope = ReportScope {
        publisher_id: publisher_id.clone(),
        work_id: args.work.as_deref().map(str::parse).transpose()?,
        site_id: args.site.as_deref().map(str::parse::<SiteId>).transpose()?,
        since,
        until,
        review: Some(review),
    };
    let publisher = super::publishers::known_publisher(config, &backends, &publisher_id).await?;
    let mut input = load_report_input(
        stores.matches.as_ref(),
        stores.works.as_ref(),
        stores.sites.as_ref(),
        &scope,
    )
    .await?;
    input.set_publisher(publisher);
    if format == ReportFormat::Warc {
        return write_evidence(&backends, &input, &args.out).await;
    }
    let (matches, bytes) = write_report(&input, format, &args.out)?;
    println!(
        "wrote {} ({bytes} bytes, {matches} matches, review scope {})",
        args.out.display(),
        review.as_str()
    );
    Ok(ExitCode::SUCCESS)
}

/// Returns the start (UTC midnight) of the day given to `flag`.
fn day_flag(flag: &str, day: Option<&str>) -> anyhow::Result<Option<chrono::DateTime<Utc>>> {
    let Some(day) = day else { return Ok(None) };
    Ok(Some(
        NaiveDate::parse_from_str(day, "%Y-%m-%d")
            .with_context(|| format!("{flag} {day:?}: expected YYYY-MM-DD"))?
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc(),
    ))
}

/// Writes the evidence package of `input`'s matches: `out` (WARC) and
/// `<out>.manifest.json`.
async fn write_evidence(
    backends: &Backends,
    input: &ReportInput,
    out: &Path,
) -> anyhow::Result<ExitCode> {
    let file_name = out.file_name().map_or_else(
        || "evidence.warc".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let package = evidence_for(
        backends.stores.pages.as_ref(),
        &input.matches,
        &file_name,
        Utc::now(),
    )
    .await?;
    if let Some(parent) = out.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(out, &package.warc)
        .with_context(|| format!("cannot write {}", out.display()))?;
    let mut manifest_path = out.as_os_str().to_owned();
    manifest_path.push(".manifest.json");
    let manifest_path = std::path::PathBuf::from(manifest_path);
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&package.manifest)?,
    )
    .with_context(|| format!("cannot write {}", manifest_path.display()))?;
    println!(
        "wrote {} ({} bytes, {} captures for {} matches, sha256 {}) and {}",
        out.display(),
        package.warc.len(),
        package.manifest.captures.len(),
        input.matches.len(),
        package.manifest.warc_sha256,
        manifest_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Renders `input` as `format` into `out`; returns (matches, bytes written).
pub fn write_report(
    input: &ReportInput,
    format: ReportFormat,
    out: &Path,
) -> anyhow::Result<(usize, usize)> {
    let data = build_report_data(input);
    let rendered = render(&data, format)?;
    if let Some(parent) = out.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(out, &rendered).with_context(|| format!("cannot write {}", out.display()))?;
    Ok((input.matches.len(), rendered.len()))
}

/// Returns the report input of every publisher with matches (the demo's reports).
pub async fn inputs_for_all_publishers(backends: &Backends) -> anyhow::Result<Vec<ReportInput>> {
    let stores = &backends.stores;
    let mut inputs = Vec::new();
    let publishers = collect_all(200, |request| async move {
        stores.publishers.list_publishers(&request).await
    })
    .await?;
    {
        for publisher in publishers {
            let scope = ReportScope::of_publisher(publisher.id.clone());
            let mut input = load_report_input(
                stores.matches.as_ref(),
                stores.works.as_ref(),
                stores.sites.as_ref(),
                &scope,
            )
            .await?;
            if input.matches.is_empty() {
                continue;
            }
            input.set_publisher(publisher);
            inputs.push(input);
        }
    }
    Ok(inputs)
}
