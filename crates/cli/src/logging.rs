//! Logs go to stderr so stdout stays machine-readable (JSON lines of `fingerprint`,
//! tables of `bench`). Precedence: `RUST_LOG` over `-v` over `log.filter`, and
//! `--log-format` over `log.format`.

use copyhound_core::config::{LogConfig, LogFormat};
use tracing_subscriber::EnvFilter;

use crate::cli::LogFormatArg;

/// Installs the global subscriber.
pub fn init(
    config: &LogConfig,
    format_flag: Option<LogFormatArg>,
    verbose: u8,
) -> anyhow::Result<()> {
    let directive = match verbose {
        0 => config.filter.as_str(),
        1 => "debug",
        _ => "trace",
    };
    let filter = match EnvFilter::try_from_default_env() {
        Ok(filter) => filter,
        Err(_) => EnvFilter::try_new(directive).map_err(|error| {
            anyhow::anyhow!("log.filter = {directive:?} is not a valid filter: {error}")
        })?,
    };
    let json = match format_flag {
        Some(flag) => flag == LogFormatArg::Json,
        None => config.format == LogFormat::Json,
    };
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let result = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    result.map_err(|error| anyhow::anyhow!("{error}"))
}
