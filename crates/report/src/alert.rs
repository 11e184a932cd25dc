//! When to alert a publisher: a pure decision over matches and the time of the
//! last alert, so the scheduler that calls it can be tested without a clock and
//! a retried task decides the same way twice.

use copyhound_core::ids::MatchId;
use copyhound_core::model::{AlertOn, Match, MatchStatus, Timestamp};
use serde::{Deserialize, Serialize};

/// When a publisher wants to be alerted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertPolicy {
    /// Alert once at least this many matches were confirmed (or detected)
    /// since the last alert; `0` disables alerts.
    pub threshold_new_confirmed: u32,
    /// What counts: confirmations, or detections.
    pub on: AlertOn,
}

/// The outcome of [`evaluate_alert`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AlertDecision {
    /// Whether an alert is due now.
    pub due: bool,
    /// Matches confirmed since the last alert.
    pub new_confirmed: u32,
    /// The policy's threshold.
    pub threshold: u32,
    /// The last alert's time (`None`: never alerted, every confirmation counts).
    pub since: Option<Timestamp>,
    /// The newly confirmed (or detected) matches, oldest first.
    pub match_ids: Vec<MatchId>,
    /// What was counted.
    pub on: AlertOn,
    /// When the newest counted match was confirmed (or detected).
    pub latest: Option<Timestamp>,
}

/// Returns when `found` was confirmed: the time of its latest review setting
/// `Confirmed`, or its first detection when confirmed without a review record.
fn confirmed_at(found: &Match) -> Option<Timestamp> {
    if found.status != MatchStatus::Confirmed {
        return None;
    }
    let reviewed = found
        .reviews
        .iter()
        .rev()
        .find(|review| review.status == MatchStatus::Confirmed);
    Some(reviewed.map_or(found.first_seen, |review| review.at))
}

/// Returns when `found` counts for `on`: its confirmation, or its detection
/// while nobody has dismissed it (licensed and taken-down pages neither).
fn counted_at(found: &Match, on: AlertOn) -> Option<Timestamp> {
    match on {
        AlertOn::Confirmed => confirmed_at(found),
        AlertOn::Detected => matches!(found.status, MatchStatus::New | MatchStatus::Confirmed)
            .then_some(found.first_seen),
    }
}

/// Returns whether an alert is due under `policy`: matches currently confirmed
/// (or detected) whose confirmation (or detection) came after `last_alert_at`
/// reach the threshold.
pub fn evaluate_alert(
    policy: &AlertPolicy,
    matches: &[Match],
    last_alert_at: Option<Timestamp>,
) -> AlertDecision {
    let mut confirmed: Vec<(Timestamp, &MatchId)> = matches
        .iter()
        .filter_map(|found| counted_at(found, policy.on).map(|at| (at, &found.id)))
        .filter(|(at, _)| last_alert_at.is_none_or(|since| *at > since))
        .collect();
    confirmed.sort();
    let latest = confirmed.last().map(|(at, _)| *at);
    let new_confirmed = u32::try_from(confirmed.len()).unwrap_or(u32::MAX);
    AlertDecision {
        due: policy.threshold_new_confirmed > 0 && new_confirmed >= policy.threshold_new_confirmed,
        new_confirmed,
        threshold: policy.threshold_new_confirmed,
        since: last_alert_at,
        match_ids: confirmed.into_iter().map(|(_, id)| id.clone()).collect(),
        on: policy.on,
        latest,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::*;
    use crate::testsuite::sample_input;

    #[test]
    fn counts_confirmations_after_the_last_alert() {
        let matches = sample_input().matches;
        // Confirmed: m_0001 reviewed 03-01 14:00, m_0007 reviewed 03-13 14:00.
        let never = evaluate_alert(
            &AlertPolicy {
                threshold_new_confirmed: 2,
                on: AlertOn::Confirmed,
            },
            &matches,
            None,
        );
        assert!(never.due);
        assert_eq!(never.new_confirmed, 2);
        assert_eq!(
            never.match_ids,
            [
                "m_0001".parse::<MatchId>().unwrap(),
                "m_0007".parse().unwrap()
            ]
        );

        let after_first = Utc.with_ymd_and_hms(2024, 3, 5, 0, 0, 0).unwrap();
        let decision = evaluate_alert(
            &AlertPolicy {
                threshold_new_confirmed: 2,
                on: AlertOn::Confirmed,
            },
            &matches,
            Some(after_first),
        );
        assert!(!decision.due);
        assert_eq!(decision.new_confirmed, 1);
        let lower = evaluate_alert(
            &AlertPolicy {
                threshold_new_confirmed: 1,
                on: AlertOn::Confirmed,
            },
            &matches,
            Some(after_first),
        );
        assert!(lower.due);
    }

    #[test]
    fn detected_alerts_count_new_matches_as_they_are_found_never_dismissed_ones() {
        let mut matches = sample_input().matches;
        let since = matches.iter().map(|found| found.first_seen).min().unwrap();
        for (index, found) in matches.iter_mut().enumerate() {
            found.first_seen = since + Duration::minutes(i64::try_from(index).unwrap() + 1);
        }
        matches[0].status = MatchStatus::New;
        matches[1].status = MatchStatus::Dismissed;
        let detected = AlertPolicy {
            threshold_new_confirmed: 1,
            on: AlertOn::Detected,
        };
        let decision = evaluate_alert(&detected, &matches, Some(since));
        assert!(decision.due);
        assert!(decision.match_ids.contains(&matches[0].id), "new counts");
        assert!(
            !decision.match_ids.contains(&matches[1].id),
            "dismissed does not"
        );
        assert_eq!(decision.on, AlertOn::Detected);
        // Nothing found since the last alert: not due.
        let later = matches.iter().map(|found| found.first_seen).max().unwrap();
        assert!(!evaluate_alert(&detected, &matches, Some(later)).due);
    }

    #[test]
    fn zero_threshold_disables_and_confirmation_time_comes_from_reviews() {
        let mut matches = sample_input().matches;
        assert!(
            !evaluate_alert(
                &AlertPolicy {
                    threshold_new_confirmed: 0,
                    on: AlertOn::Confirmed,
                },
                &matches,
                None
            )
            .due
        );
        let late = Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap();
        matches[0].reviews.push(copyhound_core::model::Review {
            status: MatchStatus::Confirmed,
            by: "second look".to_string(),
            at: late,
            note: None,
        });
        let decision = evaluate_alert(
            &AlertPolicy {
                threshold_new_confirmed: 1,
                on: AlertOn::Confirmed,
            },
            &matches,
            Some(late - Duration::hours(1)),
        );
        assert_eq!(
            decision.new_confirmed, 1,
            "re-confirmed after the alert counts again"
        );
    }
}
