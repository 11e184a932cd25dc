//! Alert e-mails: the same alert as the webhook's payload, written for people
//! (a plain-text part and an HTML part with a table). The SMTP client stays
//! out of this crate: the binary implements [`MailTransport`] with lettre,
//! tests with a local SMTP sink or a recorder.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;

use async_trait::async_trait;
use copyhound_core::Result;
use copyhound_core::ids::{ChapterId, WorkId};
use copyhound_core::model::Language;

use crate::html::xml_escape as escape;
use crate::webhook::{AlertMatch, WebhookPayload};

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
    /// Files attached (a scheduled report); alerts attach none.
    pub attachments: Vec<MailAttachment>,
}

/// A file attached to an e-mail.
#[derive(Clone, PartialEq, Eq)]
pub struct MailAttachment {
    /// The file name the recipient sees.
    pub filename: String,
    /// Its media type (`application/pdf`).
    pub content_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl fmt::Debug for MailAttachment {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("MailAttachment")
            .field("filename", &self.filename)
            .field("content_type", &self.content_type)
            .field("bytes", &self.bytes.len())
            .finish()
    }
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

/// What an alert e-mail names beyond the payload's ids: the publisher, works
/// and chapters by title, a link per match, in the publisher's language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlertContext {
    /// The publisher's display name.
    pub publisher_name: String,
    /// The language of the e-mail.
    pub language: Language,
    /// Titles of the works in the payload (a missing one shows its id).
    pub work_titles: BTreeMap<WorkId, String>,
    /// Titles of the chapters in the payload (a missing one shows its id).
    pub chapter_titles: BTreeMap<(WorkId, ChapterId), String>,
    /// Where users reach the console (`server.public_url`); each match then
    /// links to `<console_url>/ui/matches/<id>`. `None`: no links.
    pub console_url: Option<String>,
}

impl AlertContext {
    /// Returns a context naming only what the payload holds (ids), in English.
    pub fn bare(payload: &WebhookPayload) -> Self {
        Self {
            publisher_name: payload.publisher_id.to_string(),
            language: Language::En,
            work_titles: BTreeMap::new(),
            chapter_titles: BTreeMap::new(),
            console_url: None,
        }
    }

    fn work_title<'a>(&'a self, found: &'a AlertMatch) -> &'a str {
        self.work_titles
            .get(&found.work_id)
            .map_or(found.work_id.as_str(), String::as_str)
    }

    fn chapter_title<'a>(&'a self, found: &'a AlertMatch) -> &'a str {
        self.chapter_titles
            .get(&(found.work_id.clone(), found.chapter_id.clone()))
            .map_or(found.chapter_id.as_str(), String::as_str)
    }

    fn link(&self, found: &AlertMatch) -> Option<String> {
        let base = self.console_url.as_deref()?.trim_end_matches('/');
        Some(format!("{base}/ui/matches/{}", found.match_id))
    }
}

