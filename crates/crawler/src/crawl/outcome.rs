//! What happened to each page, folded into the run's counters, and the
//! truthful outcome of the run drawn from them ([`verdict`]). Reasons are
//! stable snake_case codes (operators filter on them): the error kind's code,
//! refined where one kind covers several causes (`robots`, `robots_unreachable`,
//! `private_address`, `connection_refused`, `content_type`, `redirect_loop`,
//! `binary`). A stored page whose CSS ran out of time is counted among the
//! skipped as [`CSS_BUDGET`]: its CSS was skipped, not the page. A link to a
//! page that is not there (404, 410) is a dead link of the site, counted among
//! the skipped as [`DEAD_LINK`] ([`for_link`]); a seed that is not there stays
//! a failure. Recent errors name each URL once, with its latest reason.

use copyhound_core::model::{CrawlCounters, CrawlRun, CrawlRunStatus};
use copyhound_core::ports::PageUpsert;
use copyhound_core::{Error, ErrorKind};

/// Errors kept on a run for operators.
pub const MAX_RECENT_ERRORS: usize = 20;

/// What happened to one fetched document (a page or a part of one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageOutcome {
    /// Fetched and stored.
    Stored {
        /// What the store did.
        upsert: PageUpsert,
        /// Body bytes received.
        bytes: u64,
        /// Whether a fingerprint task was enqueued.
        fingerprinted: bool,
    },
    /// The server answered 304: the stored copy is current.
    NotModified,
    /// Not fetched by rule (robots.txt, address policy, content type).
    Skipped {
        /// Stable reason code.
        reason: String,
    },
    /// Fetching or storing failed.
    Failed {
        /// Stable reason code.
        reason: String,
        /// Human-readable detail.
        message: String,
    },
}

impl PageOutcome {
    /// Returns the outcome of a failed fetch or store, classified by reason.
    pub fn from_error(error: &Error) -> Self {
        let message = error.message().to_string();
        let reason = reason_of(error).to_string();
        if error.kind() == ErrorKind::Blocked {
            PageOutcome::Skipped { reason }
        } else {
            PageOutcome::Failed { reason, message }
        }
    }
}

/// Returns the stable reason code of an error.
pub fn reason_of(error: &Error) -> &'static str {
    let message = error.message();
    match error.kind() {
        ErrorKind::Blocked if message.starts_with("robots") => "robots",
        ErrorKind::Blocked
            if message.starts_with("address policy") || message.contains("address policy") =>
        {
            "private_address"
        }
        ErrorKind::Blocked if message.starts_with("content type") => "content_type",
        ErrorKind::Transient | ErrorKind::Timeout
            if message.starts_with("robots.txt unreachable") =>
        {
            "robots_unreachable"
        }
        ErrorKind::Transient if message.ends_with("connection refused") => "connection_refused",
        ErrorKind::Transient if message.ends_with("cannot connect") => "connect_failed",
        ErrorKind::InvalidInput if message.starts_with("redirect loop") => "redirect_loop",
        ErrorKind::InvalidInput if message.starts_with("more than") => "too_many_redirects",
        ErrorKind::InvalidInput if message.starts_with("binary") => "binary",
        kind => kind.code(),
    }
}

/// Folds an outcome into a run's counters and recent errors.
pub fn record(run: &mut CrawlRun, url: &str, outcome: &PageOutcome) {
    let counters: &mut CrawlCounters = &mut run.counters;
    match outcome {
        PageOutcome::Stored { upsert, bytes, .. } => {
            counters.fetched += 1;
            counters.bytes += bytes;
            match upsert {
                PageUpsert::New => counters.new_pages += 1,
                PageUpsert::Changed => counters.changed_pages += 1,
                PageUpsert::Unchanged => {}
            }
        }
        PageOutcome::NotModified => {
            *counters.skipped.entry("not_modified".into()).or_default() += 1
        }
        PageOutcome::Skipped { reason } => {
            *counters.skipped.entry(reason.clone()).or_default() += 1
        }
        PageOutcome::Failed { reason, message } => {
            *counters.failed.entry(reason.clone()).or_default() += 1;
            push_recent_error(
                &mut run.recent_errors,
                Some(url),
                format!("{url}: {reason}: {message}"),
            );
        }
    }
}

