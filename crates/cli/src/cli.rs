use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
pub use copyhound_bench::{
    BenchCompareArgs, BenchExtractArgs, BenchLatencyArgs, BenchPipelineArgs, EvalArgs,
};
use copyhound_core::model::Site;

/// CopyHound finds web pages that copy registered novels and news articles, even
/// when the copy was mutated, and turns them into evidence a publisher can act on.
///
/// With no services configured every command runs on the embedded default (files
/// under ./copyhound-data). Point `store.url` at MongoDB and `index.url` /
/// `queue.url` at Redis (in copyhound.toml, COPYHOUND_* variables or --option) to
/// run on the production engines.
#[derive(Debug, Parser)]
#[command(
    name = "copyhound",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes, listed apart from the command's own.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Configuration file [default: ./copyhound.toml if present].
    #[arg(long, short = 'c', global = true, env = "COPYHOUND_CONFIG")]
    pub config: Option<PathBuf>,
    /// Directory of the embedded backends (overrides `data_dir`).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Override any configuration key, e.g. `--option index.max_distance=3` (repeatable).
    #[arg(long = "option", short = 'o', global = true, value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Log format on stderr (overrides `log.format`); RUST_LOG sets the filter.
    #[arg(long, global = true, value_enum)]
    pub log_format: Option<LogFormatArg>,
    /// More log output (-v: debug, -vv: trace).
    #[arg(long, short = 'v', global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate and print the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// The main job end to end on the embedded default: register works, crawl
    /// sites, fingerprint, compare, write an HTML report.
    Demo(DemoArgs),
    /// Write an infringement report (HTML, PDF, CSV or JSON), or the evidence
    /// package of its matches (`--format warc`: the captured responses as a
    /// WARC file, with a manifest of digests and capture times beside it).
    Report(ReportArgs),
    /// Print the fingerprints of text or HTML files, one JSON line per file.
    ///
    /// Files may be UTF-8, GBK, GB18030 or Big5 text, or HTML pages (the main text
    /// is extracted as the crawler would).
    Fingerprint(FingerprintArgs),
    /// Compare a registered text with a suspect page: fingerprint distances, both
    /// coverages and the copied spans side by side.
    Compare(CompareArgs),
    /// Register works.
    #[command(subcommand)]
    Works(WorksCommand),
    /// Run the HTTP API and admin UI (with in-process workers on the embedded default).
    Serve(ServeArgs),
    /// Enqueue crawls when their site's cron schedule is due.
    Scheduler,
    /// Check that a server answers (`--url`) or that the configured MongoDB
    /// and Redis answer; exits 0 when healthy, 1 otherwise (container healthchecks).
    Health(HealthArgs),
    /// Manage watched sites.
    #[command(subcommand)]
    Sites(SitesCommand),
    /// Manage publishers (tenants): list, add, show.
    #[command(subcommand)]
    Publishers(PublishersCommand),
    /// Manage a publisher's API keys: list (never their secrets), create (the
    /// key is printed once), revoke. A key logs in to the console and the API.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Crawl a site now, with a progress bar and a summary.
    ///
    /// Exit codes: 0 succeeded; 3 failed (no page fetched: robots.txt unreachable
    /// or disallowing, address refused, connection errors) or cancelled; 4 partial
    /// (pages fetched, some failed); 1 the crawl could not run (bad configuration,
    /// unknown site, store error). The reasons are printed and kept in the run's
    /// `recent_errors`.
    Crawl(CrawlArgs),
    /// List, filter and export matches.
    #[command(subcommand)]
    Matches(MatchesCommand),
    /// Evidence bundles that verify themselves: make one for a match or a
    /// case (a filtered set of a publisher's matches), or check one offline.
    #[command(subcommand)]
    Evidence(EvidenceCommand),
    /// Run pipeline workers: fingerprinting, comparison, back-fill, crawls, reports.
    ///
    /// Stops intake on SIGTERM or Ctrl-C and lets in-flight tasks finish within
    /// `worker.shutdown_deadline_ms`; unfinished ones are released to other workers.
    Worker(WorkerArgs),
    /// Inspect and apply store schema migrations.
    #[command(subcommand)]
    Migrate(MigrateCommand),
    /// Maintain the segment index.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Inspect the task queue and its dead letters.
    #[command(subcommand)]
    Tasks(TasksCommand),
    /// Measure detection quality on a labeled benchmark folder, through the real pipeline.
    ///
    /// Imports DIR/works, serves each site of DIR/pages on its own loopback port,
    /// crawls them with the real crawler, runs the workers until the queue is
    /// empty, writes one JSON line per (page, work, chapter) match and, when
    /// DIR/truth.json exists, prints the benchmark scorer's metrics.
    Eval(EvalArgs),
    /// Benchmarks, each measured against a baseline in the same run.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
