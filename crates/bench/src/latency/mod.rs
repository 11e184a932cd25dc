//! `copyhound bench latency`: time from a copy's appearance on a piracy site
//! to the publisher's alert, with the real product against a farm of
//! loopback sites.
//!
//! The farm ([`farm`]) serves every site of a seeded plan ([`plan`]) on its
//! own loopback address and port. The product ([`product`]) runs as child
//! `copyhound` processes on a scratch namespace, its alerts going to a
//! webhook receiver ([`receiver`]) with `alert_on = "detected"`. Through the
//! API the bench registers the publisher, the works (two chapters each), the
//! sites (hourly, each at its own minute) and crawls every site once (not
//! timed, so the product learns where each work lives). Then the timed phase:
//! the publisher registers each new chapter on its timetable (`PUT` of the
//! work), each site lists its copy after its own delay, and the bench only
//! watches: the product's own schedule and release handling decide when to
//! fetch. At the end [`report`] prints the figures and the final line.

mod farm;
mod plan;
mod product;
mod receiver;
mod report;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, Utc};
use copyhound_core::config::Config;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use crate::args::{BenchLatencyArgs, EvalBackends};
use crate::pipeline::{machine_busy_seconds, process_seconds};
use farm::Farm;
use plan::{INITIAL_CHAPTERS, Plan, PlanParams, SITE_RATE_PER_SECOND};
use product::{Api, PUBLISHER, Product};
use receiver::Receiver;