/// Reason of a link to a page that is not there (HTTP 404 or 410).
pub const DEAD_LINK: &str = "not_found";

/// Returns the outcome to count for a fetched document: a page that is not
/// there is a dead link of the site, skipped as [`DEAD_LINK`] and no failure
/// of the run, unless it is a seed (`seed`), which stays failed.
pub fn for_link(outcome: PageOutcome, seed: bool) -> PageOutcome {
    match outcome {
        PageOutcome::Failed { reason, .. } if !seed && reason == DEAD_LINK => {
            PageOutcome::Skipped { reason }
        }
        other => other,
    }
}

/// Appends `line` to a run's recent errors, at most [`MAX_RECENT_ERRORS`]
/// (the oldest goes first). A line about `url` replaces the one already kept
/// for it: each URL appears once, with its latest reason.
pub fn push_recent_error(errors: &mut Vec<String>, url: Option<&str>, line: String) {
    if let Some(url) = url {
        let prefix = format!("{url}: ");
        errors.retain(|kept| !kept.starts_with(&prefix));
    }
    if errors.len() >= MAX_RECENT_ERRORS {
        let excess = errors.len() + 1 - MAX_RECENT_ERRORS;
        errors.drain(..excess);
    }
    errors.push(line);
}

/// Skip reason counted for a stored page read as markup alone, its CSS
/// cascade over `style::CSS_TIME_BUDGET`.
pub const CSS_BUDGET: &str = "css_budget";

/// Counts a stored page whose CSS was skipped for [`CSS_BUDGET`].
pub fn record_css_fallback(run: &mut CrawlRun) {
    *run.counters.skipped.entry(CSS_BUDGET.into()).or_default() += 1;
}

/// Counts a page rendered by Chromium and the time it took.
pub fn record_rendered(run: &mut CrawlRun, ms: u64) {
    run.counters.rendered += 1;
    run.counters.render_ms = run.counters.render_ms.saturating_add(ms);
}

/// Counts a stored page whose text looks like no language, and names it
/// among the run's recent errors: it was stored, but nothing can match it.
pub fn record_unreadable(run: &mut CrawlRun, url: &str, reason: &str) {
    *run.counters
        .unreadable
        .entry(reason.to_string())
        .or_default() += 1;
    metrics::counter!("copyhound_pages_unreadable_total", "reason" => reason.to_string())
        .increment(1);
    push_recent_error(
        &mut run.recent_errors,
        Some(url),
        format!("{url}: unreadable: {}", super::reading::explain(reason)),
    );
}

/// Skip reasons that are not a refusal: the page is current or was left out
/// on purpose, so a run made only of them did reach the site.
const BENIGN_SKIPS: [&str; 2] = ["not_modified", FRESH];

/// Skip reason of a chapter page not due for a visit (see `page::revisit_due`).
pub const FRESH: &str = "fresh";

