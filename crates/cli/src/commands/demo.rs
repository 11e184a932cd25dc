use std::process::ExitCode;

use copyhound_core::config::Config;

use crate::cli::DemoArgs;

pub async fn run(config: &Config, args: DemoArgs) -> anyhow::Result<ExitCode> {
    let _ = (config, args);
    anyhow::bail!("demo is not available yet")
}
