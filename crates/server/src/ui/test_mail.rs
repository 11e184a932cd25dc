//! The alerts page's test e-mail: an admin sends one message to the saved
//! recipients through the installation's mail server and sees on the page
//! whether it was accepted, or why not. At most one a minute per publisher
//! (per serving process), so the button cannot be used to spam anyone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use copyhound_core::ids::PublisherId;

use super::pages::alerts::{AlertsOutcome, render_alerts};
use super::{ConsoleState, UiCaller, UiError};
use crate::AppState;
use crate::api::alerts::TestDelivery;

/// Shortest time between two test e-mails of one publisher.
pub const TEST_MAIL_INTERVAL: Duration = Duration::from_secs(60);

/// When each publisher last sent a test e-mail.
#[derive(Clone, Debug, Default)]
pub struct TestMailThrottle {
    last: Arc<Mutex<HashMap<PublisherId, Instant>>>,
}

impl TestMailThrottle {
    /// Takes the publisher's turn at `now`, or returns how long until its next one.
    pub fn take(&self, publisher_id: &PublisherId, now: Instant) -> Result<(), Duration> {
        let mut last = self
            .last
            .lock()
            .expect("the throttle never panics holding its lock");
        if let Some(previous) = last.get(publisher_id) {
            let elapsed = now.saturating_duration_since(*previous);
            if elapsed < TEST_MAIL_INTERVAL {
                return Err(TEST_MAIL_INTERVAL - elapsed);
            }
        }
        // Forget the turns that are over, so the map stays small.
        last.retain(|_, previous| now.saturating_duration_since(*previous) < TEST_MAIL_INTERVAL);
        last.insert(publisher_id.clone(), now);
        Ok(())
    }

    /// Ends the publisher's wait, as a minute passing would.
    #[cfg(test)]
    pub(crate) fn forget(&self, publisher_id: &PublisherId) {
        self.last
            .lock()
            .expect("the throttle never panics holding its lock")
            .remove(publisher_id);
    }
}

/// `POST /ui/alerts/test`: sends the test e-mail and shows the alerts page
/// with its outcome; 429 when the publisher sent one less than a minute ago.
pub(super) async fn send(
    State(state): State<AppState>,
    axum::Extension(console): axum::Extension<ConsoleState>,
    UiCaller(caller): UiCaller,
) -> Result<axum::response::Response, UiError> {
    if caller.role != copyhound_core::model::Role::Admin {
        return Err(UiError::from(copyhound_core::Error::new(
            copyhound_core::ErrorKind::Forbidden,
            "only the publisher's admin keys send test e-mails",
        )));
    }
    let (delivery, status) = match console.test_mail.take(&caller.publisher_id, Instant::now()) {
        Ok(()) => (
            crate::api::alerts::send_test_email(&state, &caller).await?,
            StatusCode::OK,
        ),
        Err(wait) => (
            TestDelivery {
                delivered: false,
                detail: format!(
                    "one test e-mail a minute; try again in {} s",
                    wait.as_secs().max(1)
                ),
            },
            StatusCode::TOO_MANY_REQUESTS,
        ),
    };
    let view = crate::api::alerts::load_alerts(&state, &caller.publisher_id).await?;
    let profile = crate::api::profile::load_profile(&state, &caller.publisher_id).await?;
    let page = render_alerts(
        &caller,
        &view,
        &profile,
        AlertsOutcome {
            test: Some(delivery),
            ..AlertsOutcome::default()
        },
    );
    Ok((status, page).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_test_e_mail_a_minute_per_publisher() {
        let throttle = TestMailThrottle::default();
        let (a, b): (PublisherId, PublisherId) =
            ("pub_a".parse().unwrap(), "pub_b".parse().unwrap());
        let start = Instant::now();
        assert!(throttle.take(&a, start).is_ok());
        let wait = throttle
            .take(&a, start + Duration::from_secs(20))
            .unwrap_err();
        assert_eq!(wait, Duration::from_secs(40));
        assert!(
            throttle.take(&b, start + Duration::from_secs(20)).is_ok(),
            "another publisher's turn"
        );
        assert!(throttle.take(&a, start + TEST_MAIL_INTERVAL).is_ok());
    }
}