/// Returns the outcome of a run that crawled its frontier to the end, and the
/// summary line to record when it is not `Succeeded`: `Failed` when no page
/// was fetched or found current (robots.txt unreachable or disallowing,
/// address refused, connection errors: whatever the reasons), `Partial` when
/// pages were fetched but some failed, else `Succeeded`. Dead links
/// ([`for_link`]) are skipped, not failed: a site with broken links crawled
/// to the end succeeded.
pub fn verdict(counters: &CrawlCounters) -> (CrawlRunStatus, Option<String>) {
    let not_modified: u64 = BENIGN_SKIPS
        .iter()
        .filter_map(|reason| counters.skipped.get(*reason))
        .sum();
    let reached = counters.fetched + not_modified;
    let failed: u64 = counters.failed.values().sum();
    if reached == 0 {
        let refused: Vec<String> = counters
            .skipped
            .iter()
            .filter(|(reason, _)| !BENIGN_SKIPS.contains(&reason.as_str()))
            .map(|(reason, count)| format!("{count} skipped ({reason})"))
            .chain(
                counters
                    .failed
                    .iter()
                    .map(|(reason, count)| format!("{count} failed ({reason})")),
            )
            .collect();
        let why = if refused.is_empty() {
            "no url to crawl".to_string()
        } else {
            refused.join(", ")
        };
        return (
            CrawlRunStatus::Failed,
            Some(format!("no page fetched: {why}")),
        );
    }
    if failed == 0 {
        return (CrawlRunStatus::Succeeded, None);
    }
    let reasons: Vec<String> = counters
        .failed
        .iter()
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    (
        CrawlRunStatus::Partial,
        Some(format!(
            "{failed} of {} pages failed: {}",
            reached + failed,
            reasons.join(", ")
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_refine_kinds() {
        let robots = Error::new(ErrorKind::Blocked, "robots.txt disallows `x`");
        assert_eq!(
            PageOutcome::from_error(&robots),
            PageOutcome::Skipped {
                reason: "robots".into()
            }
        );
        assert_eq!(
            reason_of(&Error::invalid("redirect loop at `x`")),
            "redirect_loop"
        );
        assert_eq!(
            reason_of(&Error::new(ErrorKind::Timeout, "slow")),
            "timeout"
        );
        assert_eq!(
            reason_of(&Error::new(
                ErrorKind::Blocked,
                "content type `image/png` of `x` is not text"
            )),
            "content_type"
        );
        assert_eq!(
            reason_of(&Error::new(
                ErrorKind::Transient,
                "robots.txt unreachable: fetching `x`: connection refused"
            )),
            "robots_unreachable"
        );
        assert_eq!(
            reason_of(&Error::new(
                ErrorKind::Transient,
                "fetching `x`: connection refused"
            )),
            "connection_refused"
        );
    }

    fn counters(fetched: u64, skipped: &[(&str, u64)], failed: &[(&str, u64)]) -> CrawlCounters {
        CrawlCounters {
            fetched,
            skipped: skipped.iter().map(|(r, n)| (r.to_string(), *n)).collect(),
            failed: failed.iter().map(|(r, n)| (r.to_string(), *n)).collect(),
            ..CrawlCounters::default()
        }
    }

    #[test]
    fn verdicts_are_truthful() {
        let (status, why) = verdict(&counters(0, &[("robots", 1)], &[]));
        assert_eq!(status, CrawlRunStatus::Failed);
        assert_eq!(why.unwrap(), "no page fetched: 1 skipped (robots)");
        let (status, why) = verdict(&counters(0, &[], &[("robots_unreachable", 2)]));
        assert_eq!(status, CrawlRunStatus::Failed);
        assert!(why.unwrap().contains("2 failed (robots_unreachable)"));
        let (status, why) = verdict(&counters(3, &[("robots", 4)], &[("timeout", 1)]));
        assert_eq!(status, CrawlRunStatus::Partial);
        assert_eq!(why.unwrap(), "1 of 4 pages failed: 1 timeout");
        assert_eq!(
            verdict(&counters(3, &[(DEAD_LINK, 2)], &[])),
            (CrawlRunStatus::Succeeded, None),
            "dead links are counted, not failures"
        );
        assert_eq!(
            verdict(&counters(2, &[("robots", 5), ("content_type", 1)], &[])),
            (CrawlRunStatus::Succeeded, None)
        );
        assert_eq!(
            verdict(&counters(0, &[("not_modified", 3)], &[])),
            (CrawlRunStatus::Succeeded, None),
            "a run that found every page current reached the site"
        );
    }

    fn not_found(url: &str) -> PageOutcome {
        PageOutcome::from_error(&Error::not_found(format!("`{url}` answered 404")))
    }

    #[test]
    fn dead_links_are_counted_without_making_the_run_partial() {
        let mut run = empty_run();
        record(&mut run, "http://a.example/", &stored());
        for url in ["http://a.example/gone.html", "http://a.example/moved.html"] {
            record(&mut run, url, &for_link(not_found(url), false));
        }
        assert_eq!(run.counters.skipped.get(DEAD_LINK), Some(&2));
        assert!(run.counters.failed.is_empty(), "{:?}", run.counters);
        assert_eq!(verdict(&run.counters), (CrawlRunStatus::Succeeded, None));
        let timeout = Error::new(ErrorKind::Timeout, "slow");
        assert_eq!(
            for_link(PageOutcome::from_error(&timeout), false),
            PageOutcome::from_error(&timeout),
            "only a page that is not there is a dead link"
        );
    }

    #[test]
    fn a_seed_that_is_not_there_still_makes_the_run_partial() {
        let mut run = empty_run();
        record(&mut run, "http://a.example/", &stored());
        let seed = "http://a.example/book/";
        record(&mut run, seed, &for_link(not_found(seed), true));
        assert_eq!(run.counters.failed.get(DEAD_LINK), Some(&1));
        let (status, why) = verdict(&run.counters);
        assert_eq!(status, CrawlRunStatus::Partial);
        assert_eq!(why.unwrap(), "1 of 2 pages failed: 1 not_found");
        assert!(run.recent_errors[0].starts_with(seed), "{run:?}");
        let mut alone = empty_run();
        record(&mut alone, seed, &for_link(not_found(seed), true));
        assert_eq!(verdict(&alone.counters).0, CrawlRunStatus::Failed);
    }

    #[test]
    fn recent_errors_name_each_url_once_with_its_latest_reason() {
        let mut run = empty_run();
        let failed = |reason: &str| PageOutcome::Failed {
            reason: reason.into(),
            message: format!("{reason} detail"),
        };
        record(&mut run, "http://a.example/1", &failed("timeout"));
        record(&mut run, "http://a.example/2", &failed("timeout"));
        record(
            &mut run,
            "http://a.example/1",
            &failed("connection_refused"),
        );
        record_unreadable(&mut run, "http://a.example/2", "no_language");
        assert_eq!(run.recent_errors.len(), 2, "{:?}", run.recent_errors);
        assert!(
            run.recent_errors[0].starts_with("http://a.example/1: connection_refused"),
            "{:?}",
            run.recent_errors
        );
        assert!(run.recent_errors[1].starts_with("http://a.example/2: unreadable"));
        assert_eq!(
            run.counters.failed.get("timeout"),
            Some(&2),
            "still counted"
        );
        // A URL that is a prefix of another is its own entry.
        record(&mut run, "http://a.example/10", &failed("timeout"));
        assert_eq!(run.recent_errors.len(), 3);
        for index in 0..MAX_RECENT_ERRORS * 2 {
            record(
                &mut run,
                &format!("http://b.example/{}", index % (MAX_RECENT_ERRORS + 5)),
                &failed("timeout"),
            );
        }
        assert_eq!(run.recent_errors.len(), MAX_RECENT_ERRORS);
        let mut urls: Vec<&str> = run
            .recent_errors
            .iter()
            .map(|line| line.split(": ").next().unwrap())
            .collect();
        urls.sort_unstable();
        urls.dedup();
        assert_eq!(urls.len(), MAX_RECENT_ERRORS, "{:?}", run.recent_errors);
    }

    fn stored() -> PageOutcome {
        PageOutcome::Stored {
            upsert: PageUpsert::New,
            bytes: 10,
            fingerprinted: false,
        }
    }

    fn empty_run() -> CrawlRun {
        CrawlRun {
            id: copyhound_core::ids::CrawlRunId::generate(),
            site_id: copyhound_core::ids::SiteId::generate(),
            status: CrawlRunStatus::Running,
            created_at: chrono::Utc::now(),
            started_at: None,
            finished_at: None,
            counters: CrawlCounters::default(),
            recent_errors: Vec::new(),
            scope: None,
        }
    }

    #[test]
    fn css_fallbacks_are_counted_beside_the_stored_page() {
        let mut run = empty_run();
        record(&mut run, "http://a.example/1.html", &stored());
        record_css_fallback(&mut run);
        assert_eq!(run.counters.skipped.get(CSS_BUDGET), Some(&1));
        assert_eq!(
            verdict(&run.counters),
            (CrawlRunStatus::Succeeded, None),
            "a page read as markup is no failure"
        );
    }
}
