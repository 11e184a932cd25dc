//! Cron schedules from tenants never panic and never escape the floor: any
//! string either is refused or fires no faster than the floor it was checked
//! against, measured on the slots it really fires at.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::time::Duration;

use copyhound_core::schedule::{check_floor, next_slot, parse_schedule};
use proptest::prelude::*;

/// A cron field over `low..high`: `*`, a value, a range, a step or a list.
fn field(low: u32, high: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        Just("*".to_string()),
        (low..high).prop_map(|n| n.to_string()),
        (low..high, low..high).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (1..high).prop_map(|n| format!("*/{n}")),
        (low..high, 1..high).prop_map(move |(a, n)| format!("{a}-{}/{n}", high - 1)),
        prop::collection::vec(low..high, 1..6).prop_map(|list| {
            list.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        }),
    ]
}

fn five() -> impl Strategy<Value = String> {
    (
        field(0, 60),
        field(0, 24),
        field(1, 29),
        field(1, 13),
        field(0, 7),
    )
        .prop_map(|(m, h, d, mo, w)| format!("{m} {h} {d} {mo} {w}"))
}

/// Five fields, or six with seconds first.
fn cron() -> impl Strategy<Value = String> {
    prop_oneof![
        five(),
        (field(0, 60), five()).prop_map(|(s, rest)| format!("{s} {rest}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn accepted_schedules_fire_no_faster_than_the_floor(
        cron in cron(),
        floor_minutes in 1u64..120,
    ) {
        let parsed = parse_schedule(&cron).unwrap();
        let floor = Duration::from_secs(floor_minutes * 60);
        if check_floor(&parsed, floor, "schedule").is_ok() {
            let floor = chrono::Duration::from_std(floor).unwrap();
            let mut at = chrono::Utc::now();
            let mut previous = None;
            for _ in 0..64 {
                let Some(slot) = next_slot(&parsed, at) else { break };
                if let Some(previous) = previous {
                    prop_assert!(slot - previous >= floor, "{cron}: {previous} then {slot}");
                }
                previous = Some(slot);
                at = slot;
            }
        }
    }

    #[test]
    fn any_text_is_refused_or_measured_without_panic(text in ".{0,80}") {
        if let Ok(parsed) = parse_schedule(&text) {
            let _ = check_floor(&parsed, Duration::from_secs(300), "schedule");
        }
    }
}
