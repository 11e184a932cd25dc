//! `copyhound sites`, `copyhound crawl`, `copyhound matches`, `copyhound works list`:
//! the CLI mirrors of the API's main actions. `sites add` validates with the same
//! rules and address policy as `POST /api/v1/sites`; `crawl` exits with the
//! run's outcome ([`crawl_exit_code`]); `sites recipients` looks up who to
//! notify, as `GET /api/v1/sites/{site_id}/recipients` does. `sites add` and `works list` refuse a
//! publisher that does not exist, naming it (`copyhound publishers add`).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use copyhound_core::config::{Backend, Config};
use copyhound_core::ids::{CrawlRunId, PublisherId, SiteId};
use copyhound_core::model::{CrawlRunStatus, ExtractionHints, Match, Recipients, Render};
use copyhound_core::ports::{
    MatchFilter, MatchFilterInput, PageRequest, collect_all, recipient_query,
};
use copyhound_core::site::SitePolicy;
use copyhound_crawler::{CrawlProgress, Crawler, HttpFetcher};
use copyhound_intake::sites::{SiteSettings, create_site, update_site};
use copyhound_runtime::Node;
use indicatif::{ProgressBar, ProgressStyle};

use super::publishers::known_publisher;
use crate::cli::{CrawlArgs, MatchesCommand, RenderArg, SitesCommand, WorksListArgs};
use copyhound_bench::PageCounter;

