//! The browser's process, from launch to reaping. A browser is a tree of a
//! dozen processes running whatever scripts a hostile site serves, so it gets
//! nothing of the crawler it does not need.
//!
//! - Environment: cleared, then `PATH`, the locale and `HOME`, `TMPDIR` and
//!   the XDG dirs inside the throwaway profile; the crawler's keys and
//!   passwords (`COPYHOUND_*`) never reach it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use copyhound_core::Result;

use super::browser_error;

/// Prefix of every profile directory, under the system's temporary directory.
pub(crate) const PROFILE_PREFIX: &str = "copyhound-chromium-";

/// A throwaway browser profile: `data/` is Chromium's user data dir, `home/`
/// and `tmp/` its `HOME` and `TMPDIR`.
#[derive(Debug)]
pub(crate) struct Profile {
    dir: tempfile::TempDir,
}

impl Profile {
    /// Creates a profile under the system's temporary directory.
    pub(crate) fn create() -> Result<Profile> {
        let dir = tempfile::Builder::new()
            .prefix(PROFILE_PREFIX)
            .tempdir()
            .map_err(|error| browser_error(format!("no scratch profile for chromium: {error}")))?;
        for sub in ["data", "home", "tmp"] {
            std::fs::create_dir(dir.path().join(sub)).map_err(|error| {
                browser_error(format!("no scratch profile for chromium: {error}"))
            })?;
        }
        Ok(Profile { dir })
    }

    /// Returns the profile's directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Returns Chromium's user data dir.
    pub(crate) fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

/// Returns the whole environment of the browser: what it needs to find its
/// binary, fonts and locale, with every writable dir inside `profile`.
pub(crate) fn environment(profile: &Profile) -> Vec<(&'static str, OsString)> {
    let home = profile.path().join("home");
    let mut environment = vec![
        (
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        ),
        ("HOME", home.clone().into_os_string()),
        ("XDG_CONFIG_HOME", home.join(".config").into_os_string()),
        ("XDG_CACHE_HOME", home.join(".cache").into_os_string()),
        ("TMPDIR", profile.path().join("tmp").into_os_string()),
    ];
    for name in ["LANG", "LC_ALL", "FONTCONFIG_FILE", "FONTCONFIG_PATH"] {
        if let Some(value) = std::env::var_os(name) {
            environment.push((name, value));
        }
    }
    if !environment.iter().any(|(name, _)| *name == "LANG") {
        environment.push(("LANG", "C.UTF-8".into()));
    }
    environment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_holds_only_what_the_browser_needs() {
        let profile = Profile::create().unwrap();
        for (name, value) in environment(&profile) {
            match name {
                "PATH" | "LANG" | "LC_ALL" | "FONTCONFIG_FILE" | "FONTCONFIG_PATH" => {}
                "HOME" | "XDG_CONFIG_HOME" | "XDG_CACHE_HOME" | "TMPDIR" => {
                    assert!(Path::new(&value).starts_with(profile.path()), "{name}");
                }
                _ => panic!("the browser would get {name}"),
            }
        }
    }
}
