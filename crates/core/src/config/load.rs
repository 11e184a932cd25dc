use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::Config;
use crate::error::{Error, ErrorKind, Result};

/// The file read when no `--config` is given, if present in the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "copyhound.toml";
/// Prefix of configuration environment variables.
pub const ENV_PREFIX: &str = "COPYHOUND_";

/// Variables with the prefix that are not configuration keys.
const RESERVED_ENV: &[&str] = &["COPYHOUND_CONFIG"];
const RESERVED_ENV_PREFIXES: &[&str] = &["COPYHOUND_TEST_"];

const SECTIONS: &[&str] = &[
    "store", "index", "queue", "crawler", "matcher", "worker", "server", "log", "reports", "smtp",
    "rdap", "evidence",
];

/// Where the effective value of a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// The built-in default.
    Default,
    /// The configuration file.
    File(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag(String),
}

/// Builds a [`Config`] from a file, the environment and flags (in that order of precedence).
#[derive(Debug, Default)]
pub struct ConfigLoader {
    file: Option<PathBuf>,
    file_is_explicit: bool,
    env: BTreeMap<String, String>,
    overrides: Vec<(String, String)>,
}

impl ConfigLoader {
    /// Returns a loader that reads `file` if given, else `./copyhound.toml` if present.
    pub fn new(file: Option<PathBuf>) -> Self {
        let file_is_explicit = file.is_some();
        Self {
            file: file.or_else(|| Some(PathBuf::from(DEFAULT_CONFIG_FILE))),
            file_is_explicit,
            ..Self::default()
        }
    }

    /// Sets the environment (use `std::env::vars().collect()` in binaries).
    pub fn env(mut self, env: BTreeMap<String, String>) -> Self {
        self.env = env;
        self
    }

    /// Adds a flag override of a dotted key (`index.max_distance`, `data_dir`).
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.overrides.push((key.into(), value.into()));
        self
    }

    /// Loads, merges and validates; returns the config and the file actually read.
    pub fn load(&self) -> Result<(Config, Option<PathBuf>)> {
        let (mut table, file_used) = self.read_file()?;
        for (name, value) in &self.env {
            if !name.starts_with(ENV_PREFIX) || is_reserved(name) {
                continue;
            }
            let key = env_key(name).ok_or_else(|| {
                config_error(format!(
                    "unknown environment variable {name}: no configuration key `{}`",
                    name[ENV_PREFIX.len()..].to_lowercase()
                ))
            })?;
            insert_dotted(&mut table, &key, value, &ConfigSource::Env(name.clone()))?;
        }
        for (key, value) in &self.overrides {
            insert_dotted(&mut table, key, value, &ConfigSource::Flag(key.clone()))?;
        }
        let config: Config =
            serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|error| {
                config_error(format!(
                    "invalid value for `{}`: {}",
                    error.path(),
                    error.inner().message()
                ))
            })?;
        config.validate()?;
        Ok((config, file_used))
    }

    fn read_file(&self) -> Result<(toml::Table, Option<PathBuf>)> {
        let Some(path) = &self.file else {
            return Ok((toml::Table::new(), None));
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error)
                if error.kind() == std::io::ErrorKind::NotFound && !self.file_is_explicit =>
            {
                return Ok((toml::Table::new(), None));
            }
            Err(error) => {
                return Err(Error::with_source(
                    ErrorKind::Config,
                    format!("cannot read config file {}", path.display()),
                    error,
                ));
            }
        };
        let text = interpolate(&text, &self.env).map_err(|message| file_error(path, &message))?;
        // Parse into the typed config first: its errors name unknown keys with a line.
        toml::from_str::<Config>(&text)
            .map_err(|error| file_error(path, error.to_string().trim_end()))?;
        let table = toml::from_str::<toml::Table>(&text)
            .map_err(|error| file_error(path, error.message()))?;
        Ok((table, Some(path.clone())))
    }
}

fn is_reserved(name: &str) -> bool {
    RESERVED_ENV.contains(&name)
        || RESERVED_ENV_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// Maps `COPYHOUND_INDEX_MAX_DISTANCE` to `index.max_distance`.
fn env_key(name: &str) -> Option<String> {
    let rest = name.strip_prefix(ENV_PREFIX)?.to_lowercase();
    for section in SECTIONS {
        if let Some(key) = rest.strip_prefix(&format!("{section}_")) {
            return Some(format!("{section}.{key}"));
        }
    }
    matches!(rest.as_str(), "data_dir" | "version").then_some(rest)
}

fn insert_dotted(
    table: &mut toml::Table,
    key: &str,
    raw: &str,
    source: &ConfigSource,
) -> Result<()> {
    let describe = || match source {
        ConfigSource::Env(name) => format!("environment variable {name}"),
        ConfigSource::Flag(name) => format!("flag --set {name}"),
        ConfigSource::File(path) => format!("file {}", path.display()),
        ConfigSource::Default => "default".to_string(),
    };
    let parts: Vec<&str> = key.split('.').collect();
    let known = match parts.as_slice() {
        [top] => matches!(*top, "data_dir" | "version"),
        [section, field] => SECTIONS.contains(section) && !field.is_empty(),
        _ => false,
    };
    if !known {
        return Err(config_error(format!(
            "unknown configuration key `{key}` from {}",
            describe()
        )));
    }
    let value = parse_scalar(raw);
    match parts.as_slice() {
        [top] => {
            table.insert((*top).to_string(), value);
        }
        [section, field] => {
            let entry = table
                .entry((*section).to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(section_table) = entry.as_table_mut() else {
                return Err(config_error(format!("`{section}` must be a table")));
            };
            section_table.insert((*field).to_string(), value);
        }
        _ => unreachable!("checked above"),
    }
    Ok(())
}

/// Reads `3`, `true`, `0.5` as TOML scalars and anything else as a string.
fn parse_scalar(raw: &str) -> toml::Value {
    let document = format!("value = {raw}");
    match toml::from_str::<toml::Table>(&document)
        .ok()
        .and_then(|mut table| table.remove("value"))
    {
        Some(
            value @ (toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_)),
        ) => value,
        _ => toml::Value::String(raw.to_string()),
    }
}

/// Replaces `${VAR}` and `${VAR:-default}` with values from `env`.
fn interpolate(text: &str, env: &BTreeMap<String, String>) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| "unterminated `${` in config file".to_string())?;
        let expression = &after[..end];
        let (name, default) = match expression.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (expression, None),
        };
        match (env.get(name), default) {
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "environment variable {name} is not set (use ${{{name}:-default}})"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn config_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Config, message)
}

fn file_error(path: &Path, message: &str) -> Error {
    config_error(format!("in config file {}: {message}", path.display()))
}

#[cfg(test)]
#[path = "load_test.rs"]
mod tests;
