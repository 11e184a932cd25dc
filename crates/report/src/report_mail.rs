//! E-mails other than alerts, to the same recipients through the same
//! [`crate::MailTransport`]: a scheduled report once rendered (attached, or
//! linked in the console when it is large and the console's address is
//! known), and the test message an admin sends from the alerts page to see
//! that the channel works.

use copyhound_core::model::{Language, Report};

use crate::html::xml_escape as escape;
use crate::mail::{AlertEmail, MailAttachment};

/// Largest report attached to its e-mail, bytes, when the console's address
/// (`server.public_url`) is known: a larger one is linked there instead
/// (mail servers commonly refuse messages past 10 to 25 MiB). Without the
/// address the report is always attached, there being nothing to link.
pub const MAX_REPORT_ATTACHMENT_BYTES: u64 = 8 << 20;

/// Who a report e-mail is from and for, and where the console is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportMailContext {
    /// The publisher's display name.
    pub publisher_name: String,
    /// The language of the e-mail.
    pub language: Language,
    /// Where users reach the console (`server.public_url`).
    pub console_url: Option<String>,
    /// Largest report attached rather than linked when `console_url` is set.
    pub max_attachment_bytes: u64,
}

/// Returns the e-mail of a rendered scheduled `report` to `to`: the file
/// attached, or, when it exceeds `context.max_attachment_bytes` and the
/// console's address is known, a link to its download in the console.
pub fn build_report_email(
    report: &Report,
    artifact: &[u8],
    context: &ReportMailContext,
    to: &[String],
) -> AlertEmail {
    let format = report.format;
    let filename = format!("{}.{}", report.id, format.file_extension());
    let size = artifact.len() as u64;
    let link = context
        .console_url
        .as_deref()
        .filter(|_| size > context.max_attachment_bytes)
        .map(|base| {
            format!(
                "{}/ui/reports/{}/artifact",
                base.trim_end_matches('/'),
                report.id
            )
        });
    let day = report
        .finished_at
        .unwrap_or(report.created_at)
        .format("%Y-%m-%d")
        .to_string();
    let publisher: String = context
        .publisher_name
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let kib = size.div_ceil(1024);
    let (subject, body, open) = match context.language {
        Language::Zh => (
            format!(
                "[CopyHound] {publisher}的定期报告（{}，{day}）",
                format.as_str()
            ),
            match &link {
                Some(_) => format!(
                    "{publisher}的定期侵权报告（{}，{kib} KiB）已生成；文件较大，请在控制台下载。",
                    format.as_str()
                ),
                None => format!(
                    "{publisher}的定期侵权报告（{}，{kib} KiB）已生成，见附件 {filename}。",
                    format.as_str()
                ),
            },
            "在控制台下载",
        ),
        Language::En => (
            format!(
                "[CopyHound] Scheduled {} report for {publisher}, {day}",
                format.as_str()
            ),
            match &link {
                Some(_) => format!(
                    "The scheduled infringement report for {publisher} ({}, {kib} KiB) is ready; it is too large to attach, download it from the console.",
                    format.as_str()
                ),
                None => format!(
                    "The scheduled infringement report for {publisher} ({}, {kib} KiB) is attached: {filename}.",
                    format.as_str()
                ),
            },
            "Download from the console",
        ),
    };
    let mut text = format!("{body}\n");
    let mut html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><p>{}</p>",
        escape(&body)
    );
    if let Some(link) = &link {
        text.push_str(&format!("\n{open}: {link}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>",
            escape(link),
            escape(open)
        ));
    }
    html.push_str("</body></html>");
    let attachments = match link {
        Some(_) => Vec::new(),
        None => vec![MailAttachment {
            filename,
            content_type: format.content_type().to_string(),
            bytes: artifact.to_vec(),
        }],
    };
    AlertEmail {
        to: to.to_vec(),
        subject,
        text,
        html,
        delivery_id: format!("report-{}", report.id),
        attachments,
    }
}

