//! Cron schedules, parsed one way everywhere (site crawls, report schedules):
//! UTC, 5 fields, or 6 with seconds first.

pub use croner::Cron;

use crate::model::Timestamp;
use crate::{Error, Result};

/// Longest part of a rejected expression quoted back in an error, characters.
const QUOTED_CHARS: usize = 80;

/// Parses a cron expression; the error quotes it (cut) and says why.
pub fn parse_schedule(cron: &str) -> Result<Cron> {
    let parser = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build();
    parser.parse(cron).map_err(|err| {
        let mut shown: String = cron.chars().take(QUOTED_CHARS).collect();
        if cron.chars().count() > QUOTED_CHARS {
            shown.push('…');
        }
        Error::invalid(format!(
            "`schedule`: `{shown}` is not a valid cron expression: {err}"
        ))
    })
}

/// Returns the latest slot at or before `now`.
pub fn last_slot(cron: &Cron, now: Timestamp) -> Option<Timestamp> {
    cron.find_previous_occurrence(&now, true).ok()
}

/// Returns the first slot strictly after `now`.
pub fn next_slot(cron: &Cron, now: Timestamp) -> Option<Timestamp> {
    cron.find_next_occurrence(&now, false).ok()
}

/// Span of slots a floor check walks: a schedule's gaps repeat at the latest
/// with its month (the 31st's last slot, then the 1st's first), so every
/// gap it has shows up within 32 days of slots.
const CHECKED_SPAN_DAYS: i64 = 32;
/// Most slots a floor check walks, whatever the floor.
const MAX_CHECKED_SLOTS: i64 = 50_000;

/// The shortest time between two consecutive slots among the `slots` slots
/// after `from`: what the schedule really fires at, whatever its spelling
/// (`* * * * * *`, `0-59 * * * *`, `*/1 * * * *`). `None` when it fires at
/// most once.
pub fn shortest_gap(cron: &Cron, from: Timestamp, slots: usize) -> Option<chrono::Duration> {
    let mut previous = next_slot(cron, from)?;
    let mut shortest: Option<chrono::Duration> = None;
    for _ in 0..slots {
        let Some(slot) = next_slot(cron, previous) else {
            break;
        };
        let gap = slot - previous;
        shortest = Some(shortest.map_or(gap, |shortest| shortest.min(gap)));
        previous = slot;
    }
    shortest
}

/// Refuses a schedule two of whose consecutive slots are closer than
/// `floor`, however it is spelled; `field` names it in the error. It walks
/// 32 days of slots at the floor's rate (a schedule that keeps to the floor
/// has no more), stopping at the first gap under it.
pub fn check_floor(cron: &Cron, floor: std::time::Duration, field: &str) -> Result<()> {
    let floor = chrono::Duration::from_std(floor).unwrap_or(chrono::Duration::MAX);
    let slots = if floor <= chrono::Duration::zero() {
        return Ok(());
    } else {
        (chrono::Duration::days(CHECKED_SPAN_DAYS).num_seconds() / floor.num_seconds().max(1) + 2)
            .min(MAX_CHECKED_SLOTS)
    };
    let Some(mut previous) = next_slot(cron, chrono::Utc::now()) else {
        return Ok(());
    };
    for _ in 0..slots {
        let Some(slot) = next_slot(cron, previous) else {
            break;
        };
        let gap = slot - previous;
        if gap < floor {
            return Err(Error::invalid(format!(
                "`{field}` fires every {} at its fastest; the shortest interval allowed is {}",
                human(gap),
                human(floor)
            )));
        }
        previous = slot;
    }
    Ok(())
}

fn human(duration: chrono::Duration) -> String {
    let seconds = duration.num_seconds();
    if seconds % 3600 == 0 && seconds >= 3600 {
        format!("{} h", seconds / 3600)
    } else if seconds % 60 == 0 && seconds >= 60 {
        format!("{} min", seconds / 60)
    } else {
        format!("{seconds} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_and_six_fields_parse_and_garbage_is_quoted() {
        assert!(parse_schedule("0 */6 * * *").is_ok());
        assert!(parse_schedule("30 0 */6 * * *").is_ok());
        let error = parse_schedule("every monday").unwrap_err();
        assert!(error.to_string().contains("every monday"), "{error}");
        let long = "x".repeat(500);
        let error = parse_schedule(&long).unwrap_err().to_string();
        assert!(error.len() < 300, "{error}");
    }

    #[test]
    fn the_floor_is_measured_on_the_firing_rate_not_the_spelling() {
        let floor = std::time::Duration::from_secs(300);
        for fast in [
            "* * * * * *",
            "*/1 * * * *",
            "0-59 * * * *",
            "0,1 * * * *",
            "0 0,3 * * * *",
            "30 */2 * * * *",
            "0 0 * * * 1,2,3,4,5,6,0",
        ] {
            if fast == "0 0 * * * 1,2,3,4,5,6,0" {
                // Hourly is slower than the floor, whatever the spelling.
                check_floor(&parse_schedule(fast).unwrap(), floor, "schedule").unwrap();
                continue;
            }
            let error = check_floor(&parse_schedule(fast).unwrap(), floor, "schedule")
                .expect_err(fast)
                .to_string();
            assert!(
                error.contains("shortest interval allowed is 5 min"),
                "{error}"
            );
        }
        // Fast only where months meet, or where hours meet.
        for fast in ["0,59 0,23 1,31 * *", "14-59/46 */13 18,17 * 1 *"] {
            check_floor(&parse_schedule(fast).unwrap(), floor * 2, "schedule").expect_err(fast);
        }
        for slow in ["*/5 * * * *", "0 */6 * * *", "0 0 1 1 *", "0 0 29 2 *"] {
            check_floor(&parse_schedule(slow).unwrap(), floor, "schedule").expect(slow);
        }
        let gap = shortest_gap(
            &parse_schedule("0,1 * * * *").unwrap(),
            chrono::Utc::now(),
            100,
        );
        assert_eq!(gap, Some(chrono::Duration::minutes(1)));
    }
}
