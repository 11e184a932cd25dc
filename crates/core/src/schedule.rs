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
}
