//! Scheduled reports and alerts (configured under `[reports]`).
//!
//! A scheduled report gets an id derived from (publisher, cron slot), so two
//! scheduler processes enqueue it once and a restarted one does not repeat it.
//! Alerts compare each publisher's confirmed matches with the time of the
//! last alert on that channel (webhook or e-mail). That time lives in the
//! store ([`AlertState`]), and a scheduler claims an alert by compare-and-swap
//! before sending it, so any number of schedulers send each alert once. A
//! claim lapses after [`CLAIM_LEASE`]: a scheduler killed mid-send is replaced
//! by the next one, which sends again (at least once, never lost). Every
//! delivery is also appended to this process's `data_dir/alerts/deliveries.jsonl`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use copyhound_core::ErrorKind;
use copyhound_core::config::{Config, ReportsConfig};
use copyhound_core::ids::{PublisherId, ReportId};
use copyhound_core::model::{
    AlertOn, AlertState, Language, Match, MatchStatus, Report, ReportScope, ReportStatus, Task,
    TaskKind, Timestamp,
};
use copyhound_core::ports::{
    MatchFilter, MatchStore, PageRequest, Ports, PublisherStore, ReportStore, TaskQueue, WorkStore,
    collect_all,
};
use copyhound_core::schedule::{Cron, last_slot, parse_schedule};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::{
    AlertContext, AlertPolicy, DeliveryOutcome, MailTransport, RetryPolicy, WebhookTransport,
    build_alert_email, build_alert_payload, deliver_webhook, evaluate_alert, sign_webhook,
};

/// How long a scheduler's claim on an alert holds: longer than every retry of
/// one delivery (5 attempts of at most 30 s, 15 s of backoff).
pub const CLAIM_LEASE: Duration = Duration::from_secs(600);

/// One way an alert goes out.
enum Channel<'a> {
    Webhook { url: &'a str, secret: &'a str },
    Email { to: &'a [String] },
}

impl Channel<'_> {
    /// The channel as stored and logged.
    fn describe(&self) -> String {
        match self {
            Self::Webhook { url, .. } => format!("webhook {url}"),
            Self::Email { to } => format!("email {}", to.join(", ")),
        }
    }
}

/// Runs the `[reports]` schedules and alerts.
#[derive(Debug)]
pub struct ReportScheduler {
    config: ReportsConfig,
    crons: Vec<Cron>,
    reports: Arc<dyn ReportStore>,
    matches: Arc<dyn MatchStore>,
    publishers: Arc<dyn PublisherStore>,
    works: Arc<dyn WorkStore>,
    queue: Arc<dyn TaskQueue>,
    /// `server.public_url`: alert e-mails link each match to the console there.
    console_url: Option<String>,
    state_dir: PathBuf,
    transport: Arc<dyn WebhookTransport>,
    mail: Option<Arc<dyn MailTransport>>,
    /// Names this scheduler in alert claims.
    name: String,
}

