//! Runs `generate_report` tasks: the API records a queued report, a worker
//! renders it from the stores, stores the artifact and marks the report ready
//! (or failed, with the reason). Re-running a task renders again and overwrites
//! the artifact, so re-delivery is harmless.
//!
//! A report a schedule asked to e-mail has a mail record in the store
//! ([`report_mail_state_id`], written before its task is queued): once the
//! report is ready, the handler claims that record, sends the report to the
//! publisher's alert recipients and records the outcome. A transient failure
//! fails the task, and its retry (which finds the report ready) sends again.

use std::sync::Arc;

use chrono::Utc;
use copyhound_core::ids::{PublisherId, ReportId};
use copyhound_core::model::ReportStatus;
use copyhound_core::model::{AlertState, Language, Report, ReportFormat};
use copyhound_core::ports::{
    MatchStore, PageStore, PublisherStore, RecipientLookup, ReportStore, SiteStore, WorkStore,
    recipient_query,
};
use copyhound_core::{Error, ErrorKind, Result};
use tracing::{info, warn};

use crate::data::ReportData;
use crate::{
    MAX_REPORT_ATTACHMENT_BYTES, MailTransport, ReportMailContext, build_report_data,
    build_report_email, load_report_input, render,
};

/// The id of the mail record of report `report_id`: present when its
/// schedule e-mails it; `last_sent_at` set once that is settled.
pub fn report_mail_state_id(publisher_id: &PublisherId, report_id: &ReportId) -> String {
    format!("{publisher_id}/report-mail/{report_id}")
}

/// Returns the pending mail record of a report a schedule e-mails.
pub fn pending_report_mail(publisher_id: &PublisherId, report_id: &ReportId) -> AlertState {
    AlertState {
        id: report_mail_state_id(publisher_id, report_id),
        publisher_id: publisher_id.clone(),
        channel: "report e-mail to the alert recipients".into(),
        version: 1,
        last_sent_at: None,
        claimed_by: None,
        claimed_until: None,
        last_outcome: None,
    }
}

/// How long a handler's claim on a report's e-mail holds.
const MAIL_CLAIM: chrono::Duration = chrono::Duration::minutes(10);

/// Most sites of one takedown report whose recipients are looked up.
pub const MAX_RECIPIENT_SITES: usize = 50;

/// How long one report waits for recipient lookups in all; sites not
/// looked up by then are drafted without a recipient.
const RECIPIENT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// The report generator's task handler.
#[derive(Debug, Clone)]
pub struct ReportHandler {
    publishers: Arc<dyn PublisherStore>,
    reports: Arc<dyn ReportStore>,
    matches: Arc<dyn MatchStore>,
    works: Arc<dyn WorkStore>,
    sites: Arc<dyn SiteStore>,
    pages: Arc<dyn PageStore>,
    mail: Option<Arc<dyn MailTransport>>,
    console_url: Option<String>,
    recipients: Option<Arc<dyn RecipientLookup>>,
}

impl ReportHandler {
    /// Returns the handler over the store ports it reads and writes.
    pub fn new(
        publishers: Arc<dyn PublisherStore>,
        reports: Arc<dyn ReportStore>,
        matches: Arc<dyn MatchStore>,
        works: Arc<dyn WorkStore>,
        sites: Arc<dyn SiteStore>,
        pages: Arc<dyn PageStore>,
    ) -> Self {
        Self {
            publishers,
            reports,
            matches,
            works,
            sites,
            pages,
            mail: None,
            console_url: None,
            recipients: None,
        }
    }

    /// Returns the handler addressing takedown notices (`takedown`,
    /// `takedown_email`) to the recipients `lookup` finds for each site.
    pub fn with_recipients(mut self, lookup: Option<Arc<dyn RecipientLookup>>) -> Self {
        self.recipients = lookup;
        self
    }