/// Returns the test e-mail an admin sends from the console to `to`, in
/// `language`, naming the publisher and who sent it.
pub fn build_test_email(
    publisher_name: &str,
    sent_by: &str,
    language: Language,
    to: &[String],
    delivery_id: &str,
) -> AlertEmail {
    let clean = |text: &str| -> String { text.chars().filter(|c| !c.is_control()).collect() };
    let (publisher, sent_by) = (clean(publisher_name), clean(sent_by));
    let (subject, body) = match language {
        Language::Zh => (
            format!("[CopyHound] {publisher}：测试邮件"),
            format!(
                "这是 {sent_by} 从 CopyHound 控制台发送的测试邮件。收到即说明侵权提醒会送达此地址。"
            ),
        ),
        Language::En => (
            format!("[CopyHound] Test e-mail for {publisher}"),
            format!(
                "{sent_by} sent this test from the CopyHound console. Receiving it means infringement alerts reach this address."
            ),
        ),
    };
    AlertEmail {
        to: to.to_vec(),
        subject,
        html: format!(
            "<!doctype html><html><body style=\"font-family:sans-serif\"><p>{}</p></body></html>",
            escape(&body)
        ),
        text: format!("{body}\n"),
        delivery_id: delivery_id.to_string(),
        attachments: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use copyhound_core::model::{ReportFormat, ReportScope, ReportStatus};

    use super::*;

    fn report(format: ReportFormat) -> Report {
        let at = Utc.with_ymd_and_hms(2026, 3, 2, 6, 0, 0).unwrap();
        Report {
            id: "rep_weekly".parse().unwrap(),
            scope: ReportScope::of_publisher("P01".parse().unwrap()),
            format,
            status: ReportStatus::Ready {
                artifact: "rep_weekly".into(),
                bytes: 4,
            },
            created_at: at,
            finished_at: Some(at),
        }
    }

    fn context(console_url: Option<&str>, language: Language) -> ReportMailContext {
        ReportMailContext {
            publisher_name: "青萍文化".into(),
            language,
            console_url: console_url.map(str::to_string),
            max_attachment_bytes: 16,
        }
    }

    #[test]
    fn a_small_report_is_attached() {
        let email = build_report_email(
            &report(ReportFormat::Pdf),
            b"%PDF",
            &context(Some("https://copyhound.example/"), Language::En),
            &["legal@p01.example".into()],
        );
        assert_eq!(
            email.subject,
            "[CopyHound] Scheduled pdf report for 青萍文化, 2026-03-02"
        );
        assert_eq!(email.attachments.len(), 1);
        let attached = &email.attachments[0];
        assert_eq!(attached.filename, "rep_weekly.pdf");
        assert_eq!(attached.content_type, "application/pdf");
        assert_eq!(attached.bytes, b"%PDF");
        assert!(!email.text.contains("/ui/reports/"), "{}", email.text);
        assert_eq!(email.to, ["legal@p01.example"]);
    }

    #[test]
    fn a_large_report_is_linked_when_the_console_is_known_and_attached_otherwise() {
        let large = vec![b'x'; 17];
        let email = build_report_email(
            &report(ReportFormat::Csv),
            &large,
            &context(Some("https://copyhound.example/"), Language::Zh),
            &[],
        );
        assert!(email.attachments.is_empty());
        assert!(
            email
                .text
                .contains("在控制台下载: https://copyhound.example/ui/reports/rep_weekly/artifact"),
            "{}",
            email.text
        );
        assert!(
            email.subject.contains("青萍文化的定期报告"),
            "{}",
            email.subject
        );
        let email = build_report_email(
            &report(ReportFormat::Csv),
            &large,
            &context(None, Language::En),
            &[],
        );
        assert_eq!(email.attachments.len(), 1, "nothing to link to");
        assert_eq!(email.attachments[0].content_type, "text/csv; charset=utf-8");
    }

    #[test]
    fn the_test_e_mail_names_the_publisher_and_the_sender() {
        let email = build_test_email(
            "Demo <Press>",
            "Li Wei (key_1)",
            Language::En,
            &["a@b.example".into()],
            "test-1",
        );
        assert_eq!(email.subject, "[CopyHound] Test e-mail for Demo <Press>");
        assert!(email.text.contains("Li Wei (key_1) sent this test"));
        assert!(email.html.contains("Li Wei (key_1)"));
        let email = build_test_email("青萍", "李伟", Language::Zh, &[], "test-2");
        assert!(email.subject.contains("测试邮件"));
    }
}