/// The words of an alert e-mail in one language.
struct Words {
    subject: fn(count: u32, publisher: &str) -> String,
    intro: fn(count: u32, publisher: &str, since: &str, threshold: u32) -> String,
    since_start: &'static str,
    since: fn(at: &str) -> String,
    line: fn(work: &str, chapter: &str, percent: f32, first_seen: &str) -> String,
    open: &'static str,
    headers: [&'static str; 5],
    truncated: fn(listed: usize) -> String,
    footer: &'static str,
}

const ENGLISH: Words = Words {
    subject: |count, publisher| {
        let noun = if count == 1 {
            "infringement"
        } else {
            "infringements"
        };
        format!("[CopyHound] {count} newly confirmed {noun} for {publisher}")
    },
    intro: |count, publisher, since, threshold| {
        let (noun, verb) = if count == 1 {
            ("infringement", "was")
        } else {
            ("infringements", "were")
        };
        format!(
            "{count} {noun} of {publisher}'s works {verb} confirmed {since} (alert threshold {threshold})."
        )
    },
    since_start: "since alerts began",
    since: |at| format!("since {at}"),
    line: |work, chapter, percent, first_seen| {
        format!("{work}, {chapter}: {percent:.0}% copied, first seen {first_seen}")
    },
    open: "Open in the console",
    headers: ["Page", "Work", "Chapter", "Copied", "First seen"],
    truncated: |listed| format!("The first {listed} are listed; the console lists all of them."),
    footer: "Evidence packages (WARC) for each match are in the CopyHound console.",
};

const CHINESE: Words = Words {
    subject: |count, publisher| format!("[CopyHound] {publisher}：新确认 {count} 处侵权"),
    intro: |count, publisher, since, threshold| {
        format!("{publisher}的作品{since}新确认 {count} 处侵权（提醒阈值 {threshold}）。")
    },
    since_start: "自开启提醒以来",
    since: |at| format!("自 {at} 以来"),
    line: |work, chapter, percent, first_seen| {
        format!("《{work}》{chapter}：复制 {percent:.0}%，首次发现 {first_seen}")
    },
    open: "在控制台查看",
    headers: ["网页", "作品", "章节", "复制比例", "首次发现"],
    truncated: |listed| format!("此处列出前 {listed} 处；控制台列出全部。"),
    footer: "每处匹配的证据包（WARC）可在 CopyHound 控制台下载。",
};

/// Returns the e-mail of an alert to `to`, in `context.language`: the
/// payload's matches, one entry (and one table row) each, naming the work
/// and chapter by title and linking to the match in the console.
pub fn build_alert_email(
    payload: &WebhookPayload,
    context: &AlertContext,
    to: &[String],
    delivery_id: &str,
) -> AlertEmail {
    let words = match context.language {
        Language::Zh => &CHINESE,
        Language::En => &ENGLISH,
    };
    let count = payload.new_confirmed;
    let publisher = context.publisher_name.as_str();
    let subject: String = (words.subject)(count, publisher)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let since = payload.since.map_or_else(
        || words.since_start.to_string(),
        |since| (words.since)(&since.format("%Y-%m-%d %H:%M UTC").to_string()),
    );
    let intro = (words.intro)(count, publisher, &since, payload.threshold);
    let mut text = format!("{intro}\n\n");
    let mut rows = String::new();
    for found in &payload.matches {
        let percent = found.chapter_coverage * 100.0;
        let first_seen = found.first_seen.format("%Y-%m-%d").to_string();
        let work = context.work_title(found);
        let chapter = context.chapter_title(found);
        let link = context.link(found);
        let _ = writeln!(
            text,
            "- {url}\n  {line}",
            url = found.url,
            line = (words.line)(work, chapter, percent, &first_seen),
        );
        if let Some(link) = &link {
            let _ = writeln!(text, "  {}: {link}", words.open);
        }
        let open_cell = link.as_deref().map_or_else(String::new, |link| {
            format!("<a href=\"{}\">{}</a>", escape(link), escape(words.open))
        });
        let _ = write!(
            rows,
            "<tr><td><a href=\"{url}\">{url}</a></td><td>{work}</td><td>{chapter}</td>\
             <td style=\"text-align:right\">{percent:.0}%</td><td>{first_seen}</td><td>{open_cell}</td></tr>",
            url = escape(&found.url),
            work = escape(work),
            chapter = escape(chapter),
        );
    }
    let more = payload
        .truncated
        .then(|| (words.truncated)(payload.matches.len()));
    if let Some(more) = &more {
        let _ = writeln!(text, "\n{more}");
    }
    let _ = writeln!(text, "\n{}", words.footer);
    let [page, work, chapter, copied, first_seen] = words.headers;
    let html = format!(
        "<!doctype html><html lang=\"{lang}\"><body style=\"font-family:sans-serif\">\
         <h2 style=\"margin:0 0 8px\">{title}</h2>\
         <p>{intro}</p>\
         <table cellpadding=\"6\" style=\"border-collapse:collapse;border:1px solid #ccc\">\
         <tr style=\"background:#f0f0f0\"><th>{page}</th><th>{work}</th><th>{chapter}</th><th>{copied}</th>\
         <th>{first_seen}</th><th></th></tr>{rows}</table>{more}\
         <p style=\"color:#666\">{footer}</p>\
         </body></html>",
        lang = match context.language {
            Language::Zh => "zh",
            Language::En => "en",
        },
        title = escape(&subject),
        intro = escape(&intro),
        more = more.map_or_else(String::new, |more| format!("<p>{}</p>", escape(&more))),
        footer = escape(words.footer),
    );
    AlertEmail {
        to: to.to_vec(),
        subject,
        text,
        html,
        delivery_id: delivery_id.to_string(),
        attachments: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::webhook::AlertMatch;

    fn payload() -> WebhookPayload {
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 14, 0, 0).unwrap();
        let found = |id: &str, url: &str, chapter: &str| AlertMatch {
            match_id: id.parse().unwrap(),
            url: url.into(),
            site_id: "s1".parse().unwrap(),
            work_id: "w1".parse().unwrap(),
            chapter_id: chapter.parse().unwrap(),
            chapter_coverage: 0.875,
            first_seen: at,
            page_body_sha256: String::new(),
        };
        WebhookPayload {
            event: "alert.new_confirmed",
            publisher_id: "P01".parse().unwrap(),
            sent_at: at,
            new_confirmed: 2,
            threshold: 1,
            since: Some(at),
            matches: vec![
                found("m1", "http://a.example/1.html", "c3"),
                found("m2", "http://b.example/x?a=1&b=<script>", "c9"),
            ],
            truncated: false,
        }
    }

    fn context(language: Language) -> AlertContext {
        AlertContext {
            publisher_name: "青萍文化 <Qingping>".into(),
            language,
            work_titles: [("w1".parse().unwrap(), "风起青萍".to_string())].into(),
            chapter_titles: [(
                ("w1".parse().unwrap(), "c3".parse().unwrap()),
                "第三章 云涌".to_string(),
            )]
            .into(),
            console_url: Some("https://copyhound.example/".into()),
        }
    }

    #[test]
    fn lists_every_match_and_escapes_page_urls() {
        let payload = payload();
        let email = build_alert_email(
            &payload,
            &AlertContext::bare(&payload),
            &["legal@p01.example".into()],
            "dlv_1",
        );
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
        assert!(
            !email.text.contains("/ui/matches/"),
            "no public_url, no links"
        );
        assert_eq!(email.to, ["legal@p01.example"]);
    }

    #[test]
    fn names_works_chapters_and_the_publisher_by_title_with_console_links() {
        let email = build_alert_email(&payload(), &context(Language::En), &[], "dlv_1");
        assert_eq!(
            email.subject,
            "[CopyHound] 2 newly confirmed infringements for 青萍文化 <Qingping>"
        );
        assert!(
            email
                .text
                .contains("风起青萍, 第三章 云涌: 88% copied, first seen 2026-03-01"),
            "{}",
            email.text
        );
        assert!(
            email.text.contains("风起青萍, c9:"),
            "a missing chapter shows its id"
        );
        assert!(!email.text.contains("w1"), "{}", email.text);
        assert!(
            email
                .text
                .contains("Open in the console: https://copyhound.example/ui/matches/m1"),
            "{}",
            email.text
        );
        assert!(
            email
                .html
                .contains("<a href=\"https://copyhound.example/ui/matches/m2\">")
        );
        assert!(email.html.contains("青萍文化 &lt;Qingping&gt;"));
    }

    #[test]
    fn a_chinese_publisher_gets_its_alert_in_chinese() {
        let email = build_alert_email(&payload(), &context(Language::Zh), &[], "dlv_1");
        assert_eq!(
            email.subject,
            "[CopyHound] 青萍文化 <Qingping>：新确认 2 处侵权"
        );
        assert!(
            email
                .text
                .contains("《风起青萍》第三章 云涌：复制 88%，首次发现 2026-03-01"),
            "{}",
            email.text
        );
        assert!(email.text.contains("自 2026-03-01 14:00 UTC 以来"));
        assert!(
            email
                .text
                .contains("在控制台查看: https://copyhound.example/ui/matches/m1")
        );
        assert!(email.html.contains("<html lang=\"zh\">"));
        assert!(email.html.contains("<th>作品</th>"));
        assert!(!email.text.contains("copied"), "{}", email.text);
    }
}