pub async fn sites(config: &Config, command: SitesCommand) -> anyhow::Result<ExitCode> {
    let node = Node::open(config).await?;
    let backends = node.backends();
    let sites = &backends.stores.sites;
    match command {
        SitesCommand::Add(args) => {
            let publisher_id: PublisherId = args.publisher.parse()?;
            known_publisher(config, backends, &publisher_id).await?;
            let render = match args.render {
                _ if args.render_chromium => Render::Chromium,
                RenderArg::Auto => Render::Auto,
                RenderArg::Never => Render::Never,
                RenderArg::Chromium => Render::Chromium,
            };
            let settings = SiteSettings {
                name: Some(args.name.clone()),
                seeds: Some(args.seeds.clone()),
                allow_patterns: Some(args.allow.clone()),
                deny_patterns: Some(args.deny.clone()),
                max_depth: Some(args.max_depth),
                max_pages_per_run: Some(args.max_pages),
                schedule: Some(args.schedule.clone()),
                rate_limit_per_second: Some(args.rate_limit),
                concurrency: Some(args.concurrency),
                charset_override: Some(args.charset.clone()),
                extraction: Some(ExtractionHints {
                    render,
                    ..ExtractionHints::default()
                }),
                ..SiteSettings::default()
            };
            let id = args.id.as_deref().map(str::parse::<SiteId>).transpose()?;
            let site = create_site(
                &backends.ports(),
                &publisher_id,
                id,
                settings,
                &SitePolicy::for_crawler(&config.crawler),
                "sites add",
            )
            .await?;
            println!("added site {} ({})", site.id, site.name);
        }
        SitesCommand::List => {
            let all = collect_all(200, |request| async move {
                sites.list_sites(None, &request).await
            })
            .await?;
            if all.is_empty() {
                println!("no sites (add one with `copyhound sites add`)");
                let demo = config.data_dir.join("demo").join("data");
                if demo.try_exists().unwrap_or(false) {
                    println!(
                        "the demo keeps its own data: `copyhound --data-dir {} sites list`",
                        demo.display()
                    );
                }
            }
            {
                for site in &all {
                    let state = if site.enabled { "enabled" } else { "disabled" };
                    let schedule = site.schedule.as_deref().unwrap_or("on demand");
                    println!(
                        "{}  {}  {state}  {schedule}  {}",
                        site.id,
                        site.name,
                        site.seeds.join(" ")
                    );
                }
            }
        }
        SitesCommand::Show { site } => {
            let site = sites.get_site(&site.parse()?).await?;
            println!("{}", serde_json::to_string_pretty(&site)?);
            let runs = sites
                .list_crawl_runs(
                    &site.id,
                    &PageRequest {
                        after: None,
                        limit: 5,
                    },
                )
                .await?;
            for run in runs.items {
                println!(
                    "run {}  {:?}  fetched {} new {} changed {} failed {:?} rendered {} unreadable {:?}",
                    run.id,
                    run.status.as_str(),
                    run.counters.fetched,
                    run.counters.new_pages,
                    run.counters.changed_pages,
                    run.counters.failed,
                    run.counters.rendered,
                    run.counters.unreadable
                );
            }
        }
        SitesCommand::Disable { site } => {
            let found = sites.get_site(&site.parse()?).await?;
            let disabled = update_site(
                &backends.ports(),
                &found.publisher_id,
                &found.id,
                SiteSettings {
                    enabled: Some(false),
                    ..SiteSettings::default()
                },
                &SitePolicy::for_crawler(&config.crawler),
                "sites disable",
            )
            .await?;
            println!("disabled site {}", disabled.id);
        }
        SitesCommand::Suggestions { publisher, status } => {
            let publisher_id: PublisherId = publisher.parse()?;
            known_publisher(config, backends, &publisher_id).await?;
            let status = status
                .map(|status| serde_json::from_value(serde_json::Value::String(status)))
                .transpose()?;
            let publisher_id = &publisher_id;
            let all = collect_all(200, |request| async move {
                sites.list_suggestions(publisher_id, status, &request).await
            })
            .await?;
            if all.is_empty() {
                println!("no suggested sites");
            }
            for suggestion in &all {
                let check = match &suggestion.verification {
                    Some(check) => match (&check.error, check.status) {
                        (Some(error), _) => format!("unreachable: {error}"),
                        (None, status) => format!(
                            "{} \"{}\", {} Chinese characters, names {} of your works",
                            status.map_or_else(|| "?".to_string(), |status| status.to_string()),
                            check.title.as_deref().unwrap_or(""),
                            check.han_chars,
                            check.carries.len()
                        ),
                    },
                    None => "not checked yet".to_string(),
                };
                println!(
                    "{}  {}  {}  {} reason(s) from {} watched site(s)  {check}",
                    suggestion.id,
                    suggestion.status.as_str(),
                    suggestion.origin,
                    suggestion.reason_count,
                    suggestion.sites_pointing()
                );
            }
        }
        SitesCommand::Accept {
            publisher,
            suggestion,
        } => {
            let publisher_id: PublisherId = publisher.parse()?;
            let (_, site) = copyhound_intake::suggestions::accept(
                &backends.ports(),
                &publisher_id,
                &suggestion,
                &SitePolicy::for_crawler(&config.crawler),
                "sites accept",
            )
            .await?;
            println!(
                "accepted: site {} ({}), first crawl queued; schedule {}",
                site.id,
                site.seeds.join(" "),
                site.schedule.as_deref().unwrap_or("none")
            );
        }
        SitesCommand::Dismiss {
            publisher,
            suggestion,
        } => {
            let publisher_id: PublisherId = publisher.parse()?;
            let dismissed = copyhound_intake::suggestions::dismiss(
                sites.as_ref(),
                &publisher_id,
                &suggestion,
                "sites dismiss",
            )
            .await?;
            println!("dismissed {} ({})", dismissed.id, dismissed.origin);
        }
        SitesCommand::ImportSources { publisher, file } => {
            let publisher_id: PublisherId = publisher.parse()?;
            known_publisher(config, backends, &publisher_id).await?;
            let limit = copyhound_intake::suggestions::MAX_BOOK_SOURCE_BYTES as u64;
            let size = std::fs::metadata(&file)
                .with_context(|| format!("cannot read {}", file.display()))?
                .len();
            anyhow::ensure!(
                size <= limit,
                "{} is {size} bytes; book-source files are read up to {limit}",
                file.display()
            );
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let name = file.file_name().map_or_else(
                || file.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            );
            let (recorded, skipped) = copyhound_intake::suggestions::import_book_sources(
                &backends.ports(),
                &publisher_id,
                &name,
                &bytes,
            )
            .await?;
            println!(
                "{} new suggested site(s), {} updated, {} entries skipped; their checks are queued (run workers, or `copyhound serve`)",
                recorded.new.len(),
                recorded.updated,
                skipped + recorded.skipped
            );
        }
        SitesCommand::Recipients { site, json } => {
            let found = sites.get_site(&site.parse()?).await?;
            let lookup = node.recipients()?.context(
                "recipient lookups are not configured: set rdap.bootstrap \
                 (COPYHOUND_RDAP_BOOTSTRAP), e.g. https://data.iana.org/rdap/",
            )?;
            let query = recipient_query(&found, backends.stores.pages.as_ref()).await?;
            let recipients = lookup
                .recipients(&query)
                .await
                .with_context(|| format!("cannot look up who to notify about {}", found.id))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&recipients)?);
            } else {
                print_recipients(&recipients);
            }
        }
    }
    backends.persist().await?;
    Ok(ExitCode::SUCCESS)
}

