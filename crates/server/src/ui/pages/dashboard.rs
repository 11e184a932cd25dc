//! The landing page: a reviewer sees at a glance how much is watched, how
//! copying has trended this month and which matches want a look first.

use std::collections::BTreeMap;

use axum::extract::State;
use chrono::{Duration, Utc};
use copyhound_core::model::MatchStatus;
use copyhound_core::ports::MatchFilter;
use serde_json::json;

use super::{UiResult, first_page, titled_rows, works_and_sites};
use crate::AppState;
use crate::ui::{DayCount, UiCaller, bar_chart_svg, render};

/// Days shown in the dashboard chart.
const CHART_DAYS: i64 = 30;
/// Most matches the dashboard reads to draw its chart.
const CHART_SAMPLE: usize = 2000;

pub(in crate::ui) async fn dashboard(
    State(state): State<AppState>,
    UiCaller(caller): UiCaller,
) -> UiResult {
    let (works, sites) = works_and_sites(&state, &caller.publisher_id).await?;
    let since = Utc::now() - Duration::days(CHART_DAYS - 1);
    let start_day = since.date_naive();
    let filter = MatchFilter {
        seen_since: Some(
            start_day
                .and_hms_opt(0, 0, 0)
                .expect("midnight exists")
                .and_utc(),
        ),
        ..MatchFilter::of_publisher(caller.publisher_id.clone())
    };
    let mut per_day: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_status: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut page = first_page(200);
    let mut read = 0usize;
    loop {
        let batch = state.ports.matches.list_matches(&filter, &page).await?;
        for found in &batch.items {
            *per_status.entry(found.status.as_str()).or_default() += 1;
            if found.first_seen.date_naive() >= start_day {
                *per_day
                    .entry(found.first_seen.format("%Y-%m-%d").to_string())
                    .or_default() += 1;
            }
        }
        read += batch.items.len();
        match batch.next {
            Some(next) if read < CHART_SAMPLE => page.after = Some(next),
            _ => break,
        }
    }
    let days: Vec<DayCount> = (0..CHART_DAYS)
        .map(|offset| {
            let day = (start_day + Duration::days(offset))
                .format("%Y-%m-%d")
                .to_string();
            let count = per_day.get(&day).copied().unwrap_or(0);
            DayCount { day, count }
        })
        .collect();
    let newest_filter = MatchFilter {
        statuses: vec![MatchStatus::New, MatchStatus::Confirmed],
        seen_since: None,
        ..filter
    };
    let newest = state
        .ports
        .matches
        .list_matches(&newest_filter, &first_page(10))
        .await?;
    let newest = titled_rows(&state, &caller.publisher_id, &newest.items).await?;
    Ok(render(
        "dashboard.html",
        json!({
            "publisher": caller.publisher_id,
            "works": works.items.len(), "works_more": works.next.is_some(),
            "sites": sites.items.len(), "sites_more": sites.next.is_some(),
            "recent": read, "per_status": per_status,
            "chart": bar_chart_svg(&days),
            "newest": newest,
        }),
    ))
}