impl ReportScheduler {
    /// Checks the configured schedules' cron expressions. Webhooks go out
    /// through `transport`, e-mail through `mail` (required when a configured
    /// alert has `email_to`; without it publishers' own e-mail alerts wait).
    pub fn new(
        config: &Config,
        ports: &Ports,
        transport: Arc<dyn WebhookTransport>,
        mail: Option<Arc<dyn MailTransport>>,
    ) -> anyhow::Result<Self> {
        let settings = config.reports.clone();
        let Ports {
            reports,
            matches,
            publishers,
            works,
            queue,
            ..
        } = ports.clone();
        let crons = settings
            .schedules
            .iter()
            .map(|schedule| {
                parse_schedule(&schedule.cron).with_context(|| {
                    format!(
                        "reports.schedules: cron {:?} of {}",
                        schedule.cron, schedule.publisher
                    )
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if mail.is_none()
            && let Some(hook) = settings
                .alerts
                .iter()
                .find(|hook| !hook.email_to.is_empty())
        {
            anyhow::bail!(
                "reports.alerts for {} sends e-mail, and no mail server is configured (smtp.host)",
                hook.publisher
            );
        }
        Ok(Self {
            config: settings,
            crons,
            reports,
            matches,
            publishers,
            works,
            queue,
            console_url: config.server.public_url.clone(),
            state_dir: config.data_dir.join("alerts"),
            transport,
            mail,
            name: format!(
                "{}-{}-{}",
                std::env::var("HOSTNAME").unwrap_or_else(|_| "scheduler".into()),
                std::process::id(),
                uuid::Uuid::now_v7().simple()
            ),
        })
    }

    /// Checks schedules and alerts every `reports.tick_seconds` until shutdown.
    pub async fn run(&self, mut shutdown: watch::Receiver<bool>) {
        info!(
            schedules = self.config.schedules.len(),
            alerts = self.config.alerts.len(),
            "report scheduler started"
        );
        while !*shutdown.borrow() {
            if let Err(error) = self.tick(Utc::now()).await {
                warn!(error = %format!("{error:#}"), "report scheduler tick failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(self.config.tick_seconds)) => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    /// Enqueues due reports and sends due alerts.
    pub async fn tick(&self, now: Timestamp) -> anyhow::Result<()> {
        for (schedule, cron) in self.config.schedules.iter().zip(&self.crons) {
            let Some(slot) = last_slot(cron, now) else {
                continue;
            };
            let publisher_id: PublisherId = schedule.publisher.parse()?;
            let id =
                ReportId::derive_from(&format!("scheduled/{publisher_id}/{}", slot.to_rfc3339()));
            self.queue_report(publisher_id, id, schedule.format, false, now)
                .await?;
        }
        for hook in &self.config.alerts {
            self.check_alert(hook, now).await?;
        }
        self.check_publishers(now).await
    }

    /// Queues report `id` unless it exists: a slot's id is derived from the
    /// slot, so schedulers ticking at once queue it once (a second, racing
    /// task renders the same report again, which is idempotent). With
    /// `email`, the report's mail record is stored before its task is
    /// queued, so the handler that renders it finds the record.
    async fn queue_report(
        &self,
        publisher_id: PublisherId,
        id: ReportId,
        format: copyhound_core::model::ReportFormat,
        email: bool,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        match self.reports.get_report(&publisher_id, &id).await {
            Ok(_) => return Ok(()),
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error.into()),
        }
        let report = Report {
            id: id.clone(),
            scope: ReportScope::of_publisher(publisher_id.clone()),
            format,
            status: ReportStatus::Queued,
            created_at: now,
            finished_at: None,
        };
        self.reports.put_report(&report).await?;
        if email {
            // A racing scheduler that stored it first wins; one record either way.
            let pending = crate::pending_report_mail(&publisher_id, &id);
            self.reports.swap_alert_state(None, &pending).await?;
        }
        let task = Task::new(
            TaskKind::GenerateReport {
                publisher_id,
                report_id: id,
            },
            now,
        );
        self.queue.enqueue(vec![task]).await?;
        info!(report_id = %report.id, "scheduled report queued");
        Ok(())
    }

    /// Runs what publishers set up themselves: their report schedules, and
    /// (with a mail server) their e-mail alerts. One publisher's failure is
    /// logged and does not hold back the others.
    async fn check_publishers(&self, now: Timestamp) -> anyhow::Result<()> {
        let mut page = PageRequest {
            after: None,
            limit: 200,
        };
        loop {
            let listed = self.publishers.list_publishers(&page).await?;
            for publisher in &listed.items {
                if let Err(error) = self.check_publisher(publisher, now).await {
                    warn!(publisher_id = %publisher.id, error = %format!("{error:#}"), "publisher schedule or alert failed");
                }
            }
            match listed.next {
                Some(next) => page.after = Some(next),
                None => return Ok(()),
            }
        }
    }

    async fn check_publisher(
        &self,
        publisher: &copyhound_core::model::Publisher,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        for schedule in &publisher.report_schedules {
            let cron = parse_schedule(&schedule.cron)?;
            let Some(slot) = last_slot(&cron, now) else {
                continue;
            };
            let Some(last_queued) = self
                .scheduled_cap(publisher, schedule.format, slot, now)
                .await?
            else {
                continue;
            };
            let id = ReportId::derive_from(&format!(
                "scheduled/{}/{}/{}/{}",
                publisher.id,
                schedule.cron.trim(),
                schedule.format.as_str(),
                slot.to_rfc3339()
            ));
            self.queue_report(
                publisher.id.clone(),
                id,
                schedule.format,
                schedule.email,
                now,
            )
            .await?;
            self.record_scheduled(last_queued, now).await?;
        }
        if self.mail.is_some() && !publisher.alerts.email_to.is_empty() {
            let hook = copyhound_core::config::AlertHook {
                publisher: publisher.id.to_string(),
                webhook_url: None,
                secret: None,
                email_to: publisher.alerts.email_to.clone(),
                threshold_new_confirmed: publisher.alerts.threshold_new_confirmed,
                alert_on: publisher.alerts.alert_on,
            };
            self.check_alert(&hook, now).await?;
        }
        Ok(())
    }

    /// The cap on what publishers' schedules really fire: of one format, a
    /// publisher's scheduled reports are queued at most once an hour, and a
    /// slot at most once, however the schedules are spelled or edited
    /// (respelling a cron makes new slot ids, not new reports). Returns the
    /// state to record once the report is queued, or `None` to skip the slot.
    /// The time is kept in the store, so every scheduler process sees it.
    async fn scheduled_cap(
        &self,
        publisher: &copyhound_core::model::Publisher,
        format: copyhound_core::model::ReportFormat,
        slot: Timestamp,
        now: Timestamp,
    ) -> anyhow::Result<Option<AlertState>> {
        let id = format!("{}/scheduled-reports/{}", publisher.id, format.as_str());
        let stored = self.reports.get_alert_state(&id).await?;
        if let Some(last) = stored.as_ref().and_then(|state| state.last_sent_at)
            && (slot <= last || now - last < chrono::Duration::hours(1))
        {
            return Ok(None);
        }
        Ok(Some(stored.unwrap_or_else(|| AlertState {
            id,
            publisher_id: publisher.id.clone(),
            channel: format!("scheduled {} reports", format.as_str()),
            version: 0,
            last_sent_at: None,
            claimed_by: None,
            claimed_until: None,
            last_outcome: None,
        })))
    }

    /// Records that a scheduled report was queued at `now`. A racing
    /// scheduler that recorded first wins; the report id of a slot is shared,
    /// so the race queues nothing twice.
    async fn record_scheduled(&self, mut state: AlertState, now: Timestamp) -> anyhow::Result<()> {
        let expected = (state.version > 0).then_some(state.version);
        state.version += 1;
        state.last_sent_at = Some(now);
        state.last_outcome = Some("queued".into());
        self.reports.swap_alert_state(expected, &state).await?;
        Ok(())
    }

    async fn check_alert(
        &self,
        hook: &copyhound_core::config::AlertHook,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let publisher_id: PublisherId = hook.publisher.parse()?;
        let mut channels = Vec::new();
        if let (Some(url), Some(secret)) = (&hook.webhook_url, &hook.secret) {
            channels.push(Channel::Webhook { url, secret });
        }
        if !hook.email_to.is_empty() {
            channels.push(Channel::Email { to: &hook.email_to });
        }
        let mut confirmed = None;
        for channel in channels {
            self.check_channel(hook, &publisher_id, &channel, &mut confirmed, now)
                .await?;
        }
        Ok(())
    }

    /// Sends the alert of one channel if it is due and this scheduler wins its claim.
    async fn check_channel(
        &self,
        hook: &copyhound_core::config::AlertHook,
        publisher_id: &PublisherId,
        channel: &Channel<'_>,
        confirmed: &mut Option<Vec<Match>>,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let describe = channel.describe();
        let id = format!(
            "{publisher_id}/{}",
            &copyhound_core::ids::sha256_hex(describe.as_bytes())[..16]
        );
        let stored = self.reports.get_alert_state(&id).await?;
        if let Some(state) = &stored {
            let claimed = state.claimed_until.is_some_and(|until| until > now);
            if claimed && state.claimed_by.as_deref() != Some(self.name.as_str()) {
                return Ok(());
            }
        }
        let last = stored.as_ref().and_then(|state| state.last_sent_at);
        let matches = match confirmed {
            Some(matches) => matches,
            None => confirmed.insert(
                self.counted_matches(publisher_id, hook.alert_on, last)
                    .await?,
            ),
        };
        let decision = evaluate_alert(
            &AlertPolicy {
                threshold_new_confirmed: hook.threshold_new_confirmed,
                on: hook.alert_on,
            },
            matches,
            last,
        );
        if !decision.due {
            return Ok(());
        }
        let expected = stored.as_ref().map(|state| state.version);
        let lease = chrono::Duration::from_std(CLAIM_LEASE)?;
        let mut state = stored.unwrap_or_else(|| AlertState {
            id: id.clone(),
            publisher_id: publisher_id.clone(),
            channel: describe.clone(),
            version: 0,
            last_sent_at: None,
            claimed_by: None,
            claimed_until: None,
            last_outcome: None,
        });
        state.version += 1;
        state.claimed_by = Some(self.name.clone());
        state.claimed_until = Some(now + lease);
        if !self.reports.swap_alert_state(expected, &state).await? {
            // Another scheduler claimed it first.
            return Ok(());
        }
        let payload = build_alert_payload(publisher_id, &decision, matches, now);
        let outcome = match channel {
            Channel::Webhook { url, secret } => {
                let request = sign_webhook(&payload, secret.as_bytes())?;
                let log = deliver_webhook(
                    self.transport.as_ref(),
                    url,
                    &request,
                    &RetryPolicy::default(),
                )
                .await;
                self.append_delivery(&serde_json::to_value(&log)?)?;
                match log.outcome {
                    DeliveryOutcome::Delivered { status } => format!("delivered {status}"),
                    DeliveryOutcome::Rejected { status } => format!("rejected {status}"),
                    DeliveryOutcome::GaveUp => "gave up".to_string(),
                }
            }
            Channel::Email { to } => self.send_email(&payload, to).await?,
        };
        info!(publisher_id = %publisher_id, channel = %describe, new_confirmed = decision.new_confirmed, outcome = %outcome, "alert sent");
        let expected = Some(state.version);
        state.version += 1;
        // Detections are counted up to the newest one this alert named, not
        // to the tick's time: a match stored while the tick read the others
        // was detected later than them, and the next alert counts it.
        state.last_sent_at = match (decision.on, decision.latest) {
            (AlertOn::Detected, Some(latest)) => Some(latest),
            _ => Some(now),
        };
        state.claimed_by = None;
        state.claimed_until = None;
        state.last_outcome = Some(outcome);
        if !self.reports.swap_alert_state(expected, &state).await? {
            warn!(alert = %id, "alert state changed while this scheduler held its claim");
        }
        Ok(())
    }

    /// Sends an alert e-mail, retrying transient failures; returns the outcome.
    async fn send_email(
        &self,
        payload: &crate::WebhookPayload,
        to: &[String],
    ) -> anyhow::Result<String> {
        let mail = self
            .mail
            .as_ref()
            .context("an e-mail alert without a mail server")?;
        let body = serde_json::to_vec(payload)?;
        let delivery_id = crate::webhook::delivery_id(&body);
        let context = self.alert_context(payload).await?;
        let email = build_alert_email(payload, &context, to, &delivery_id);
        let policy = RetryPolicy::default();
        let mut attempts = Vec::new();
        let mut outcome = String::from("gave up");
        for attempt in 1..=policy.max_attempts {
            match mail.send(&email).await {
                Ok(()) => {
                    attempts.push(serde_json::json!({ "attempt": attempt, "at": Utc::now() }));
                    outcome = "delivered".into();
                    break;
                }
                Err(error) => {
                    let retry =
                        error.kind() == ErrorKind::Transient && attempt < policy.max_attempts;
                    attempts.push(serde_json::json!({
                        "attempt": attempt, "at": Utc::now(), "error": error.to_string()
                    }));
                    if !retry {
                        outcome = format!("failed: {error}");
                        break;
                    }
                    self.transport.sleep(policy.backoff(attempt)).await;
                }
            }
        }
        self.append_delivery(&serde_json::json!({
            "delivery_id": delivery_id,
            "email_to": to,
            "subject": email.subject,
            "attempts": attempts,
            "outcome": outcome,
        }))?;
        Ok(outcome)
    }

    /// Returns what an alert e-mail names: the publisher's name and language,
    /// the titles of the works and chapters of `payload`, the console's
    /// address. A work or chapter deleted since shows its id.
    async fn alert_context(&self, payload: &crate::WebhookPayload) -> anyhow::Result<AlertContext> {
        let mut context = AlertContext::bare(payload);
        context.console_url = self.console_url.clone();
        match self.publishers.get_publisher(&payload.publisher_id).await {
            Ok(publisher) => {
                context.publisher_name = publisher.name;
                context.language = publisher.profile.language.unwrap_or(Language::En);
            }
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => return Err(error.into()),
        }
        let titles = crate::Titles::load(
            self.works.as_ref(),
            &payload.publisher_id,
            payload
                .matches
                .iter()
                .map(|found| (&found.work_id, &found.chapter_id)),
        )
        .await?;
        context.work_titles = titles.works;
        context.chapter_titles = titles.chapters;
        Ok(context)
    }

    /// Appends one delivery record to this process's log.
    fn append_delivery(&self, record: &serde_json::Value) -> anyhow::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(&self.state_dir)?;
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.state_dir.join("deliveries.jsonl"))?
            .write_all(&line)?;
        Ok(())
    }

    /// The matches an alert of `on` may count: the confirmed ones, or those
    /// detected (new or confirmed) and seen since the last alert.
    async fn counted_matches(
        &self,
        publisher_id: &PublisherId,
        on: AlertOn,
        last: Option<Timestamp>,
    ) -> anyhow::Result<Vec<Match>> {
        let filter = match on {
            AlertOn::Confirmed => MatchFilter {
                statuses: vec![MatchStatus::Confirmed],
                ..MatchFilter::of_publisher(publisher_id.clone())
            },
            AlertOn::Detected => MatchFilter {
                statuses: vec![MatchStatus::New, MatchStatus::Confirmed],
                seen_since: last,
                ..MatchFilter::of_publisher(publisher_id.clone())
            },
        };
        let filter = &filter;
        Ok(collect_all(200, |request| async move {
            self.matches.list_matches(filter, &request).await
        })
        .await?)
    }
}

#[cfg(test)]
mod tests {
    /// An empty in-memory index: the scheduler never reads it.
    fn test_index() -> Arc<dyn copyhound_core::ports::FingerprintIndex> {
        Arc::new(copyhound_index::MemoryFingerprintIndex::new(3).unwrap())
    }

    use super::*;

    #[derive(Debug)]
    struct NoTransport;

    #[async_trait::async_trait]
    impl WebhookTransport for NoTransport {
        async fn post(
            &self,
            _: &str,
            _: &[(String, String)],
            _: &[u8],
        ) -> copyhound_core::Result<u16> {
            Ok(200)
        }
        async fn sleep(&self, _: Duration) {}
    }

    #[tokio::test]
    async fn a_bad_cron_is_a_clear_error_and_nothing_configured_still_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
        let queue: Arc<dyn TaskQueue> = Arc::new(
            copyhound_queue::LocalTaskQueue::open(&dir.path().join("queue"), &Default::default())
                .await
                .unwrap(),
        );
        let build = |config: &Config| {
            ReportScheduler::new(
                config,
                &stores.ports(test_index(), queue.clone()),
                Arc::new(NoTransport),
                None,
            )
        };
        // Nothing configured: it still runs, for what publishers set up.
        assert!(build(&config).is_ok());
        config.reports.schedules = vec![copyhound_core::config::ReportSchedule {
            publisher: "P01".into(),
            cron: "every monday".into(),
            format: copyhound_core::model::ReportFormat::Html,
        }];
        let error = build(&config).unwrap_err();
        assert!(format!("{error:#}").contains("every monday"), "{error:#}");
    }

    /// Records every e-mail instead of sending it.
    #[derive(Debug, Default)]
    struct Outbox(std::sync::Mutex<Vec<crate::AlertEmail>>);

    #[async_trait::async_trait]
    impl MailTransport for Outbox {
        async fn send(&self, email: &crate::AlertEmail) -> copyhound_core::Result<()> {
            self.0.lock().expect("not poisoned").push(email.clone());
            Ok(())
        }
    }

    /// A publisher that reads Chinese gets its alert in Chinese, naming
    /// itself, the works and the chapters by title, each match linked to
    /// the console at `server.public_url`.
    #[tokio::test]
    async fn alert_e_mails_name_titles_link_the_console_in_the_publishers_language() {
        use copyhound_core::model::{Chapter, Publisher, PublisherKind, PublisherProfile};
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        config.server.public_url = Some("https://copyhound.example".into());
        let stores = copyhound_store::Stores::local(dir.path().join("store")).unwrap();
        let queue: Arc<dyn TaskQueue> = Arc::new(
            copyhound_queue::LocalTaskQueue::open(&dir.path().join("queue"), &Default::default())
                .await
                .unwrap(),
        );
        let input = crate::testsuite::sample_input();
        stores
            .publishers
            .put_publisher(&Publisher {
                id: input.scope.publisher_id.clone(),
                name: "示例出版社".into(),
                kind: PublisherKind::Books,
                created_at: Utc::now(),
                policy: Default::default(),
                alerts: copyhound_core::model::AlertSettings {
                    email_to: vec!["legal@demo.example".into()],
                    threshold_new_confirmed: 1,
                    alert_on: Default::default(),
                },
                report_schedules: Vec::new(),
                profile: PublisherProfile {
                    language: Some(Language::Zh),
                    ..PublisherProfile::default()
                },
            })
            .await
            .unwrap();
        for work in &input.works {
            stores.works.put_work(work).await.unwrap();
        }
        let chapters: Vec<Chapter> = input
            .chapters
            .iter()
            .map(|info| {
                Chapter::new(
                    info.work_id.clone(),
                    info.chapter_id.clone(),
                    info.index,
                    info.title.clone(),
                    "正文".into(),
                )
            })
            .collect();
        stores.works.put_chapters(&chapters).await.unwrap();
        let confirmed: Vec<&Match> = input
            .matches
            .iter()
            .filter(|found| found.status == MatchStatus::Confirmed)
            .collect();
        for found in &confirmed {
            stores.matches.upsert_match(found).await.unwrap();
        }
        let outbox = Arc::new(Outbox::default());
        let scheduler = ReportScheduler::new(
            &config,
            &stores.ports(test_index(), queue),
            Arc::new(NoTransport),
            Some(outbox.clone()),
        )
        .unwrap();
        scheduler.tick(Utc::now()).await.unwrap();
        let sent = outbox.0.lock().unwrap().clone();
        assert_eq!(sent.len(), 1);
        let email = &sent[0];
        assert_eq!(email.subject, "[CopyHound] 示例出版社：新确认 2 处侵权");
        for found in &confirmed {
            let work = input.works.iter().find(|w| w.id == found.work_id).unwrap();
            let chapter = input
                .chapters
                .iter()
                .find(|c| c.work_id == found.work_id && c.chapter_id == found.chapter_id)
                .unwrap();
            assert!(
                email
                    .text
                    .contains(&format!("《{}》{}", work.title, chapter.title)),
                "{}",
                email.text
            );
            assert!(
                email.text.contains(&format!(
                    "https://copyhound.example/ui/matches/{}",
                    found.id
                )),
                "{}",
                email.text
            );
        }
        assert!(!email.text.contains(input.scope.publisher_id.as_str()));
    }
}
