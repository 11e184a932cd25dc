//! The command line and environment of every headless Chromium CopyHound
//! starts: the crawler's renderer (`copyhound_crawler::render`) and the
//! report's PDF printer (`copyhound_report::pdf`). Each runs its own process
//! (one supervised, sandboxed browser per renderer; one blocking print per
//! PDF) and adds flags of its own, but both build the part that keeps the
//! browser offline, stateless and without the process's secrets from here.
//! Nothing here starts a process.

use std::ffi::OsString;
use std::path::Path;

/// Variables of the parent's environment the browser keeps, to find its
/// binary, fonts and locale. Everything else (the operator key, the mail
/// password, `COPYHOUND_*`) is dropped.
pub const KEPT_VARIABLES: [&str; 5] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "FONTCONFIG_FILE",
    "FONTCONFIG_PATH",
];

/// `PATH` when the parent has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// `LANG` when the parent has none.
const DEFAULT_LANG: &str = "C.UTF-8";

/// Returns the flags every browser gets: headless, no background services,
/// and no network of its own. Every connection goes to the proxy at
/// `127.0.0.1:{proxy_port}` (one that refuses them), loopback included, no
/// name resolves, and WebRTC sends no UDP outside the proxy. Its profile is
/// `user_data_dir`.
pub fn offline_flags(proxy_port: u16, user_data_dir: &Path) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--headless",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--dns-prefetch-disable",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]
    .map(String::from)
    .into();
    flags.push(format!("--proxy-server=http://127.0.0.1:{proxy_port}"));
    flags.push(format!("--user-data-dir={}", user_data_dir.display()));
    flags
}

/// Returns the browser's whole environment (the command clears its own): the
/// [`KEPT_VARIABLES`] that `parent` holds (`PATH` and `LANG` with defaults),
/// then `HOME` (`home`), `TMPDIR` (`tmp`) and the XDG config and cache dirs
/// inside `home`, so that whatever the browser writes stays in its scratch
/// folder.
pub fn environment(
    home: &Path,
    tmp: &Path,
    parent: impl Fn(&str) -> Option<OsString>,
) -> Vec<(&'static str, OsString)> {
    let mut environment: Vec<(&'static str, OsString)> = KEPT_VARIABLES
        .into_iter()
        .filter_map(|name| {
            let default = match name {
                "PATH" => Some(DEFAULT_PATH),
                "LANG" => Some(DEFAULT_LANG),
                _ => None,
            };
            let value = parent(name).or_else(|| default.map(OsString::from))?;
            Some((name, value))
        })
        .collect();
    environment.push(("HOME", home.as_os_str().to_owned()));
    environment.push(("TMPDIR", tmp.as_os_str().to_owned()));
    environment.push(("XDG_CONFIG_HOME", home.join(".config").into_os_string()));
    environment.push(("XDG_CACHE_HOME", home.join(".cache").into_os_string()));
    environment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_keeps_no_secret_and_stays_in_the_scratch_folder() {
        let parent = |name: &str| match name {
            "LC_ALL" => Some(OsString::from("zh_CN.UTF-8")),
            "COPYHOUND_SERVER_ADMIN_KEY" => Some(OsString::from("secret")),
            _ => None,
        };
        let environment = environment(Path::new("/scratch"), Path::new("/scratch/tmp"), parent);
        let names: Vec<&str> = environment.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "PATH",
                "LANG",
                "LC_ALL",
                "HOME",
                "TMPDIR",
                "XDG_CONFIG_HOME",
                "XDG_CACHE_HOME"
            ]
        );
        for (name, value) in &environment[3..] {
            assert!(Path::new(value).starts_with("/scratch"), "{name}");
        }
    }

    #[test]
    fn the_flags_leave_the_browser_no_network() {
        let flags = offline_flags(9, Path::new("/scratch/profile"));
        for flag in [
            "--headless",
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--user-data-dir=/scratch/profile",
        ] {
            assert!(flags.iter().any(|given| given == flag), "{flag}");
        }
    }
}