pub enum WorksCommand {
    /// Import works from a folder: works/<id>/meta.json plus chapter files.
    Import(ImportArgs),
    /// List a publisher's works.
    List(WorksListArgs),
}

/// Arguments of `copyhound works list`.
#[derive(Debug, Args)]
pub struct WorksListArgs {
    /// The publisher.
    #[arg(long)]
    pub publisher: String,
}

#[derive(Debug, Subcommand)]
pub enum PublishersCommand {
    /// List every publisher.
    List,
    /// Create a publisher, as `POST /api/v1/admin/publishers` does.
    Add(PublisherAddArgs),
    /// Show a publisher, its works, sites and keys.
    Show {
        /// Publisher id.
        publisher: String,
    },
}

/// Arguments of `copyhound publishers add`.
#[derive(Debug, Args)]
pub struct PublisherAddArgs {
    /// Publisher id, e.g. `N01` or `pub_acme`.
    pub id: String,
    /// Display name.
    #[arg(long)]
    pub name: String,
    /// What it publishes.
    #[arg(long, value_enum, default_value_t = PublisherKindArg::Books)]
    pub kind: PublisherKindArg,
}

/// `--kind` of `publishers add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PublisherKindArg {
    /// A novel platform or book publisher.
    Books,
    /// A news agency.
    News,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// List a publisher's keys, oldest first, without their secrets.
    List {
        /// Publisher id.
        publisher: String,
    },
    /// Create a key for a publisher, as `POST
    /// /api/v1/admin/publishers/{id}/keys` does; the key is printed once.
    Create(KeyCreateArgs),
    /// Revoke a key: it authenticates nobody from now on (idempotent).
    Revoke {
        /// Key id (`key_...`), as `keys list` shows it.
        key: String,
    },
}

/// Arguments of `copyhound keys create`.
#[derive(Debug, Args)]
pub struct KeyCreateArgs {
    /// Publisher id.
    pub publisher: String,
    /// `publisher` acts within the publisher; `admin` also manages its keys,
    /// alerts and report schedules in the console.
    #[arg(long, value_enum, default_value_t = RoleArg::Publisher)]
    pub role: RoleArg,
    /// Who holds the key (`Li Wei`, `legal team`); reviews record it.
    #[arg(long)]
    pub name: Option<String>,
}

/// `--role` of `keys create`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Acts within its publisher.
    Publisher,
    /// Also administers its publisher.
    Admin,
}

/// Arguments of `copyhound health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// A server's health URL, e.g. http://127.0.0.1:8080/health.
    #[arg(long)]
    pub url: Option<String>,
}

/// Arguments of `copyhound serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// In-process workers [default: worker.concurrency on the embedded default, 0 on Redis].
    #[arg(long)]
    pub workers: Option<u32>,
    /// Also run the crawl scheduler (always on with the embedded default).
    #[arg(long)]
    pub scheduler: bool,
}