/// Runs `bench latency`.
pub async fn run(config: &Config, args: BenchLatencyArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.sites >= 1, "--sites must be at least 1");
    anyhow::ensure!(args.sites <= 250 * 250, "--sites must be at most 62500");
    anyhow::ensure!(args.works >= 1, "--works must be at least 1");
    anyhow::ensure!(
        args.minutes * 60.0 >= 30.0,
        "--minutes must give a timed phase of at least 30 s"
    );
    let burst_minutes = args.burst_minutes.unwrap_or(config.crawler.burst_minutes);
    anyhow::ensure!(
        args.quiet_minutes >= 0.0 && args.quiet_minutes <= 30.0,
        "--quiet-minutes must be between 0 and 30"
    );
    anyhow::ensure!(
        args.quiet_minutes == 0.0 || (1..=30).contains(&burst_minutes),
        "--quiet-minutes waits for the last burst to end: give --burst-minutes between 1 and 30"
    );
    let phase_seconds = args.minutes * 60.0;
    let grace_seconds = args
        .grace_seconds
        .map_or(180.0, |grace| grace as f64)
        .min(phase_seconds / 3.0);
    let plan = Arc::new(Plan::new(PlanParams {
        sites: args.sites,
        works: args.works,
        phase_seconds,
        grace_seconds,
        max_delay: args.max_delay_seconds as f64,
        seed: args.seed,
    }));
    let began = Instant::now();
    let farm = Farm::serve(plan.clone()).await?;
    let receiver = Receiver::serve().await?;
    eprintln!(
        "farm: {} sites on loopback ({}..), {} works, {} copies timed in a {:.0} s phase; backends: {}",
        plan.sites.len(),
        farm.bases.first().map_or("", String::as_str),
        plan.works.len(),
        plan.timed().count(),
        phase_seconds,
        match args.backends {
            EvalBackends::Embedded => "embedded".to_string(),
            EvalBackends::Configured => format!("configured, {} worker process(es)", args.workers),
        }
    );
    let mut product = Product::start(
        config,
        args.backends,
        args.workers,
        &receiver.url,
        burst_minutes,
    )
    .await?;
    if !product.alert_on_detected {
        eprintln!(
            "note: this build refuses reports.alerts[].alert_on = \"detected\"; alerts wait for confirmed matches, so none are expected"
        );
    }
    let api = register(&product, &plan, &farm).await?;

    // Phase 1, not timed: the first crawl of every site.
    let site_ids = register_sites(&api, &plan, &farm).await?;
    first_crawls(&api, &site_ids, &mut product, args.first_crawl_seconds).await?;
    settle(&api).await?;

    // Phase 2, timed.
    let bar = ProgressBar::new(phase_seconds as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} s {msg}").expect("valid template"),
    );
    let start = Instant::now();
    let start_wall = Utc::now();
    farm.state.start_clock(start);
    let product_cpu_before = product.cpu_seconds();
    let bench_cpu_before = process_seconds(std::process::id());
    let machine_before = machine_busy_seconds();
    let mut releases = tokio::spawn(release(api.clone(), plan.clone(), start));
    let mut release_lag = None;
    let end = start + Duration::from_secs_f64(phase_seconds);
    let alerts_before = receiver.alerts().len();
    while Instant::now() < end {
        product.check_running()?;
        if release_lag.is_none() && releases.is_finished() {
            release_lag = Some(
                (&mut releases)
                    .await
                    .context("the release task panicked")??,
            );
        }
        let now = Instant::now();
        let appeared = plan
            .timed()
            .filter(|(_, copy)| farm.state.visible(copy, now))
            .count();
        bar.set_position(now.saturating_duration_since(start).as_secs());
        bar.set_message(format!(
            "{appeared} copies appeared, {} alerts, {} fetches",
            receiver.alerts().len() - alerts_before,
            farm.state.request_count()
        ));
        tokio::time::sleep(Duration::from_secs(1).min(end.saturating_duration_since(now))).await;
    }
    let end = Instant::now();
    let product_cpu = product.cpu_seconds() - product_cpu_before;
    let bench_cpu = process_seconds(std::process::id()) - bench_cpu_before;
    let machine_cpu = machine_busy_seconds() - machine_before;
    bar.finish_and_clear();
    let release_lag = match release_lag {
        Some(lag) => lag,
        None => releases.await.context("the release task panicked")??,
    };
    let quiet = if args.quiet_minutes > 0.0 {
        Some(
            quiet_phase(
                &plan,
                &mut product,
                start,
                end,
                burst_minutes,
                args.quiet_minutes,
            )
            .await?,
        )
    } else {
        None
    };

    // What the product said, read before it stops.
    let alerts: Vec<_> = receiver
        .alerts()
        .into_iter()
        .filter(|alert| alert.at <= end)
        .collect();
    let alerts_received = alerts.iter().filter(|alert| alert.at >= start).count();
    let truncated_alerts = alerts.iter().filter(|alert| alert.truncated()).count();
    let detected = detected_pages(&api).await?;
    let alerted = alerted_pages(&api, &alerts, &detected).await?;
    let roles = product.roles();
    let alert_on_detected = product.alert_on_detected;
    drop(product);
    let requests = farm.state.requests();
    if let Some(path) = &args.requests_log {
        write_requests(path, &requests, &farm.bases, start)?;
    }
    let (summary, text) = report::report(&report::Inputs {
        plan: &plan,
        bases: &farm.bases,
        requests: &requests,
        start,
        end,
        start_wall,
        alerted: &alerted,
        alerts_received,
        truncated_alerts,
        detected: &detected,
        product_cpu,
        bench_cpu,
        machine_cpu,
        alert_on_detected,
    });
    print!("{text}");
    match quiet {
        Some((quiet_start, quiet_end, quiet_wall)) => {
            let (_, text) = report::quiet(&report::QuietInputs {
                plan: &plan,
                bases: &farm.bases,
                requests: &requests,
                start: quiet_start,
                end: quiet_end,
                start_wall: quiet_wall,
                burst_minutes,
            });
            print!("{text}");
        }
        None => println!("quiet watching: not measured (--quiet-minutes 0)"),
    }
    println!(
        "product: {} ({}); releases registered {:.1} s late at most; whole run {:.0} s",
        roles.join(", "),
        match args.backends {
            EvalBackends::Embedded => "embedded default",
            EvalBackends::Configured => "configured MongoDB + Redis",
        },
        release_lag,
        began.elapsed().as_secs_f64()
    );
    println!("{}", summary.line());
    Ok(ExitCode::SUCCESS)
}