    /// Sets the recipients of the first [`MAX_RECIPIENT_SITES`] sites of
    /// `data` within [`RECIPIENT_DEADLINE`]; a site whose lookup fails is
    /// drafted without one (logged).
    async fn add_recipients(&self, data: &mut ReportData) {
        let Some(lookup) = &self.recipients else {
            return;
        };
        let deadline = tokio::time::Instant::now() + RECIPIENT_DEADLINE;
        for site in data.sites.iter_mut().take(MAX_RECIPIENT_SITES) {
            let found = tokio::time::timeout_at(deadline, async {
                let stored = self.sites.get_site(&site.site_id).await?;
                let query = recipient_query(&stored, self.pages.as_ref()).await?;
                lookup.recipients(&query).await
            })
            .await;
            match found {
                Ok(Ok(recipients)) => site.recipients = Some(recipients),
                Ok(Err(error)) => {
                    warn!(site_id = %site.site_id, %error, "recipient lookup failed");
                }
                Err(_) => {
                    warn!(site_id = %site.site_id, "recipient lookups ran out of time");
                    return;
                }
            }
        }
    }

    /// Returns the handler e-mailing the reports schedules ask for through
    /// `mail`, linking large ones to the console at `console_url`
    /// (`server.public_url`). Without a mail server such reports are
    /// recorded as not sent.
    pub fn with_mail(
        mut self,
        mail: Option<Arc<dyn MailTransport>>,
        console_url: Option<String>,
    ) -> Self {
        self.mail = mail;
        self.console_url = console_url;
        self
    }
}

/// The report stage's task (`generate_report`): the runtime's dispatcher
/// matches the task kind (the one map from kind to stage) and calls these.
impl ReportHandler {
    /// Runs `generate_report`: renders the report, stores its artifact and
    /// marks it ready (or failed), then e-mails it if its schedule asked to.
    pub async fn generate_report(
        &self,
        publisher_id: &PublisherId,
        report_id: &ReportId,
    ) -> Result<()> {
        let mut report = self.reports.get_report(publisher_id, report_id).await?;
        if matches!(report.status, ReportStatus::Ready { .. }) {
            return self.mail_report(&report, None).await;
        }
        // A report stored without a review scope gets its format's default.
        let format = report.format;
        report.scope.review = Some(report.scope.review_for(format));
        let rendered = async {
            let mut input = load_report_input(
                self.matches.as_ref(),
                self.works.as_ref(),
                self.sites.as_ref(),
                &report.scope,
            )
            .await?;
            if let Ok(publisher) = self.publishers.get_publisher(publisher_id).await {
                input.set_publisher(publisher);
            }
            if format == ReportFormat::Warc {
                let file = format!("{report_id}.warc");
                let package = crate::warc::evidence_for(
                    self.pages.as_ref(),
                    &input.matches,
                    &file,
                    Utc::now(),
                )
                .await?;
                return Ok(package.warc);
            }
            let mut data = build_report_data(&input);
            if matches!(format, ReportFormat::Takedown | ReportFormat::TakedownEmail) {
                self.add_recipients(&mut data).await;
            }
            // Rendering is CPU work, and a PDF waits for a browser.
            tokio::task::spawn_blocking(move || render(&data, format))
                .await
                .map_err(|error| Error::internal(format!("report rendering panicked: {error}")))?
        }
        .await;
        match rendered {
            Ok(bytes) => {
                self.reports.put_artifact(report_id, &bytes).await?;
                report.status = ReportStatus::Ready {
                    artifact: report_id.to_string(),
                    bytes: bytes.len() as u64,
                };
            }
            Err(error) if error.is_retryable() => return Err(error),
            Err(error) => {
                report.status = ReportStatus::Failed {
                    error: error.to_string(),
                };
            }
        }
        report.finished_at = Some(Utc::now());
        self.reports.put_report(&report).await?;
        if matches!(report.status, ReportStatus::Ready { .. }) {
            return self.mail_report(&report, None).await;
        }
        Ok(())
    }