#[derive(Debug, Subcommand)]
pub enum SitesCommand {
    /// Watch a new site.
    Add(SiteAddArgs),
    /// List watched sites.
    List,
    /// Show a site and its latest crawl runs.
    Show {
        /// Site id.
        site: String,
    },
    /// Stop crawling a site.
    Disable {
        /// Site id.
        site: String,
    },
    /// Who to notify about a site: its domain's registrar, the network hosting
    /// its address and the CDN fronting it, each with its abuse contact, by
    /// RDAP (`[rdap]`: `rdap.bootstrap` must be set).
    Recipients {
        /// Site id.
        site: String,
        /// Print the recipients as JSON (the API's `Recipients`).
        #[arg(long)]
        json: bool,
    },
    /// Sites nobody listed: what a publisher's watched sites link to or
    /// announce, and what its book-source files list, with their checks.
    Suggestions {
        /// The publisher.
        #[arg(long)]
        publisher: String,
        /// Only suggestions in this state.
        #[arg(long, value_parser = ["pending", "verified", "unreachable", "accepted", "dismissed"])]
        status: Option<String>,
    },
    /// Accept a suggested site: it becomes a watched site (a daily crawl) and
    /// its first crawl is queued.
    Accept {
        /// The publisher.
        #[arg(long)]
        publisher: String,
        /// Suggestion id (`sg_…`).
        suggestion: String,
    },
    /// Dismiss a suggested site: it is not raised again.
    Dismiss {
        /// The publisher.
        #[arg(long)]
        publisher: String,
        /// Suggestion id (`sg_…`).
        suggestion: String,
    },
    /// Import a reader app's book-source file (JSON): every site it lists
    /// becomes a suggestion, with its search URL template.
    ImportSources {
        /// The publisher.
        #[arg(long)]
        publisher: String,
        /// The file.
        file: std::path::PathBuf,
    },
}

/// Arguments of `copyhound sites add`.
#[derive(Debug, Args)]
pub struct SiteAddArgs {
    /// The publisher watching it.
    #[arg(long)]
    pub publisher: String,
    /// Display name.
    #[arg(long)]
    pub name: String,
    /// Start URLs (repeatable).
    #[arg(long = "seed", required = true)]
    pub seeds: Vec<String>,
    /// Site id [default: generated].
    #[arg(long)]
    pub id: Option<String>,
    /// URL patterns to follow: globs, or `re:<regex>` (repeatable) [default: the seeds' hosts].
    #[arg(long)]
    pub allow: Vec<String>,
    /// URL patterns never followed (repeatable).
    #[arg(long)]
    pub deny: Vec<String>,
    /// Cron schedule (UTC), e.g. "0 3 * * *".
    #[arg(long)]
    pub schedule: Option<String>,
    /// Link depth from a seed.
    #[arg(long, default_value_t = Site::DEFAULT_MAX_DEPTH)]
    pub max_depth: u32,
    /// Fetch budget per run.
    #[arg(long, default_value_t = Site::DEFAULT_MAX_PAGES_PER_RUN)]
    pub max_pages: u32,
    /// Requests per second per host.
    #[arg(long, default_value_t = Site::DEFAULT_RATE_LIMIT_PER_SECOND)]
    pub rate_limit: f64,
    /// Requests in flight per host.
    #[arg(long, default_value_t = Site::DEFAULT_CONCURRENCY)]
    pub concurrency: u32,
    /// Force a charset when the site lies about it.
    #[arg(long)]
    pub charset: Option<String>,
    /// How pages are read: `auto` renders a page with headless Chromium
    /// (`crawler.chromium`) when its text arrives by script; `never` reads
    /// every page as served; `chromium` renders every page.
    #[arg(long, value_enum, default_value_t = RenderArg::Auto)]
    pub render: RenderArg,
    /// Same as `--render chromium`.
    #[arg(long, hide = true)]
    pub render_chromium: bool,
}

/// `--render` of `sites add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RenderArg {
    /// Render when the text arrives by script.
    Auto,
    /// Never render.
    Never,
    /// Render every page.
    Chromium,
}

/// Arguments of `copyhound crawl`.
#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// Site id.
    pub site: String,
    /// Do not run the comparison afterwards (embedded default only).
    #[arg(long)]
    pub no_compare: bool,
}