/// Waits for the last release's burst to end, then lets the product watch
/// quietly for `minutes`; returns that window (and its wall-clock start).
async fn quiet_phase(
    plan: &Plan,
    product: &mut Product,
    start: Instant,
    end: Instant,
    burst_minutes: u64,
    minutes: f64,
) -> anyhow::Result<(Instant, Instant, DateTime<Utc>)> {
    let last_release = plan
        .works
        .iter()
        .flat_map(|work| work.releases.iter().copied())
        .fold(0.0, f64::max);
    // A burst's last visit may still be running at its offset: a minute's margin.
    let quiet_start = (start
        + Duration::from_secs_f64(last_release + (burst_minutes * 60) as f64 + 60.0))
    .max(end);
    let quiet_end = quiet_start + Duration::from_secs_f64(minutes * 60.0);
    let total = quiet_end.saturating_duration_since(end).as_secs();
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} s {msg}").expect("valid template"),
    );
    let mut wall = None;
    loop {
        product.check_running()?;
        let now = Instant::now();
        if now >= quiet_end {
            break;
        }
        if now >= quiet_start && wall.is_none() {
            wall = Some(
                Utc::now() - chrono::Duration::from_std(now - quiet_start).unwrap_or_default(),
            );
        }
        bar.set_position(now.saturating_duration_since(end).as_secs());
        bar.set_message(if now < quiet_start {
            "waiting for the last burst to end"
        } else {
            "quiet watching"
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    bar.finish_and_clear();
    let wall = wall.unwrap_or_else(|| {
        Utc::now() - chrono::Duration::from_std(quiet_end - quiet_start).unwrap_or_default()
    });
    Ok((quiet_start, quiet_end, wall))
}

/// The body of `POST`/`PUT /api/v1/works` with the first `chapters` chapters.
fn work_body(work: &plan::Work, chapters: usize, with_id: bool) -> Value {
    let mut body = json!({
        "title": work.title,
        "author": work.author,
        "chapters": work.chapters[..chapters]
            .iter()
            .map(|chapter| json!({"id": chapter.id, "title": chapter.title, "text": chapter.text()}))
            .collect::<Vec<_>>(),
    });
    if with_id {
        body["id"] = json!(work.id);
    }
    body
}

/// Creates the publisher and its admin key, registers the works' first
/// chapters and waits until they are fingerprinted; returns the client.
async fn register(product: &Product, plan: &Plan, farm: &Farm) -> anyhow::Result<Api> {
    let operator = product.client(&product.admin_key);
    operator
        .call(
            "POST",
            "/api/v1/admin/publishers",
            Some(&json!({"id": PUBLISHER, "name": "时延基准出版社", "kind": "books"})),
        )
        .await?;
    let key = operator
        .call(
            "POST",
            &format!("/api/v1/admin/publishers/{PUBLISHER}/keys"),
            Some(&json!({"role": "admin", "name": "latency bench"})),
        )
        .await?;
    let api = product.client(key["key"].as_str().context("a key answer without `key`")?);
    for work in &plan.works {
        api.call(
            "POST",
            "/api/v1/works",
            Some(&work_body(work, INITIAL_CHAPTERS, true)),
        )
        .await?;
    }
    let started = Instant::now();
    for work in &plan.works {
        loop {
            let detail = api
                .call("GET", &format!("/api/v1/works/{}", work.id), None)
                .await?;
            if detail["fingerprint"]["pending"].as_u64() == Some(0) {
                break;
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(600),
                "the works were not fingerprinted within 10 minutes"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    let _ = farm;
    Ok(api)
}

/// Registers every site, hourly at a minute of its own; returns their ids.
async fn register_sites(api: &Api, plan: &Plan, farm: &Farm) -> anyhow::Result<Vec<String>> {
    let mut ids = Vec::new();
    for (index, site) in plan.sites.iter().enumerate() {
        let created = api
            .call(
                "POST",
                "/api/v1/sites",
                Some(&json!({
                    "name": site.name,
                    "seeds": [format!("{}/", farm.bases[index])],
                    "schedule": format!("{} * * * *", (index * 7) % 60),
                    "rate_limit_per_second": SITE_RATE_PER_SECOND,
                    "concurrency": 1,
                    "max_depth": 4,
                })),
            )
            .await?;
        ids.push(
            created["id"]
                .as_str()
                .context("a site answer without `id`")?
                .to_string(),
        );
    }
    Ok(ids)
}

/// Crawls every site once (the only crawls the bench asks for) and waits
/// for the runs to end, at most `limit_seconds`.
async fn first_crawls(
    api: &Api,
    site_ids: &[String],
    product: &mut Product,
    limit_seconds: u64,
) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for site_id in site_ids {
        let run = api
            .call("POST", &format!("/api/v1/sites/{site_id}/crawls"), None)
            .await?;
        runs.push(
            run["id"]
                .as_str()
                .context("a run answer without `id`")?
                .to_string(),
        );
    }
    let bar = ProgressBar::new(runs.len() as u64).with_style(
        ProgressStyle::with_template(
            "first crawl of every site (not timed) {bar:30} {pos}/{len} {elapsed}",
        )
        .expect("valid template"),
    );
    let started = Instant::now();
    let mut open: Vec<String> = runs;
    while !open.is_empty() {
        product.check_running()?;
        let mut still = Vec::new();
        for run in open {
            let state = api
                .call("GET", &format!("/api/v1/crawls/{run}"), None)
                .await?;
            if matches!(state["status"].as_str(), Some("queued" | "running")) {
                still.push(run);
            }
        }
        open = still;
        bar.set_position(site_ids.len() as u64 - open.len() as u64);
        if started.elapsed() > Duration::from_secs(limit_seconds) {
            bar.finish_and_clear();
            eprintln!(
                "note: {} of {} first crawls still running after {limit_seconds} s; the timed phase starts anyway",
                open.len(),
                site_ids.len()
            );
            return Ok(());
        }
        if !open.is_empty() {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
    bar.finish_and_clear();
    eprintln!(
        "first crawl of {} sites done in {:.0} s",
        site_ids.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Waits until the first crawls' pages are compared: the count of matches
/// holds still for 10 s (at most a minute).
async fn settle(api: &Api) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut last = usize::MAX;
    while started.elapsed() < Duration::from_secs(60) {
        let now = detected_pages(api).await?.len();
        if now == last {
            break;
        }
        last = now;
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    Ok(())
}

/// Registers each release at its second; returns how late the latest one was, seconds.
async fn release(api: Api, plan: Arc<Plan>, start: Instant) -> anyhow::Result<f64> {
    let mut timetable: Vec<(f64, usize, usize)> = plan
        .works
        .iter()
        .enumerate()
        .flat_map(|(work, w)| {
            w.releases
                .iter()
                .enumerate()
                .map(move |(index, at)| (*at, work, INITIAL_CHAPTERS + index))
        })
        .collect();
    timetable.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut lag: f64 = 0.0;
    for (at, work, chapter) in timetable {
        let due = start + Duration::from_secs_f64(at);
        tokio::time::sleep_until(due.into()).await;
        let work = &plan.works[work];
        api.call(
            "PUT",
            &format!("/api/v1/works/{}", work.id),
            Some(&work_body(work, chapter + 1, false)),
        )
        .await
        .with_context(|| format!("releasing {} {}", work.id, work.chapters[chapter].id))?;
        lag = lag.max(Instant::now().saturating_duration_since(due).as_secs_f64());
    }
    Ok(lag)
}

/// Every (arrival, page URL) the alerts name; matches without a URL in the
/// payload are looked up. A payload cut at 100 matches still counts all:
/// every match `detected` in its period (after its `since`, up to its
/// `sent_at`) is taken as alerted by it.
async fn alerted_pages(
    api: &Api,
    alerts: &[receiver::Alert],
    detected: &[(String, DateTime<Utc>)],
) -> anyhow::Result<Vec<(Instant, String)>> {
    let mut urls: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for alert in alerts {
        if alert.truncated() {
            let time = |field: &str| {
                alert.body[field]
                    .as_str()
                    .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
                    .map(|at| at.with_timezone(&Utc))
            };
            if let Some(sent) = time("sent_at") {
                let since = time("since");
                out.extend(
                    detected
                        .iter()
                        .filter(|(_, seen)| {
                            *seen <= sent && since.is_none_or(|since| *seen > since)
                        })
                        .map(|(url, _)| (alert.at, url.clone())),
                );
            }
        }
        for found in alert.matches() {
            let url = match found.url {
                Some(url) => url,
                None => match urls.get(&found.match_id) {
                    Some(url) => url.clone(),
                    None => {
                        let detail = api
                            .call("GET", &format!("/api/v1/matches/{}", found.match_id), None)
                            .await?;
                        let url = detail["page_url"].as_str().unwrap_or_default().to_string();
                        urls.insert(found.match_id.clone(), url.clone());
                        url
                    }
                },
            };
            out.push((alert.at, url));
        }
    }
    Ok(out)
}

/// Every match's (page URL, first detection), from the API.
async fn detected_pages(api: &Api) -> anyhow::Result<Vec<(String, DateTime<Utc>)>> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let path = match &after {
            Some(cursor) => format!("/api/v1/matches?limit=200&after={}", encode(cursor)),
            None => "/api/v1/matches?limit=200".to_string(),
        };
        let page = api.call("GET", &path, None).await?;
        for item in page["items"].as_array().into_iter().flatten() {
            let (Some(url), Some(seen)) = (item["page_url"].as_str(), item["first_seen"].as_str())
            else {
                continue;
            };
            if let Ok(seen) = DateTime::parse_from_rfc3339(seen) {
                out.push((url.to_string(), seen.with_timezone(&Utc)));
            }
        }
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_string()),
            None => return Ok(out),
        }
    }
}

/// Percent-encodes everything but unreserved characters (a query value).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// Writes the farm's request log (see `--requests-log`).
fn write_requests(
    path: &std::path::Path,
    requests: &[farm::Request],
    bases: &[String],
    start: Instant,
) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    for request in requests {
        let seconds = if request.at >= start {
            request.at.duration_since(start).as_secs_f64()
        } else {
            -start.duration_since(request.at).as_secs_f64()
        };
        writeln!(
            out,
            "{seconds:.3}\t{}\t{}\t{}",
            bases[request.site].trim_start_matches("http://"),
            request.status,
            request.path
        )?;
    }
    out.flush()?;
    Ok(())
}