    /// A `generate_report` task that will not run to completion: a report
    /// still queued is marked failed with `reason`.
    pub async fn abandon_report(
        &self,
        publisher_id: &PublisherId,
        report_id: &ReportId,
        reason: &str,
    ) -> Result<()> {
        let mut report = self.reports.get_report(publisher_id, report_id).await?;
        if !matches!(report.status, ReportStatus::Queued) {
            return Ok(());
        }
        report.status = ReportStatus::Failed {
            error: reason.chars().take(500).collect(),
        };
        report.finished_at = Some(Utc::now());
        self.reports.put_report(&report).await
    }
}

impl ReportHandler {
    /// Sends a ready report to the alert recipients if its schedule asked for
    /// it and nobody did yet. Returns a transient error (the task retries)
    /// when the mail server may take it later.
    async fn mail_report(&self, report: &Report, artifact: Option<Vec<u8>>) -> Result<()> {
        let publisher_id = &report.scope.publisher_id;
        let id = report_mail_state_id(publisher_id, &report.id);
        let Some(mut state) = self.reports.get_alert_state(&id).await? else {
            return Ok(());
        };
        let now = Utc::now();
        if state.last_sent_at.is_some() || state.claimed_until.is_some_and(|until| until > now) {
            return Ok(());
        }
        let expected = Some(state.version);
        state.version += 1;
        state.claimed_by = Some(format!("report handler {}", std::process::id()));
        state.claimed_until = Some(now + MAIL_CLAIM);
        if !self.reports.swap_alert_state(expected, &state).await? {
            return Ok(());
        }
        let sent = self.send_report(report, artifact).await;
        let expected = Some(state.version);
        state.version += 1;
        state.claimed_by = None;
        state.claimed_until = None;
        let retry = match sent {
            Ok(outcome) => {
                state.last_sent_at = Some(Utc::now());
                state.last_outcome = Some(outcome);
                None
            }
            Err(error) if error.kind() == ErrorKind::Transient => {
                state.last_outcome = Some(format!("will retry: {error}"));
                Some(error)
            }
            Err(error) => {
                state.last_sent_at = Some(Utc::now());
                state.last_outcome = Some(format!("refused: {error}"));
                None
            }
        };
        info!(report_id = %report.id, publisher_id = %publisher_id, outcome = state.last_outcome.as_deref().unwrap_or_default(), "scheduled report e-mail");
        if !self.reports.swap_alert_state(expected, &state).await? {
            warn!(report_id = %report.id, "report e-mail record changed while this handler held its claim");
        }
        match retry {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Sends the report; returns what to record (`delivered to ...`, or why
    /// nothing was sent), or the mail server's error.
    async fn send_report(&self, report: &Report, artifact: Option<Vec<u8>>) -> Result<String> {
        let publisher = self
            .publishers
            .get_publisher(&report.scope.publisher_id)
            .await?;
        if publisher.alerts.email_to.is_empty() {
            return Ok("not sent: the publisher has no alert recipients".into());
        }
        let Some(mail) = &self.mail else {
            return Ok("not sent: no mail server is configured (smtp.host)".into());
        };
        let artifact = match artifact {
            Some(bytes) => bytes,
            None => self.reports.get_artifact(&report.id).await?,
        };
        let context = ReportMailContext {
            publisher_name: publisher.name.clone(),
            language: publisher.profile.language.unwrap_or(Language::En),
            console_url: self.console_url.clone(),
            max_attachment_bytes: MAX_REPORT_ATTACHMENT_BYTES,
        };
        let email = build_report_email(report, &artifact, &context, &publisher.alerts.email_to);
        mail.send(&email).await?;
        let how = if email.attachments.is_empty() {
            "linked"
        } else {
            "attached"
        };
        Ok(format!(
            "delivered ({how}) to {}",
            publisher.alerts.email_to.join(", ")
        ))
    }
}