/// Filters of match listings.
#[derive(Debug, Args)]
pub struct MatchFilterArgs {
    /// The publisher.
    #[arg(long)]
    pub publisher: String,
    /// Only this work.
    #[arg(long)]
    pub work: Option<String>,
    /// Only this site.
    #[arg(long)]
    pub site: Option<String>,
    /// Only this status (new, confirmed, dismissed, licensed, taken_down).
    #[arg(long)]
    pub status: Option<String>,
    /// Only scores at least this.
    #[arg(long)]
    pub min_score: Option<f32>,
    /// Order: newest (last seen) or score (highest first).
    #[arg(long, value_parser = ["newest", "score"])]
    pub sort: Option<String>,
}

impl MatchFilterArgs {
    /// Returns the store filter.
    pub fn filter(&self) -> anyhow::Result<copyhound_core::ports::MatchFilter> {
        crate::commands::sites::match_filter(
            &self.publisher,
            self.work.as_deref(),
            self.site.as_deref(),
            self.status.as_deref(),
            self.min_score,
            self.sort.as_deref(),
        )
    }
}

#[derive(Debug, Subcommand)]
pub enum MatchesCommand {
    /// List matches.
    List(MatchFilterArgs),
    /// Export matches as CSV or JSON lines.
    Export {
        #[command(flatten)]
        filter: MatchFilterArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
        format: ExportFormat,
    },
}

/// `copyhound evidence`.
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Write the bundle of matches: the WARC, a capture log, screenshots, a
    /// SHA-256 manifest and an RFC 3161 time-stamp over it from
    /// `evidence.tsa_url` (needs the stores and the TSA).
    Bundle(EvidenceBundleArgs),
    /// Check a bundle offline: every file against the manifest, the manifest
    /// against the time-stamp, the time-stamp's signature and chain. Exit 0
    /// when it verifies, 1 with what failed otherwise.
    Verify(EvidenceVerifyArgs),
}

/// Arguments of `copyhound evidence bundle`.
#[derive(Debug, Args)]
pub struct EvidenceBundleArgs {
    /// These matches (repeat the flag); without it, the case the filters
    /// select (every match of the publisher they let through).
    #[arg(long = "match")]
    pub match_ids: Vec<String>,
    /// The publisher and the case's filters.
    #[command(flatten)]
    pub filter: MatchFilterArgs,
    /// The bundle file to write (a tar archive).
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `copyhound evidence verify`.
#[derive(Debug, Args)]
pub struct EvidenceVerifyArgs {
    /// The bundle file.
    pub bundle: PathBuf,
    /// The SHA-256 (hex) the TSA's root certificate must have: without it the
    /// root the bundle carries is reported for you to compare.
    #[arg(long)]
    pub trust: Option<String>,
}

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// CSV with a header row.
    Csv,
    /// One JSON object per line.
    Json,
}

/// Arguments of `copyhound works import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The folder holding `works/` (or the `works` folder itself).
    pub dir: PathBuf,
}

/// Arguments of `copyhound worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Tasks run at once [default: worker.concurrency].
    #[arg(long)]
    pub concurrency: Option<u32>,
    /// Exit when the queue is empty instead of waiting for more work.
    #[arg(long)]
    pub until_idle: bool,
}

#[derive(Debug, Subcommand)]
pub enum MigrateCommand {
    /// List migrations and whether each is applied.
    Status,
    /// Apply pending migrations (safe to run twice and concurrently).
    Up,
}

#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Rebuild the index from the fingerprint store (recovers a lost or flushed Redis).
    Rebuild,
}

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Queue depth, in-flight, retrying and dead-letter counts.
    Stats,
    /// List dead-lettered tasks with their last error.
    Dead {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Re-queue dead-lettered tasks.
    Retry {
        /// At most this many.
        #[arg(long, default_value_t = 1000)]
        limit: usize,
    },
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The near-duplicate indexes (memory and, if configured, Redis) against a linear scan.
    Index(BenchIndexArgs),
    /// Comparison throughput as the registered corpus grows (seeded synthetic chapters).
    Compare(BenchCompareArgs),
    /// Page extraction through the page's CSS against the markup alone, on saved pages.
    Extract(BenchExtractArgs),
    /// End-to-end pages/s with 1, 2, 4 worker processes and 1-2 crawler
    /// processes on the configured MongoDB and Redis, with CPU per role.
    Pipeline(BenchPipelineArgs),
    /// Time from a copy's appearance on a piracy site to the alert: the
    /// product (serve, workers, scheduler) against a farm of loopback sites,
    /// with politeness per host and fetches and CPU per alert.
    Latency(BenchLatencyArgs),
}