/// Prints who to notify, the address to send to first on the first line.
fn print_recipients(recipients: &Recipients) {
    let or_dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
    println!(
        "send to: {}",
        recipients
            .primary_email()
            .unwrap_or("(no abuse address found)")
    );
    if let Some(cdn) = &recipients.cdn {
        println!(
            "cdn: {} ({}): {} {} (forwards notices to the origin host)",
            cdn.name,
            cdn.detected_by,
            or_dash(&cdn.abuse_email),
            cdn.abuse_url.as_deref().unwrap_or_default()
        );
    }
    if let Some(hosting) = &recipients.hosting {
        println!(
            "hosting: {} {} {} ({}): {} {}",
            hosting.address,
            or_dash(&hosting.name),
            or_dash(&hosting.cidr),
            or_dash(&hosting.organization),
            or_dash(&hosting.abuse_email),
            hosting.abuse_phone.as_deref().unwrap_or_default()
        );
    }
    if let Some(registrar) = &recipients.registrar {
        println!(
            "registrar of {}: {} (IANA {}): {} {} {}",
            recipients.domain.as_deref().unwrap_or(&recipients.host),
            registrar.name,
            or_dash(&registrar.iana_id),
            or_dash(&registrar.abuse_email),
            registrar.abuse_phone.as_deref().unwrap_or_default(),
            registrar.url.as_deref().unwrap_or_default()
        );
    }
    for problem in &recipients.problems {
        println!("not found: {problem}");
    }
    for source in &recipients.sources {
        println!("asked: {source}");
    }
}

/// Exit code of `copyhound crawl` for a run that fetched nothing (or was cancelled).
pub const EXIT_CRAWL_FAILED: u8 = 3;
/// Exit code of `copyhound crawl` for a run where some pages failed.
pub const EXIT_CRAWL_PARTIAL: u8 = 4;

/// Returns the exit code of `copyhound crawl` for a finished run: 0 succeeded,
/// 3 failed or cancelled, 4 partial (1 is left to errors that stop any command
/// before or while the crawl runs).
pub fn crawl_exit_code(status: CrawlRunStatus) -> ExitCode {
    match status {
        CrawlRunStatus::Succeeded => ExitCode::SUCCESS,
        CrawlRunStatus::Partial => ExitCode::from(EXIT_CRAWL_PARTIAL),
        CrawlRunStatus::Queued
        | CrawlRunStatus::Running
        | CrawlRunStatus::Failed
        | CrawlRunStatus::Cancelled => ExitCode::from(EXIT_CRAWL_FAILED),
    }
}

