//! One module per command; each takes the global options and its own arguments.

pub mod bench;
pub mod config;
pub mod demo;
pub mod evidence;
pub mod fingerprint;
pub mod health;
pub mod pipeline;
pub mod publishers;
pub mod report;
pub mod serve;
pub mod sites;

use anyhow::Context;
use copyhound_core::config::{Config, ConfigLoader};

use crate::cli::GlobalArgs;

/// The effective configuration and the file it was read from.
pub type Loaded = (Config, Option<std::path::PathBuf>);

/// Loads the configuration: file < COPYHOUND_* environment < flags.
pub fn load_config(global: &GlobalArgs) -> anyhow::Result<Loaded> {
    let mut loader = ConfigLoader::new(global.config.clone()).env(std::env::vars().collect());
    if let Some(dir) = &global.data_dir {
        loader = loader.set("data_dir", dir.display().to_string());
    }
    for pair in &global.overrides {
        let (key, value) = pair.split_once('=').with_context(|| {
            format!("--option {pair:?}: expected KEY=VALUE, e.g. --option index.max_distance=3")
        })?;
        loader = loader.set(key.trim(), value.trim());
    }
    Ok(loader.load()?)
}