/// Arguments of `copyhound bench index`.
#[derive(Debug, Args)]
pub struct BenchIndexArgs {
    /// Fingerprints indexed.
    #[arg(long, default_value_t = 1_000_000)]
    pub n: usize,
    /// Queries run (half planted near-duplicates).
    #[arg(long, default_value_t = 100_000)]
    pub queries: usize,
    /// Hamming distance.
    #[arg(long, default_value_t = 3)]
    pub k: u32,
    /// RNG seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Also benchmark Redis at this URL [default: index.url if configured].
    #[arg(long)]
    pub redis_url: Option<String>,
}

/// Arguments of `copyhound fingerprint`.
#[derive(Debug, Args)]
pub struct FingerprintArgs {
    /// Text or HTML files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Arguments of `copyhound compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The registered text (chapter or article).
    pub registered: PathBuf,
    /// The suspect page (text or HTML).
    pub suspect: PathBuf,
    /// Print JSON instead of a report.
    #[arg(long)]
    pub json: bool,
    /// Spans shown side by side.
    #[arg(long, default_value_t = 10)]
    pub max_spans: usize,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate the configuration and print the effective values, secrets masked.
    ///
    /// Reads the file, then COPYHOUND_* variables, then --option flags (later wins).
    /// Unknown keys and bad values are errors that name the key and its source.
    Check,
}

/// Arguments of `copyhound demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Benchmark folder to run on [default: ../shared/devset if present, else the bundled sample].
    #[arg(long = "set", value_name = "DIR")]
    pub set: Option<PathBuf>,
}

/// Arguments of `copyhound report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Report on one work.
    #[arg(long)]
    pub work: Option<String>,
    /// Report on a publisher's works.
    #[arg(long)]
    pub publisher: Option<String>,
    /// Only this site.
    #[arg(long)]
    pub site: Option<String>,
    /// Only matches seen since this day (YYYY-MM-DD; last seen on or after it).
    #[arg(long)]
    pub since: Option<String>,
    /// Only matches seen before this day (YYYY-MM-DD; first seen before it):
    /// with `--since`, the matches seen during a period.
    #[arg(long)]
    pub until: Option<String>,
    /// Which review statuses are listed [default: confirmed for takedown
    /// notices, all for the other formats].
    #[arg(long, value_enum)]
    pub review: Option<ReviewArg>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormatArg::Html)]
    pub format: ReportFormatArg,
    /// Output file (with `--format warc`, the manifest is written beside it as
    /// `<out>.manifest.json`).
    #[arg(long)]
    pub out: PathBuf,
}

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormatArg {
    /// One self-contained HTML file with charts and side-by-side evidence.
    Html,
    /// PDF (rendered from the HTML by headless Chromium).
    Pdf,
    /// CSV, one row per match.
    Csv,
    /// JSON.
    Json,
    /// The evidence package: each matched page's captured response (status,
    /// header fields, body) as a WARC/1.1 file, SHA-256 digests checked by any
    /// WARC reader, and `<out>.manifest.json` with the digests, capture times
    /// and the matches each capture is evidence for.
    Warc,
    /// Takedown notices, one per infringing site, each in Chinese and
    /// English, signed with the publisher's profile (plain text).
    Takedown,
    /// The same notices as e-mail drafts: one message per site in an mbox file.
    TakedownEmail,
}

/// Review statuses a report lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReviewArg {
    /// Confirmed by a reviewer.
    Confirmed,
    /// Confirmed, and found but not reviewed yet.
    ConfirmedAndUnreviewed,
    /// Every status, dismissed and licensed included.
    All,
}
