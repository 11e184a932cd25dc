//! Configuration: one TOML file (`copyhound.toml`), then `COPYHOUND_*` environment
//! variables, then command-line overrides, later sources winning. Every source
//! uses the same names: the key `index.max_distance` is the variable
//! `COPYHOUND_INDEX_MAX_DISTANCE` and the flag `--option index.max_distance=3`.
//! Unknown keys are errors that name the key and where it came from, because a
//! misspelt `redis_url` that silently falls back to the embedded default is the
//! worst kind of misconfiguration. The environment is passed in as a map and
//! never mutated, which keeps loading testable.

mod load;
mod model;

pub use load::{ConfigLoader, ConfigSource, DEFAULT_CONFIG_FILE, ENV_PREFIX};
pub use model::{
    AlertHook, Backend, Config, CrawlerConfig, EvidenceConfig, IndexConfig, LogConfig, LogFormat,
    MatcherConfig, QueueConfig, RdapConfig, ReportSchedule, ReportsConfig, ServerConfig,
    SmtpConfig, SmtpSecurity, StoreConfig, WorkerConfig, mask_url,
};
