//! The figures of a run: latency from a copy's appearance to its alert,
//! missed copies (and where each was lost), politeness per host, fetches and
//! CPU per alert, and the one final line.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::farm::Request;
use super::plan::{DISALLOWED_PREFIX, Plan, SITE_RATE_PER_SECOND};

/// Slack on the shortest interval a host asked for (timer jitter).
const INTERVAL_SLACK: f64 = 0.9;

/// What a run measured, as `report` reads it.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// Per site, `http://<address>:<port>`.
    pub bases: &'a [String],
    /// Every request the farm answered.
    pub requests: &'a [Request],
    /// Start and end of the timed phase.
    pub start: Instant,
    /// End of the timed phase.
    pub end: Instant,
    /// The wall clock at `start`.
    pub start_wall: DateTime<Utc>,
    /// Alerted pages: (arrival, page URL), every alert's every match.
    pub alerted: &'a [(Instant, String)],
    /// Alerts received during the timed phase.
    pub alerts_received: usize,
    /// Alert payloads that said they left matches out.
    pub truncated_alerts: usize,
    /// Detected pages: (page URL, first detection).
    pub detected: &'a [(String, DateTime<Utc>)],
    /// CPU seconds of the product's processes during the timed phase.
    pub product_cpu: f64,
    /// CPU seconds of this process (farm, receiver, bench) during it.
    pub bench_cpu: f64,
    /// Busy CPU seconds of the whole machine during it.
    pub machine_cpu: f64,
    /// Whether the build alerts on detection (`alert_on = "detected"`).
    pub alert_on_detected: bool,
}

/// The headline figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Latency percentiles over alerted copies, seconds.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
    /// Copies that appeared and got no alert.
    pub missed: usize,
    /// Copies that appeared in the timed phase.
    pub copies: usize,
    /// Politeness violations (requests).
    pub violations: usize,
    /// Farm requests in the timed phase per alerted copy.
    pub fetches_per_alert: Option<f64>,
    /// Initial copies (on the sites before the timed phase) that were alerted.
    pub initial_alerted: usize,
    /// Initial copies.
    pub initial: usize,
    /// Hosts the product fetched from.
    pub hosts_fetched: usize,
}

impl Summary {
    /// The one final line.
    pub fn line(&self) -> String {
        format!(
            "latency: p50 {} s, p95 {} s, max {} s, missed {} of {}, politeness violations {}, fetches per alert {}",
            seconds(self.p50),
            seconds(self.p95),
            seconds(self.max),
            self.missed,
            self.copies,
            self.violations,
            self.fetches_per_alert
                .map_or_else(|| "n/a".to_string(), |value| format!("{value:.1}"))
        )
    }
}

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |value| format!("{value:.1}"))
}

/// `host:port/path` of a URL: how the farm's pages and the product's URLs meet.
pub fn page_key(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split(['#', '?']).next().unwrap_or(rest);
    match rest.split_once('/') {
        Some((host, path)) => format!("{}/{path}", host.to_ascii_lowercase()),
        None => format!("{}/", rest.to_ascii_lowercase()),
    }
}

/// What the quiet window measured, as [`quiet`] reads it.
#[derive(Debug)]
pub struct QuietInputs<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// Per site, `http://<address>:<port>`.
    pub bases: &'a [String],
    /// Every request the farm answered.
    pub requests: &'a [Request],
    /// Start of the quiet window (every burst over).
    pub start: Instant,
    /// End of the quiet window.
    pub end: Instant,
    /// The wall clock at `start`.
    pub start_wall: DateTime<Utc>,
    /// The product's burst length, for the report.
    pub burst_minutes: u64,
}

