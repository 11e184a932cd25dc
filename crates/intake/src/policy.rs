//! Infringement policy: the bar a copy must clear, the installation's
//! `[matcher]` defaults overridden per kind of work by the publisher. Resolved
//! here once, for the comparison workers (which apply it) and for the API and
//! console (which show what applies), so the two can never disagree.

use copyhound_core::config::MatcherConfig;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{InfringementPolicy, Thresholds, Work};
use copyhound_core::ports::PublisherStore;
use copyhound_core::{ErrorKind, Result};

/// Returns `defaults` with a publisher's `thresholds` applied.
pub fn resolve(defaults: &MatcherConfig, thresholds: &Thresholds) -> MatcherConfig {
    let mut effective = defaults.clone();
    if let Some(chars) = thresholds.min_copied_chars {
        effective.min_copied_chars = chars;
        // A split chapter's part must still carry a share of the bar.
        effective.min_part_copied_chars = defaults.min_part_copied_chars.min(chars);
    }
    if let Some(coverage) = thresholds.min_chapter_coverage {
        effective.min_chapter_coverage = coverage;
    }
    effective
}

/// Returns the bar in force for `work`: its publisher's policy for the work's
/// kind over `defaults` (the defaults alone when the publisher is gone).
pub async fn for_work(
    publishers: &dyn PublisherStore,
    defaults: &MatcherConfig,
    work: &Work,
) -> Result<MatcherConfig> {
    match publishers.get_publisher(&work.publisher_id).await {
        Ok(publisher) => Ok(resolve(defaults, publisher.policy.for_kind(work.kind))),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(defaults.clone()),
        Err(error) => Err(error),
    }
}

/// Validates and stores a publisher's policy; returns it as stored.
pub async fn save(
    publishers: &dyn PublisherStore,
    publisher_id: &PublisherId,
    policy: InfringementPolicy,
    by: &str,
) -> Result<InfringementPolicy> {
    policy.validate()?;
    let mut publisher = publishers.get_publisher(publisher_id).await?;
    publisher.policy = policy;
    publishers.put_publisher(&publisher).await?;
    tracing::info!(publisher_id = %publisher_id, by, policy = ?publisher.policy, "infringement policy updated");
    Ok(publisher.policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lower_bar_lowers_the_part_bar_with_it() {
        let defaults = MatcherConfig::default();
        let unchanged = resolve(&defaults, &Thresholds::default());
        assert_eq!(unchanged.min_copied_chars, defaults.min_copied_chars);
        let news = resolve(
            &defaults,
            &Thresholds {
                min_copied_chars: Some(40),
                min_chapter_coverage: Some(0.5),
            },
        );
        assert_eq!(news.min_copied_chars, 40);
        assert_eq!(news.min_chapter_coverage, 0.5);
        assert!(news.min_part_copied_chars <= 40);
    }
}
