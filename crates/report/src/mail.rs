//! Alert e-mails: the same alert as the webhook's payload, written for people
//! (a plain-text part and an HTML part with a table). The SMTP client stays
//! out of this crate: the binary implements [`MailTransport`] with lettre,
//! tests with a local SMTP sink or a recorder.

use std::fmt;
use std::fmt::Write as _;

use async_trait::async_trait;
use copyhound_core::Result;

use crate::html::xml_escape as escape;
use crate::webhook::WebhookPayload;

/// One alert e-mail, ready to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlertEmail {
    /// Recipients.
    pub to: Vec<String>,
    /// Subject line.
    pub subject: String,
    /// The plain-text part.
    pub text: String,
    /// The HTML part.
    pub html: String,
    /// Stable id of this alert (the webhook's delivery id), sent as
    /// `X-CopyHound-Delivery` so a mailbox rule can dedupe.
    pub delivery_id: String,
}

/// Sends e-mail; implemented by the binary over its SMTP client.
///
/// `send` returns once the server accepted the message, or an error:
/// `Transient` when trying again may help (connection refused, timeout, 4xx
/// replies), another kind when it cannot (5xx replies, bad addresses).
#[async_trait]
pub trait MailTransport: fmt::Debug + Send + Sync {
    /// Sends `email`.
    async fn send(&self, email: &AlertEmail) -> Result<()>;
}

/// Returns the e-mail of an alert to `to`: the payload's matches, one line
/// (and one table row) each.
pub fn build_alert_email(payload: &WebhookPayload, to: &[String], delivery_id: &str) -> AlertEmail {
    let count = payload.new_confirmed;
    let noun = if count == 1 {
        "infringement"
    } else {
        "infringements"
    };
    let subject = format!(
        "[CopyHound] {count} newly confirmed {noun} for {}",
        payload.publisher_id
    );
    let since = payload.since.map_or_else(
        || "since alerts began".to_string(),
        |since| format!("since {}", since.format("%Y-%m-%d %H:%M UTC")),
    );
    let verb = if count == 1 { "was" } else { "were" };
    let mut text = format!(
        "{count} {noun} of {publisher}'s works {verb} confirmed {since} (alert threshold {threshold}).\n\n",
        publisher = payload.publisher_id,
        threshold = payload.threshold,
    );
    let mut rows = String::new();
    for found in &payload.matches {
        let coverage = found.chapter_coverage * 100.0;
        let first_seen = found.first_seen.format("%Y-%m-%d");
        let _ = writeln!(
            text,
            "- {url}\n  work {work}, chapter {chapter}: {coverage:.0}% copied, first seen {first_seen} (match {id})",
            url = found.url,
            work = found.work_id,
            chapter = found.chapter_id,
            id = found.match_id,
        );
        let _ = write!(
            rows,
            "<tr><td><a href=\"{url}\">{url_text}</a></td><td>{work}</td><td>{chapter}</td>\
             <td style=\"text-align:right\">{coverage:.0}%</td><td>{first_seen}</td><td>{id}</td></tr>",
            url = escape(&found.url),
            url_text = escape(&found.url),
            work = escape(found.work_id.as_str()),
            chapter = escape(found.chapter_id.as_str()),
            id = escape(found.match_id.as_str()),
        );
    }
    if payload.truncated {
        let _ = writeln!(
            text,
            "\nThe first {} are listed; the console lists all of them.",
            payload.matches.len()
        );
    }
    text.push_str("\nEvidence packages (WARC) for each match are in the CopyHound console.\n");
    let html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\">\
         <h2 style=\"margin:0 0 8px\">{count} newly confirmed {noun}</h2>\
         <p>{publisher}, {since} (alert threshold {threshold}).</p>\
         <table cellpadding=\"6\" style=\"border-collapse:collapse;border:1px solid #ccc\">\
         <tr style=\"background:#f0f0f0\"><th>Page</th><th>Work</th><th>Chapter</th><th>Copied</th>\
         <th>First seen</th><th>Match</th></tr>{rows}</table>{more}\
         <p style=\"color:#666\">Evidence packages (WARC) for each match are in the CopyHound console.</p>\
         </body></html>",
        publisher = escape(payload.publisher_id.as_str()),
        since = escape(&since),
        threshold = payload.threshold,
        more = if payload.truncated {
            format!(
                "<p>The first {} are listed; the console lists all of them.</p>",
                payload.matches.len()
            )
        } else {
            String::new()
        },
    );
    AlertEmail {
        to: to.to_vec(),
        subject,
        text,
        html,
        delivery_id: delivery_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::webhook::AlertMatch;

    #[test]
    fn lists_every_match_and_escapes_page_urls() {
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 14, 0, 0).unwrap();
        let found = |id: &str, url: &str| AlertMatch {
            match_id: id.parse().unwrap(),
            url: url.into(),
            site_id: "s1".parse().unwrap(),
            work_id: "w1".parse().unwrap(),
            chapter_id: "c3".parse().unwrap(),
            chapter_coverage: 0.875,
            first_seen: at,
            page_body_sha256: String::new(),
        };
        let payload = WebhookPayload {
            event: "alert.new_confirmed",
            publisher_id: "P01".parse().unwrap(),
            sent_at: at,
            new_confirmed: 2,
            threshold: 1,
            since: Some(at),
            matches: vec![
                found("m1", "http://a.example/1.html"),
                found("m2", "http://b.example/x?a=1&b=<script>"),
            ],
            truncated: false,
        };
        let email = build_alert_email(&payload, &["legal@p01.example".into()], "dlv_1");
        assert_eq!(
            email.subject,
            "[CopyHound] 2 newly confirmed infringements for P01"
        );
        assert!(email.text.contains("http://a.example/1.html"));
        assert!(email.text.contains("88% copied"), "{}", email.text);
        assert!(email.text.contains("since 2026-03-01 14:00 UTC"));
        assert!(email.html.contains("a=1&amp;b=&lt;script&gt;"));
        assert!(!email.html.contains("<script>"));
        assert_eq!(email.html.matches("<tr>").count(), 2);
        assert_eq!(email.to, ["legal@p01.example"]);
    }
}