/// Quiet watching's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuietSummary {
    /// Hosts measured (those without a scheduled crawl in the window).
    pub hosts: usize,
    /// Hosts fetched from in the window.
    pub hosts_fetched: usize,
    /// Requests to measured hosts in the window.
    pub requests: usize,
    /// Most requests to one host in any 60 s of the window.
    pub busiest_minute: usize,
    /// Hosts with more than one request in some 60 s.
    pub over: usize,
    /// Hosts left out: their hourly schedule falls in the window.
    pub scheduled: usize,
}

/// The figures of quiet watching: every host's requests in any 60 s of the
/// window, leaving out the hosts whose own hourly crawl (the site's schedule,
/// `(index * 7) % 60` past the hour) starts in it or just before it.
pub fn quiet(inputs: &QuietInputs<'_>) -> (QuietSummary, String) {
    let window = inputs.end.saturating_duration_since(inputs.start);
    let scheduled_in = |index: usize| {
        let minute = u32::try_from((index * 7) % 60).unwrap_or(0);
        // A full crawl runs a few minutes at the site's rate: from 5 minutes before.
        let from = inputs.start_wall - chrono::Duration::minutes(5);
        let minutes = (window.as_secs() / 60 + 6) as i64;
        (0..=minutes)
            .any(|k| chrono::Timelike::minute(&(from + chrono::Duration::minutes(k))) == minute)
    };
    let mut summary = QuietSummary {
        hosts: 0,
        hosts_fetched: 0,
        requests: 0,
        busiest_minute: 0,
        over: 0,
        scheduled: 0,
    };
    let mut by_site: Vec<Vec<Instant>> = vec![Vec::new(); inputs.plan.sites.len()];
    for request in inputs.requests {
        if request.at >= inputs.start && request.at <= inputs.end {
            by_site[request.site].push(request.at);
        }
    }
    let mut over_hosts = Vec::new();
    for (index, times) in by_site.iter_mut().enumerate() {
        if scheduled_in(index) {
            summary.scheduled += 1;
            continue;
        }
        summary.hosts += 1;
        if times.is_empty() {
            continue;
        }
        summary.hosts_fetched += 1;
        summary.requests += times.len();
        times.sort();
        let mut left = 0;
        let mut busiest = 0;
        for right in 0..times.len() {
            while times[right].saturating_duration_since(times[left]) >= Duration::from_secs(60) {
                left += 1;
            }
            busiest = busiest.max(right - left + 1);
        }
        summary.busiest_minute = summary.busiest_minute.max(busiest);
        if busiest > 1 {
            summary.over += 1;
            over_hosts.push(format!(
                "{} ({busiest} in 60 s)",
                inputs.bases[index].trim_start_matches("http://")
            ));
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== quiet watching ({:.1} min, after every burst of {} min ended)",
        window.as_secs_f64() / 60.0,
        inputs.burst_minutes
    );
    let _ = writeln!(
        out,
        "hosts measured: {} ({} left out: their hourly crawl falls in the window); fetched from: {}; requests: {}",
        summary.hosts, summary.scheduled, summary.hosts_fetched, summary.requests
    );
    let _ = writeln!(
        out,
        "busiest host minute: {} request(s); hosts above one request a minute: {}{}",
        summary.busiest_minute,
        summary.over,
        if over_hosts.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                over_hosts
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    (summary, out)
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// Computes the figures and writes the report; returns the summary and the text.
pub fn report(inputs: &Inputs<'_>) -> (Summary, String) {
    let plan = inputs.plan;
    let mut out = String::new();
    // Page key -> copy.
    let mut copy_of: HashMap<String, usize> = HashMap::new();
    for (index, copy) in plan.copies.iter().enumerate() {
        let site = &plan.sites[copy.site];
        for part in 0..site.parts() {
            let url = format!(
                "{}{}",
                inputs.bases[copy.site],
                site.chapter_path(copy.work, copy.chapter, part)
            );
            copy_of.insert(page_key(&url), index);
        }
    }
    let mut first_alert: HashMap<usize, Instant> = HashMap::new();
    for (at, url) in inputs.alerted {
        if let Some(&copy) = copy_of.get(&page_key(url)) {
            let entry = first_alert.entry(copy).or_insert(*at);
            *entry = (*entry).min(*at);
        }
    }
    let mut first_detection: HashMap<usize, DateTime<Utc>> = HashMap::new();
    for (url, at) in inputs.detected {
        if let Some(&copy) = copy_of.get(&page_key(url)) {
            let entry = first_detection.entry(copy).or_insert(*at);
            *entry = (*entry).min(*at);
        }
    }
    // Per copy: its pages fetched with a 200 after it appeared.
    let mut fetched_after: HashMap<usize, Instant> = HashMap::new();
    for request in inputs
        .requests
        .iter()
        .filter(|request| request.status == 200)
    {
        let url = format!("{}{}", inputs.bases[request.site], request.path);
        if let Some(&copy) = copy_of.get(&page_key(&url)) {
            fetched_after.entry(copy).or_insert(request.at);
        }
    }

    let mut latencies = Vec::new();
    let mut detections = Vec::new();
    let mut first_fetches = Vec::new();
    let (mut never_fetched, mut not_detected, mut not_alerted) = (0, 0, 0);
    let mut copies = 0;
    let (mut initial, mut initial_alerted) = (0, 0);
    for (index, copy) in plan.copies.iter().enumerate() {
        let Some(appears) = copy.appears else {
            initial += 1;
            if first_alert.contains_key(&index) {
                initial_alerted += 1;
            }
            continue;
        };
        copies += 1;
        let appeared = inputs.start + Duration::from_secs_f64(appears);
        let appeared_wall =
            inputs.start_wall + chrono::Duration::milliseconds((appears * 1000.0) as i64);
        if let Some(fetched) = fetched_after.get(&index) {
            first_fetches.push(fetched.saturating_duration_since(appeared).as_secs_f64());
        }
        if let Some(detected) = first_detection.get(&index) {
            detections
                .push(((*detected - appeared_wall).num_milliseconds() as f64 / 1000.0).max(0.0));
        }
        match first_alert.get(&index) {
            Some(alerted) => {
                latencies.push(alerted.saturating_duration_since(appeared).as_secs_f64());
            }
            None if !fetched_after.contains_key(&index) => never_fetched += 1,
            None if !first_detection.contains_key(&index) => not_detected += 1,
            None => not_alerted += 1,
        }
    }
    for values in [&mut latencies, &mut detections, &mut first_fetches] {
        values.sort_by(f64::total_cmp);
    }
    let missed = copies - latencies.len();

    // Politeness.
    let phase = inputs
        .end
        .saturating_duration_since(inputs.start)
        .as_secs_f64()
        .max(1.0);
    let mut by_site: Vec<Vec<&Request>> = vec![Vec::new(); plan.sites.len()];
    for request in inputs.requests {
        by_site[request.site].push(request);
    }
    let mut violations = 0;
    let mut reasons: Vec<String> = Vec::new();
    let mut min_interval_all: Option<f64> = None;
    let mut rates = Vec::new();
    let mut window_max_all = 0;
    let (mut busy_minutes, mut host_minutes) = (0, 0);
    let mut hosts_fetched = 0;
    let mut timed_fetches = 0;
    for (index, requests) in by_site.iter_mut().enumerate() {
        if requests.is_empty() {
            continue;
        }
        hosts_fetched += 1;
        requests.sort_by_key(|request| request.at);
        let site = &plan.sites[index];
        let host = inputs.bases[index].trim_start_matches("http://");
        let disallowed: Vec<&&Request> = requests
            .iter()
            .filter(|request| site.robots.disallow && request.path.starts_with(DISALLOWED_PREFIX))
            .collect();
        if !disallowed.is_empty() {
            violations += disallowed.len();
            reasons.push(format!(
                "{host}: {} fetch(es) under {DISALLOWED_PREFIX}, which robots.txt disallows",
                disallowed.len()
            ));
        }
        if requests[0].path != "/robots.txt" {
            violations += 1;
            reasons.push(format!(
                "{host}: first request {} before robots.txt",
                requests[0].path
            ));
        }
        let required =
            f64::from(site.robots.crawl_delay.unwrap_or(0)).max(1.0 / SITE_RATE_PER_SECOND);
        let mut close = 0;
        let mut min_interval: Option<f64> = None;
        let mut closest = (String::new(), String::new());
        for pair in requests.windows(2) {
            let gap = pair[1]
                .at
                .saturating_duration_since(pair[0].at)
                .as_secs_f64();
            if min_interval.is_none_or(|min| gap < min) {
                closest = (pair[0].path.clone(), pair[1].path.clone());
            }
            min_interval = Some(min_interval.map_or(gap, |min: f64| min.min(gap)));
            if gap < required * INTERVAL_SLACK {
                close += 1;
            }
        }
        if let Some(min) = min_interval {
            min_interval_all = Some(min_interval_all.map_or(min, |all: f64| all.min(min)));
        }
        if close > 0 {
            violations += close;
            reasons.push(format!(
                "{host}: {close} request(s) closer than {required:.1} s to the one before (min {:.2} s, {} then {}; {})",
                min_interval.unwrap_or(0.0),
                closest.0,
                closest.1,
                match site.robots.crawl_delay {
                    Some(delay) => format!("Crawl-delay {delay}"),
                    None => format!("registered at {SITE_RATE_PER_SECOND} request/s"),
                }
            ));
        }
        // The timed phase: requests a minute, the busiest 60 s, busy minutes.
        let timed: Vec<Instant> = requests
            .iter()
            .map(|request| request.at)
            .filter(|at| *at >= inputs.start && *at <= inputs.end)
            .collect();
        timed_fetches += timed.len();
        rates.push(timed.len() as f64 * 60.0 / phase);
        let mut left = 0;
        for right in 0..timed.len() {
            while timed[right].saturating_duration_since(timed[left]) >= Duration::from_secs(60) {
                left += 1;
            }
            window_max_all = window_max_all.max(right - left + 1);
        }
        let minutes = (phase / 60.0).ceil() as usize;
        let mut per_minute = vec![0_usize; minutes.max(1)];
        for at in &timed {
            let minute = (at.saturating_duration_since(inputs.start).as_secs_f64() / 60.0) as usize;
            let last = per_minute.len() - 1;
            per_minute[minute.min(last)] += 1;
        }
        host_minutes += per_minute.len();
        busy_minutes += per_minute.iter().filter(|count| **count > 1).count();
    }
    rates.sort_by(f64::total_cmp);
    let alerted_copies = latencies.len();
    let fetches_per_alert =
        (alerted_copies > 0).then(|| timed_fetches as f64 / alerted_copies as f64);

    let summary = Summary {
        p50: percentile(&latencies, 0.5),
        p95: percentile(&latencies, 0.95),
        max: latencies.last().copied(),
        missed,
        copies,
        violations,
        fetches_per_alert,
        initial_alerted,
        initial,
        hosts_fetched,
    };

    let triple = |values: &[f64]| {
        format!(
            "p50 {} s, p95 {} s, max {} s ({} copies)",
            seconds(percentile(values, 0.5)),
            seconds(percentile(values, 0.95)),
            seconds(values.last().copied()),
            values.len()
        )
    };
    let _ = writeln!(
        out,
        "== time to alert ({} sites, {} works)",
        plan.sites.len(),
        plan.works.len()
    );
    let _ = writeln!(
        out,
        "copies: {copies} appeared in the timed phase ({:.0} s, none in its last {:.0} s); {} released chapters never copied by a site carrying the work; {} would appear after the window (not counted); {initial} on the sites from the start (not timed, {initial_alerted} of them alerted)",
        plan.phase_seconds,
        plan.phase_seconds - plan.last_appearance,
        plan.never_copied,
        plan.after_window
    );
    let _ = writeln!(
        out,
        "appearance -> alert at the webhook: {}",
        triple(&latencies)
    );
    let _ = writeln!(
        out,
        "appearance -> match first seen:     {}",
        triple(&detections)
    );
    let _ = writeln!(
        out,
        "appearance -> first fetch of a page of it: {}",
        triple(&first_fetches)
    );
    let _ = writeln!(
        out,
        "missed {missed} of {copies}: {never_fetched} never fetched after they appeared, {not_detected} fetched but not detected, {not_alerted} detected but not alerted{}",
        if inputs.alert_on_detected {
            ""
        } else {
            " (this build has no alert_on = \"detected\": alerts wait for confirmed matches, which nobody confirms here)"
        }
    );
    let _ = writeln!(
        out,
        "alerts: {} webhook deliveries in the timed phase{}",
        inputs.alerts_received,
        if inputs.truncated_alerts > 0 {
            format!(
                "; {} payload(s) of the run cut at 100 matches (their other matches counted by first_seen within the alert's period)",
                inputs.truncated_alerts
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "politeness: {violations} violation(s) on {hosts_fetched} hosts fetched; shortest interval between two requests to one host {} s",
        min_interval_all.map_or_else(|| "n/a".to_string(), |value| format!("{value:.2}"))
    );
    for reason in reasons.iter().take(20) {
        let _ = writeln!(out, "  {reason}");
    }
    if reasons.len() > 20 {
        let _ = writeln!(out, "  ... and {} more hosts", reasons.len() - 20);
    }
    let _ = writeln!(
        out,
        "requests per host in the timed phase: {} a minute median, {} max; busiest 60 s on one host {} requests; host-minutes with more than one request {busy_minutes} of {host_minutes}",
        percentile(&rates, 0.5).map_or_else(|| "n/a".into(), |rate| format!("{rate:.2}")),
        rates
            .last()
            .map_or_else(|| "n/a".into(), |rate| format!("{rate:.2}")),
        window_max_all
    );
    let per_alert = |value: f64| {
        if alerted_copies == 0 {
            "n/a".to_string()
        } else {
            format!("{:.3}", value / alerted_copies as f64)
        }
    };
    let _ = writeln!(
        out,
        "cost in the timed phase: {timed_fetches} fetches, {} per alerted copy; CPU s per alerted copy: product {} (total {:.1} s), farm and bench {} (total {:.1} s), machine {} (total {:.1} s)",
        fetches_per_alert.map_or_else(|| "n/a".into(), |value| format!("{value:.1}")),
        per_alert(inputs.product_cpu),
        inputs.product_cpu,
        per_alert(inputs.bench_cpu),
        inputs.bench_cpu,
        per_alert(inputs.machine_cpu),
        inputs.machine_cpu,
    );
    (summary, out)
}

#[cfg(test)]
mod tests {
    use super::super::plan::PlanParams;
    use super::*;

    #[test]
    fn keys_and_percentiles() {
        assert_eq!(
            page_key("http://127.0.0.2:80/a/b.html?x#y"),
            "127.0.0.2:80/a/b.html"
        );
        assert_eq!(page_key("http://127.0.0.2:80"), "127.0.0.2:80/");
        let values = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&values, 0.5), Some(2.0));
        assert_eq!(percentile(&values, 0.95), Some(4.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn copies_are_alerted_missed_and_hosts_counted() {
        let plan = Plan::new(PlanParams {
            sites: 6,
            works: 3,
            phase_seconds: 300.0,
            grace_seconds: 60.0,
            max_delay: 60.0,
            seed: 1,
        });
        let bases: Vec<String> = plan
            .sites
            .iter()
            .enumerate()
            .map(|(index, site)| format!("http://{}:{}", site.ip, 9000 + index))
            .collect();
        let start = Instant::now();
        let (index, copy) = plan.timed().next().unwrap();
        let _ = index;
        let site = &plan.sites[copy.site];
        let path = site.chapter_path(copy.work, copy.chapter, site.parts() - 1);
        let appeared = start + Duration::from_secs_f64(copy.appears.unwrap());
        let at = |seconds: f64| appeared + Duration::from_secs_f64(seconds);
        let requests = vec![
            Request {
                at: at(1.0),
                site: copy.site,
                path: "/robots.txt".into(),
                status: 200,
            },
            Request {
                at: at(3.0),
                site: copy.site,
                path: path.clone(),
                status: 200,
            },
            Request {
                at: at(3.1),
                site: copy.site,
                path: "/".into(),
                status: 200,
            },
        ];
        let alerted = vec![(at(30.0), format!("{}{}", bases[copy.site], path))];
        let (summary, text) = report(&Inputs {
            plan: &plan,
            bases: &bases,
            requests: &requests,
            start,
            end: start + Duration::from_secs(300),
            start_wall: Utc::now(),
            alerted: &alerted,
            alerts_received: 1,
            truncated_alerts: 0,
            detected: &[],
            product_cpu: 1.0,
            bench_cpu: 1.0,
            machine_cpu: 2.0,
            alert_on_detected: true,
        });
        let latency = summary.p50.unwrap();
        assert!((latency - 30.0).abs() < 0.01, "{latency}");
        assert_eq!(summary.missed, summary.copies - 1);
        assert_eq!(summary.hosts_fetched, 1);
        assert_eq!(summary.violations, 1, "{text}");
        assert_eq!(summary.fetches_per_alert, Some(3.0));
        assert!(
            summary
                .line()
                .starts_with("latency: p50 30.0 s, p95 30.0 s, max 30.0 s, missed ")
        );
    }

    #[test]
    fn quiet_watching_counts_each_hosts_busiest_minute_and_leaves_out_scheduled_hosts() {
        let plan = Plan::new(PlanParams {
            sites: 3,
            works: 2,
            phase_seconds: 300.0,
            grace_seconds: 60.0,
            max_delay: 60.0,
            seed: 1,
        });
        let bases: Vec<String> = (0..3).map(|i| format!("http://127.0.0.{i}:80")).collect();
        let start = Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        let request = |site, seconds| Request {
            at: at(seconds),
            site,
            path: "/".into(),
            status: 200,
        };
        // Site 0 crawls at minute 0, site 1 at 7, site 2 at 14: a window
        // from 30 past the hour leaves none of them out.
        let start_wall = "2026-01-01T10:30:00Z".parse().unwrap();
        let requests = vec![
            request(0, 10),
            request(0, 80),
            request(1, 10),
            request(1, 50),
            request(2, 500),
        ];
        let inputs = QuietInputs {
            plan: &plan,
            bases: &bases,
            requests: &requests,
            start,
            end: at(240),
            start_wall,
            burst_minutes: 10,
        };
        let (summary, text) = quiet(&inputs);
        assert_eq!(summary.hosts, 3, "{text}");
        assert_eq!(summary.scheduled, 0);
        assert_eq!(
            summary.hosts_fetched, 2,
            "the request at 500 s is after the window"
        );
        assert_eq!(summary.busiest_minute, 2);
        assert_eq!(summary.over, 1, "{text}");
        assert!(text.contains("127.0.0.1:80 (2 in 60 s)"), "{text}");
        // From 9 past, site 1's crawl at 7 past is close enough to be left out.
        let (summary, _) = quiet(&QuietInputs {
            start_wall: "2026-01-01T10:09:00Z".parse().unwrap(),
            ..inputs
        });
        assert_eq!(summary.scheduled, 2, "sites 1 (7 past) and 2 (14 past)");
        assert_eq!(summary.over, 0);
    }
}