pub async fn crawl(config: &Config, args: CrawlArgs) -> anyhow::Result<ExitCode> {
    let node = Node::open(config).await?;
    let backends = node.backends();
    let site_id: SiteId = args.site.parse()?;
    let site = backends
        .stores
        .sites
        .get_site(&site_id)
        .await
        .context("unknown site")?;
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let counter = PageCounter::with_bar(bar.clone());
    let crawler = Crawler::new(
        config.crawler.clone(),
        Arc::new(
            HttpFetcher::new(config.crawler.clone())?.with_shared_pacing(backends.queue.clone()),
        ),
        backends.stores.sites.clone(),
        backends.stores.pages.clone(),
        backends.queue.clone(),
    );
    let run = crawler
        .run_crawl(
            &site.id,
            &CrawlRunId::generate(),
            &counter as &dyn CrawlProgress,
        )
        .await?;
    bar.finish_and_clear();
    let counters = &run.counters;
    println!(
        "crawl of {} {}: fetched {}, new {}, changed {}, {} KiB",
        site.name,
        run.status.as_str(),
        counters.fetched,
        counters.new_pages,
        counters.changed_pages,
        counters.bytes / 1024
    );
    for (reason, count) in &counters.skipped {
        println!("  skipped {count} ({reason})");
    }
    for (reason, count) in &counters.failed {
        println!("  failed {count} ({reason})");
    }
    if counters.rendered > 0 {
        println!(
            "  rendered {} ({:.1} s in the browser)",
            counters.rendered,
            counters.render_ms as f64 / 1000.0
        );
    }
    for (reason, count) in &counters.unreadable {
        println!("  unreadable {count} ({reason}: the text looks like no language)");
    }
    if run.status != CrawlRunStatus::Succeeded {
        for error in &run.recent_errors {
            eprintln!("  error: {error}");
        }
    }
    if matches!(config.queue_backend(), Backend::Embedded(_)) && !args.no_compare {
        backends.recover().await?;
        let outcome = node
            .worker(None, Arc::new(copyhound_crawler::NoProgress))?
            .drain()
            .await?;
        println!(
            "compared: {} tasks ({} failed)",
            outcome.received, outcome.failed
        );
    }
    backends.persist().await?;
    Ok(crawl_exit_code(run.status))
}

pub async fn works_list(config: &Config, args: WorksListArgs) -> anyhow::Result<ExitCode> {
    let node = Node::open(config).await?;
    let backends = node.backends();
    let publisher_id: PublisherId = args.publisher.parse()?;
    known_publisher(config, backends, &publisher_id).await?;
    let works = &backends.stores.works;
    let publisher_id = &publisher_id;
    let all = collect_all(200, |request| async move {
        works.list_works(publisher_id, &request).await
    })
    .await?;
    if all.is_empty() {
        println!(
            "no works for publisher {publisher_id} (register some with `copyhound works import DIR`)"
        );
    }
    for work in &all {
        println!(
            "{}  {}  {}  {:?}",
            work.id, work.title, work.author, work.kind
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn matches(config: &Config, command: MatchesCommand) -> anyhow::Result<ExitCode> {
    let node = Node::open(config).await?;
    let backends = node.backends();
    let (filter, export) = match &command {
        MatchesCommand::List(args) => (args.filter()?, None),
        MatchesCommand::Export { filter, format } => (filter.filter()?, Some(*format)),
    };
    let store = &backends.stores.matches;
    let filter = &filter;
    let found: Vec<Match> = collect_all(200, |request| async move {
        store.list_matches(filter, &request).await
    })
    .await?;
    match export {
        None => {
            for item in &found {
                println!(
                    "{}  {:<10} score {:.2}  chapter {:>5.1}%  {}/{}  {}",
                    item.id,
                    item.status.as_str(),
                    item.score,
                    item.chapter_coverage * 100.0,
                    item.work_id,
                    item.chapter_id,
                    item.page_url
                );
            }
            println!("{} matches", found.len());
        }
        Some(crate::cli::ExportFormat::Json) => {
            for item in &found {
                println!("{}", serde_json::to_string(item)?);
            }
        }
        Some(crate::cli::ExportFormat::Csv) => {
            println!(
                "match_id,status,score,chapter_coverage,page_coverage,work_id,chapter_id,page_url,first_seen,last_seen"
            );
            for item in &found {
                println!(
                    "{},{},{:.4},{:.4},{:.4},{},{},\"{}\",{},{}",
                    item.id,
                    item.status.as_str(),
                    item.score,
                    item.chapter_coverage,
                    item.page_coverage,
                    item.work_id,
                    item.chapter_id,
                    item.page_url.replace('"', "\"\""),
                    item.first_seen.to_rfc3339(),
                    item.last_seen.to_rfc3339()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds a match filter from CLI values.
pub fn match_filter(
    publisher: &str,
    work: Option<&str>,
    site: Option<&str>,
    status: Option<&str>,
    min_score: Option<f32>,
    sort: Option<&str>,
) -> anyhow::Result<MatchFilter> {
    let input = MatchFilterInput {
        work_id: work,
        site_id: site,
        status,
        min_score,
        sort,
        ..MatchFilterInput::default()
    };
    Ok(MatchFilter::parse(&publisher.parse()?, &input)?)
}
