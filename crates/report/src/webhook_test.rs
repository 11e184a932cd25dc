use std::collections::VecDeque;
use std::sync::Mutex;

use chrono::{TimeZone, Utc};

use super::*;
use crate::alert::{AlertPolicy, evaluate_alert};
use crate::testsuite::{publisher_id, sample_input};
use copyhound_core::model::AlertOn;

/// One recorded post: url, headers, body.
type Post = (String, Vec<(String, String)>, Vec<u8>);

/// A transport answering from a script and recording what it was asked.
#[derive(Debug, Default)]
struct ScriptedTransport {
    answers: Mutex<VecDeque<Result<u16>>>,
    posts: Mutex<Vec<Post>>,
    sleeps: Mutex<Vec<Duration>>,
}

impl ScriptedTransport {
    fn new(answers: Vec<Result<u16>>) -> Self {
        Self {
            answers: Mutex::new(answers.into()),
            ..Self::default()
        }
    }
}

#[async_trait]
impl WebhookTransport for ScriptedTransport {
    async fn post(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> Result<u16> {
        self.posts
            .lock()
            .unwrap()
            .push((url.to_string(), headers.to_vec(), body.to_vec()));
        self.answers.lock().unwrap().pop_front().unwrap_or(Ok(200))
    }

    async fn sleep(&self, duration: Duration) {
        self.sleeps.lock().unwrap().push(duration);
    }
}

fn sample_request() -> WebhookRequest {
    let input = sample_input();
    let decision = evaluate_alert(
        &AlertPolicy {
            threshold_new_confirmed: 1,
            on: AlertOn::Confirmed,
        },
        &input.matches,
        None,
    );
    let sent_at = Utc.with_ymd_and_hms(2024, 4, 1, 0, 0, 0).unwrap();
    let payload = build_alert_payload(&publisher_id(), &decision, &input.matches, sent_at);
    sign_webhook(&payload, b"s3cret").unwrap()
}

#[test]
fn signature_matches_the_rfc_4231_vector() {
    let value = signature_header_value(b"Jefe", b"what do ya want for nothing?");
    assert_eq!(
        value,
        "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    assert!(verify_signature(
        b"Jefe",
        b"what do ya want for nothing?",
        &value
    ));
    assert!(!verify_signature(
        b"Jefe",
        b"what do ya want for nothing!",
        &value
    ));
    assert!(!verify_signature(
        b"other",
        b"what do ya want for nothing?",
        &value
    ));
    assert!(!verify_signature(b"Jefe", b"x", "sha256=zz"));
    assert!(!verify_signature(b"Jefe", b"x", "md5=00"));
}

#[test]
fn signed_requests_carry_payload_headers_and_a_stable_delivery_id() {
    let request = sample_request();
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    assert!(verify_signature(
        b"s3cret",
        &request.body,
        &header(SIGNATURE_HEADER).unwrap()
    ));
    assert_eq!(header("X-CopyHound-Delivery").unwrap(), request.delivery_id);
    assert_eq!(
        request,
        sample_request(),
        "same payload, same delivery id and signature"
    );
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["event"], "alert.new_confirmed");
    assert_eq!(body["new_confirmed"], 2);
    assert_eq!(body["matches"][0]["match_id"], "m_0001");
    assert_eq!(body["truncated"], false);
    let decision = evaluate_alert(
        &AlertPolicy {
            threshold_new_confirmed: 1,
            on: AlertOn::Confirmed,
        },
        &[],
        None,
    );
    let nothing = build_alert_payload(
        &publisher_id(),
        &decision,
        &[],
        Utc.with_ymd_and_hms(2024, 4, 1, 0, 0, 0).unwrap(),
    );
    let empty = sign_webhook(&nothing, b"");
    assert_eq!(empty.unwrap_err().kind(), ErrorKind::Config);
}

#[tokio::test]
async fn retries_with_backoff_then_delivers() {
    let transport = ScriptedTransport::new(vec![
        Err(Error::new(ErrorKind::Transient, "connection refused")),
        Ok(503),
        Ok(429),
        Ok(204),
    ]);
    let retry = RetryPolicy {
        max_attempts: 5,
        initial_backoff_ms: 100,
        max_backoff_ms: 300,
    };
    let log = deliver_webhook(
        &transport,
        "https://hooks.example/x",
        &sample_request(),
        &retry,
    )
    .await;
    assert_eq!(log.outcome, DeliveryOutcome::Delivered { status: 204 });
    assert_eq!(log.attempts.len(), 4);
    assert_eq!(log.attempts[0].error.as_deref(), Some("connection refused"));
    assert_eq!(
        log.attempts
            .iter()
            .map(|attempt| attempt.backoff_ms)
            .collect::<Vec<_>>(),
        [Some(100), Some(200), Some(300), None]
    );
    let sleeps = transport.sleeps.lock().unwrap().clone();
    assert_eq!(
        sleeps,
        [
            Duration::from_millis(100),
            Duration::from_millis(200),
            Duration::from_millis(300)
        ]
    );
    let posts = transport.posts.lock().unwrap();
    assert!(
        posts.iter().all(
            |(url, _, body)| url == "https://hooks.example/x" && *body == sample_request().body
        )
    );
}

#[tokio::test]
async fn client_errors_are_not_retried_and_exhaustion_gives_up() {
    let rejected = ScriptedTransport::new(vec![Ok(401)]);
    let log = deliver_webhook(
        &rejected,
        "https://hooks.example/x",
        &sample_request(),
        &RetryPolicy::default(),
    )
    .await;
    assert_eq!(log.outcome, DeliveryOutcome::Rejected { status: 401 });
    assert_eq!(log.attempts.len(), 1);
    assert!(rejected.sleeps.lock().unwrap().is_empty());

    let down = ScriptedTransport::new(vec![Ok(500), Ok(502), Ok(500)]);
    let retry = RetryPolicy {
        max_attempts: 3,
        initial_backoff_ms: 10,
        max_backoff_ms: 1000,
    };
    let log = deliver_webhook(&down, "https://hooks.example/x", &sample_request(), &retry).await;
    assert_eq!(log.outcome, DeliveryOutcome::GaveUp);
    assert_eq!(log.attempts.len(), 3);
    assert_eq!(down.sleeps.lock().unwrap().len(), 2);
    let json = serde_json::to_value(&log).unwrap();
    assert_eq!(json["outcome"]["outcome"], "gave_up");
}

#[test]
fn backoff_doubles_up_to_the_cap() {
    let retry = RetryPolicy {
        max_attempts: 10,
        initial_backoff_ms: 1000,
        max_backoff_ms: 5000,
    };
    let waits: Vec<u128> = (1..=5)
        .map(|attempt| retry.backoff(attempt).as_millis())
        .collect();
    assert_eq!(waits, [1000, 2000, 4000, 5000, 5000]);
    assert_eq!(retry.backoff(200).as_millis(), 5000);
}
