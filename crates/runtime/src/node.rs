use std::sync::Arc;

use anyhow::Context;
use copyhound_core::config::Config;
use copyhound_core::ports::RecipientLookup;
use copyhound_crawler::site::SitePolicy;
use copyhound_crawler::{CrawlHandler, CrawlProgress, NoProgress, RdapRecipientLookup, Scheduler};
use copyhound_fingerprint::{FingerprintConfig, Fingerprinter};
use copyhound_matcher::{MatcherHandler, MatcherPorts};
use copyhound_report::{ReportHandler, ReportScheduler};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::info;

use crate::backends::Backends;
use crate::dispatch::Dispatcher;
use crate::mail::SmtpMailTransport;
use crate::webhook::HttpWebhookTransport;
use crate::worker::{Worker, WorkerSettings};

/// Returns the fingerprint engine (its tables load once per call: build it
/// once per process and share it).
pub fn fingerprinter() -> anyhow::Result<Arc<Fingerprinter>> {
    Ok(Arc::new(
        Fingerprinter::new(FingerprintConfig::default())
            .context("cannot load the fingerprint tables")?,
    ))
}

/// A process's view of the system: the configuration, its backends opened
/// once, and the parts assembled from them on demand.
#[derive(Debug, Clone)]
pub struct Node {
    config: Config,
    backends: Backends,
    /// The one recipient lookup of the process (its cache and pacing are
    /// shared by the API and the report stage), built on first use.
    recipients: std::sync::OnceLock<Option<Arc<dyn RecipientLookup>>>,
}

impl Node {
    /// Opens every backend the configuration names and re-enqueues what a killed
    /// process left without its task. Every process that runs workers or serves
    /// the API starts with this.
    pub async fn build(config: &Config) -> anyhow::Result<Self> {
        let node = Self::open(config).await?;
        node.backends.recover().await?;
        Ok(node)
    }

    /// Opens the backends only (commands that read or write data but run no
    /// task: imports, listings, index rebuilds).
    pub async fn open(config: &Config) -> anyhow::Result<Self> {
        Ok(Self {
            config: config.clone(),
            backends: Backends::open(config).await?,
            recipients: std::sync::OnceLock::new(),
        })
    }

    /// The configuration the node was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The backends.
    pub fn backends(&self) -> &Backends {
        &self.backends
    }

    /// Returns the dispatcher over every stage's handler; crawls report to
    /// `progress`.
    pub fn dispatcher(&self, progress: Arc<dyn CrawlProgress>) -> anyhow::Result<Dispatcher> {
        let stores = &self.backends.stores;
        let crawl = CrawlHandler::new(
            &self.config.crawler,
            stores.sites.clone(),
            stores.pages.clone(),
            self.backends.queue.clone(),
            progress,
        )
        .context("cannot build the crawler")?
        .with_watcher(copyhound_crawler::watch::Watcher::new(
            self.backends.ports(),
            self.config.crawler.clone(),
        ))
        .with_discovery(self.backends.ports());
        let report = ReportHandler::new(
            stores.publishers.clone(),
            stores.reports.clone(),
            stores.matches.clone(),
            stores.works.clone(),
            stores.sites.clone(),
            stores.pages.clone(),
        )
        .with_mail(self.mail()?, self.config.server.public_url.clone())
        .with_recipients(self.recipients()?);
        Ok(Dispatcher::new(crawl, self.matcher()?, report))
    }

    /// Returns the matcher stage's handler (fingerprinting, comparison, back-fill).
    pub fn matcher(&self) -> anyhow::Result<MatcherHandler> {
        Ok(MatcherHandler::new(MatcherPorts {
            ports: self.backends.ports(),
            fingerprinter: fingerprinter()?,
            config: self.config.matcher.clone(),
        }))
    }

    /// Returns a worker running every task kind with `concurrency` slots
    /// (default `worker.concurrency`).
    pub fn worker(
        &self,
        concurrency: Option<u32>,
        progress: Arc<dyn CrawlProgress>,
    ) -> anyhow::Result<Worker> {
        Ok(Worker::new(
            self.backends.queue.clone(),
            Arc::new(self.dispatcher(progress)?),
            WorkerSettings::from_config(&self.config, concurrency),
        ))
    }

    /// Starts a worker with `concurrency` slots in the background until `stop`.
    pub fn spawn_worker(
        &self,
        concurrency: u32,
        stop: watch::Receiver<bool>,
    ) -> anyhow::Result<JoinHandle<()>> {
        let worker = self.worker(Some(concurrency), Arc::new(NoProgress))?;
        info!(workers = concurrency, "in-process workers started");
        Ok(tokio::spawn(async move {
            let _ = worker.run(stop).await;
        }))
    }

    /// Starts the schedulers in the background until `stop`: site crawls when
    /// due, and the `[reports]` schedules and alerts when configured.
    pub fn spawn_schedulers(
        &self,
        stop: watch::Receiver<bool>,
    ) -> anyhow::Result<Vec<JoinHandle<()>>> {
        let mut started = Vec::new();
        let reports = self.report_scheduler()?;
        let reports_stop = stop.clone();
        started.push(tokio::spawn(async move { reports.run(reports_stop).await }));
        let crawls = Scheduler::new(
            self.backends.stores.sites.clone(),
            self.backends.queue.clone(),
        )
        .with_policy(SitePolicy::for_crawler(&self.config.crawler));
        let mut stop = stop;
        started.push(tokio::spawn(async move {
            crawls
                .run(async move {
                    let _ = stop.wait_for(|stopped| *stopped).await;
                })
                .await;
        }));
        Ok(started)
    }

    /// Returns the report scheduler: `[reports]`, and what publishers set up.
    pub fn report_scheduler(&self) -> anyhow::Result<ReportScheduler> {
        ReportScheduler::new(
            &self.config,
            &self.backends.ports(),
            Arc::new(HttpWebhookTransport::new()?),
            self.mail()?,
        )
    }

    /// Returns the configured mail server (`[smtp]`), if any: alerts,
    /// scheduled reports and the console's test e-mail go through it.
    pub fn mail(&self) -> anyhow::Result<Option<Arc<dyn copyhound_report::MailTransport>>> {
        Ok(SmtpMailTransport::from_config(&self.config.smtp)?
            .map(|mail| Arc::new(mail) as Arc<dyn copyhound_report::MailTransport>))
    }

    /// Returns who-to-notify lookups by RDAP (`[rdap]`), none when
    /// `rdap.bootstrap` is empty; one per process, so its cache and pacing
    /// are shared.
    pub fn recipients(&self) -> anyhow::Result<Option<Arc<dyn RecipientLookup>>> {
        if let Some(built) = self.recipients.get() {
            return Ok(built.clone());
        }
        let built = RdapRecipientLookup::from_config(&self.config)
            .context("cannot build the rdap client")?
            .map(|lookup| Arc::new(lookup) as Arc<dyn RecipientLookup>);
        Ok(self.recipients.get_or_init(|| built).clone())
    }

    /// Writes what the embedded index holds in memory to its snapshot.
    pub async fn persist(&self) -> anyhow::Result<()> {
        self.backends.persist().await
    }
}
