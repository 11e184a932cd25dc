//! The browser's process, from launch to reaping. A browser is a tree of a
//! dozen processes running whatever scripts a hostile site serves, so it gets
//! nothing of the crawler it does not need, and it must not outlive the
//! crawler however the crawler dies (`kill -9` runs no destructor).
//!
//! - Environment: cleared, then `PATH`, the locale and `HOME`, `TMPDIR` and
//!   the XDG dirs inside the throwaway profile; the crawler's keys and
//!   passwords (`COPYHOUND_*`) never reach it.
//! - User: `nobody` (65534) when the crawler runs as root, which Chromium's
//!   sandbox refuses; the profile is handed to it. The browser starts
//!   sandboxed, and with `--no-sandbox` only if that start fails (a warning,
//!   once; [`Sandbox`] tells which).
//! - Lifetime: the browser leads its own process group, killed whole when the
//!   [`BrowserProcess`] drops. `PR_SET_PDEATHSIG(SIGKILL)` kills it when the
//!   crawler dies: the workspace forbids `unsafe`, so no `pre_exec`; util-linux
//!   `setpriv --pdeathsig KILL` sets it and execs the browser. The signal
//!   follows the *thread* that forked, so every browser is spawned from one
//!   thread that lives as long as the process. Its other processes notice
//!   their parent's death and exit.
//! - Memory: V8's `--max-old-space-size` does not count ArrayBuffers, so the
//!   supervisor sums the resident private memory of the browser's process
//!   group every [`SAMPLE_INTERVAL`] and kills the group past its limit; the
//!   page then fails with that reason. A page can overshoot by what it
//!   allocates in one interval.
//! - Network: none of its own. Every request a page makes is answered through
//!   the fetcher by interception (`render.rs`); what interception does not
//!   see (preconnect, WebSocket, DNS prefetch, WebRTC) meets a proxy on a
//!   loopback port that is bound but never listens (every connection is
//!   refused, loopback included), a resolver that resolves nothing, and a
//!   WebRTC policy without UDP.
//! - Leftovers: profiles are `$TMPDIR/copyhound-chromium-*` holding their
//!   owner's pid and start time; a launch sweeps every profile whose owner is
//!   dead: processes naming it on their command line are killed, then it is
//!   removed.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use copyhound_core::Result;
use copyhound_core::chromium;
use rustix::process::{Pid, Signal};
use tokio::io::{AsyncBufReadExt, BufReader};
use tracing::{debug, warn};

use super::{browser_error, procfs};

/// Prefix of every profile directory, under the system's temporary directory.
const PROFILE_PREFIX: &str = "copyhound-chromium-";
/// File of a profile naming its owner: `<pid> <start time>`.
const OWNER_FILE: &str = "owner";
/// A profile without an owner file younger than this is being created.
const OWNERLESS_GRACE: Duration = Duration::from_secs(60);
/// Time the browser has to print its DevTools endpoint.
pub(crate) const LAUNCH_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the supervisor looks at the browser.
const SAMPLE_INTERVAL: Duration = Duration::from_millis(200);

/// User and group the browser runs as when the crawler is root (`nobody`).
const UNPRIVILEGED_ID: u32 = 65534;

/// A throwaway browser profile: `data/` is Chromium's user data dir, `home/`
/// and `tmp/` its `HOME` and `TMPDIR`, `owner` names the crawler process.
#[derive(Debug)]
pub(crate) struct Profile {
    dir: tempfile::TempDir,
}

impl Profile {
    /// Creates a profile owned by this process under `base`.
    fn create_in(base: &Path) -> io::Result<Profile> {
        let dir = tempfile::Builder::new()
            .prefix(PROFILE_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(base)?;
        let pid = std::process::id();
        let started = procfs::start_time(pid).unwrap_or(0);
        std::fs::write(dir.path().join(OWNER_FILE), format!("{pid} {started}\n"))?;
        for sub in ["data", "home", "tmp"] {
            std::fs::create_dir(dir.path().join(sub))?;
        }
        Ok(Profile { dir })
    }

    /// Makes the profile's dirs writable by `user` (also its group id); its
    /// owner file stays ours.
    fn hand_to(&self, user: u32) -> io::Result<()> {
        for dir in ["", "data", "home", "tmp"] {
            std::os::unix::fs::chown(self.dir.path().join(dir), Some(user), Some(user))?;
        }
        Ok(())
    }

    /// Returns the profile's directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

/// Returns the whole environment of the browser (`copyhound_core::chromium`):
/// what it needs to find its binary, fonts and locale, with every writable
/// dir inside `profile`.
pub(crate) fn environment(profile: &Profile) -> Vec<(&'static str, OsString)> {
    chromium::environment(
        &profile.path().join("home"),
        &profile.path().join("tmp"),
        |name| std::env::var_os(name),
    )
}

/// Returns the browser's command-line flags: the offline ones every browser
/// gets (`copyhound_core::chromium`; `proxy_port` is the port of the proxy
/// that refuses every connection, `user_data_dir` the profile's data) and
/// the renderer's own limits.
fn flags(proxy_port: u16, user_data_dir: &Path) -> Vec<String> {
    let mut flags = chromium::offline_flags(proxy_port, user_data_dir);
    flags.extend(
        [
            "--disable-extensions",
            "--mute-audio",
            "--renderer-process-limit=2",
            "--js-flags=--max-old-space-size=256",
            "--blink-settings=imagesEnabled=false",
            "--remote-debugging-port=0",
            "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        ]
        .map(String::from),
    );
    flags
}

/// Returns a loopback TCP socket bound and never listening: connections to
/// its port are refused for as long as it lives.
fn refusing_socket() -> io::Result<tokio::net::TcpSocket> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
    Ok(socket)
}

/// A running browser: its process group is killed when this drops, then a
/// supervisor thread reaps it and removes its profile.
#[derive(Debug)]
pub(crate) struct BrowserProcess {
    pid: u32,
    profile: PathBuf,
    /// Dropping it wakes the supervisor, which cleans up and ends.
    _stop_tx: std::sync::mpsc::Sender<()>,
    /// Why the browser died, if the supervisor saw it die or killed it.
    death: Arc<OnceLock<String>>,
    /// The browser's proxy: bound, never listening.
    _proxy: tokio::net::TcpSocket,
    sandbox: Sandbox,
    /// Whether the browser was reaped: its pid may then be another
    /// process's, and is never signalled again.
    reaped: Arc<std::sync::Mutex<bool>>,
}

impl BrowserProcess {
    /// Returns the browser's process id, which is also its process group.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Returns the browser's profile directory.
    pub(crate) fn profile(&self) -> &Path {
        &self.profile
    }

    /// Returns whether the browser runs in its sandbox.
    pub(crate) fn sandbox(&self) -> Sandbox {
        self.sandbox
    }

    /// Returns why the browser died, `None` while it runs.
    pub(crate) fn death(&self) -> Option<&str> {
        self.death.get().map(String::as_str)
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        // Now, not at the supervisor's next tick.
        if !*self.reaped.lock().expect("no panics while held") {
            kill_group(self.pid);
        }
    }
}

/// Whether the browser runs in Chromium's sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sandbox {
    /// Sandboxed: renderers in their own namespaces with seccomp filters.
    On,
    /// `--no-sandbox`: a sandboxed start failed on this machine (logged once).
    Off,
}

/// Starts `binary` in a fresh profile, sandboxed if it can be; returns the
/// running browser and its DevTools endpoint.
pub(crate) async fn launch(
    binary: &str,
    memory_limit_bytes: u64,
) -> Result<(BrowserProcess, String)> {
    let base = std::env::temp_dir();
    sweep_stale_profiles(&base);
    // Chromium refuses its sandbox to root.
    let user = rustix::process::geteuid()
        .is_root()
        .then_some(UNPRIVILEGED_ID);
    let sandboxed = match start(binary, &base, memory_limit_bytes, Sandbox::On, user).await {
        Ok(started) => {
            debug!(
                pid = started.0.pid,
                ?user,
                "chromium started in its sandbox"
            );
            return Ok(started);
        }
        Err(error) => error,
    };
    let started = start(binary, &base, memory_limit_bytes, Sandbox::Off, user).await?;
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        warn!(error = %sandboxed, "chromium runs without its sandbox: a sandboxed start failed");
    }
    Ok(started)
}

/// Starts one browser in `mode`, as `user` if given.
async fn start(
    binary: &str,
    base: &Path,
    memory_limit_bytes: u64,
    mode: Sandbox,
    user: Option<u32>,
) -> Result<(BrowserProcess, String)> {
    let profile = Profile::create_in(base)
        .and_then(|profile| match user {
            Some(user) => profile.hand_to(user).map(|()| profile),
            None => Ok(profile),
        })
        .map_err(|error| browser_error(format!("no scratch profile for chromium: {error}")))?;
    let proxy = refusing_socket()
        .map_err(|error| browser_error(format!("no loopback socket for chromium: {error}")))?;
    let proxy_port = proxy
        .local_addr()
        .map_err(|error| browser_error(format!("no loopback socket for chromium: {error}")))?
        .port();
    let mut command = match setpriv() {
        Some(setpriv) => {
            let mut command = std::process::Command::new(setpriv);
            command.args(["--pdeathsig", "KILL", "--", binary]);
            command
        }
        None => std::process::Command::new(binary),
    };
    command
        .env_clear()
        .envs(environment(&profile))
        .args(flags(proxy_port, &profile.data_dir()))
        .args((mode == Sandbox::Off).then_some("--no-sandbox"))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    if let Some(user) = user {
        // std also drops the supplementary groups.
        std::os::unix::process::CommandExt::uid(&mut command, user);
        std::os::unix::process::CommandExt::gid(&mut command, user);
    }
    let mut child = spawn_from_lasting_thread(command).await.map_err(|error| {
        browser_error(format!(
            "cannot start chromium (`{binary}`): {error}; set crawler.chromium"
        ))
    })?;
    let stderr = child
        .stderr
        .take()
        .map(tokio::process::ChildStderr::from_std);
    let process = supervise(child, profile, memory_limit_bytes, proxy, mode);
    let Some(Ok(stderr)) = stderr else {
        return Err(browser_error("chromium without stderr"));
    };
    let mut lines = BufReader::new(stderr).lines();
    let mut last_lines = std::collections::VecDeque::new();
    let url = tokio::time::timeout(LAUNCH_TIMEOUT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                return Some(url.trim().to_string());
            }
            if last_lines.len() == 3 {
                last_lines.pop_front();
            }
            last_lines.push_back(line);
        }
        None
    })
    .await
    .ok()
    .flatten();
    let Some(url) = url else {
        return Err(browser_error(format!(
            "chromium did not start its DevTools endpoint: {}",
            Vec::from(last_lines).join(" | ")
        )));
    };
    // Chromium blocks on a full stderr pipe: keep draining it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((process, url))
}

/// Returns util-linux `setpriv`, which sets the parent-death signal.
fn setpriv() -> Option<&'static str> {
    static SETPRIV: OnceLock<Option<&'static str>> = OnceLock::new();
    *SETPRIV.get_or_init(|| {
        let found = ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .find(|path| Path::new(path).try_exists().unwrap_or(false));
        if found.is_none() {
            warn!("no setpriv (util-linux): a browser may outlive a killed crawler until the next launch sweeps it");
        }
        found
    })
}

type SpawnJob = (
    std::process::Command,
    tokio::sync::oneshot::Sender<io::Result<std::process::Child>>,
);

/// Spawns `command` from a thread that never ends, so that a parent-death
/// signal fires when the process dies, not when a pool thread retires.
async fn spawn_from_lasting_thread(
    command: std::process::Command,
) -> io::Result<std::process::Child> {
    static SPAWNER: OnceLock<Option<std::sync::mpsc::Sender<SpawnJob>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (job_tx, job_rx) = std::sync::mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("chromium-spawner".into())
            .spawn(move || {
                for (mut command, reply_tx) in job_rx {
                    let _ = reply_tx.send(command.spawn());
                }
            })
            .ok()
            .map(|_| job_tx)
    });
    let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
    spawner
        .as_ref()
        .and_then(|spawner| spawner.send((command, reply_tx)).ok())
        .ok_or_else(|| io::Error::other("no spawner thread"))?;
    reply_rx
        .await
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
}

/// Starts the supervisor of `child`, which owns it and its profile until the
/// returned handle drops, and kills it if its process group holds more than
/// `memory_limit_bytes`.
fn supervise(
    mut child: std::process::Child,
    profile: Profile,
    memory_limit_bytes: u64,
    proxy: tokio::net::TcpSocket,
    sandbox: Sandbox,
) -> BrowserProcess {
    let pid = child.id();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let death: Arc<OnceLock<String>> = Arc::default();
    let process = BrowserProcess {
        pid,
        profile: profile.path().to_path_buf(),
        _stop_tx: stop_tx,
        death: death.clone(),
        _proxy: proxy,
        sandbox,
        reaped: Arc::default(),
    };
    let reaped = process.reaped.clone();
    let watch = move || {
        // Until the handle drops (the channel disconnects).
        while let Err(RecvTimeoutError::Timeout) = stop_rx.recv_timeout(SAMPLE_INTERVAL) {
            let mut is_reaped = reaped.lock().expect("no panics while held");
            if let Ok(Some(status)) = child.try_wait() {
                *is_reaped = true;
                let _ = death.set(format!("chromium exited ({status})"));
                break;
            }
            drop(is_reaped);
            let used = procfs::group_memory_bytes(pid);
            if used > memory_limit_bytes {
                let reason = format!(
                    "chromium killed: its processes held {} MiB of memory, over the limit of {} MiB",
                    used >> 20,
                    memory_limit_bytes >> 20
                );
                warn!(pid, "{reason}");
                let _ = death.set(reason);
                break;
            }
        }
        let mut is_reaped = reaped.lock().expect("no panics while held");
        if !*is_reaped {
            kill_group(pid);
            let _ = child.wait();
            *is_reaped = true;
        }
        drop(is_reaped);
        // Processes that left the group (crash handlers, or every one once
        // the browser exited by itself) still name the profile.
        kill_processes_naming(profile.path());
        drop(profile);
    };
    if let Err(error) = std::thread::Builder::new()
        .name(format!("chromium-{pid}"))
        .spawn(watch)
    {
        // Without a supervisor the drop still kills the group; the next
        // launch sweeps the profile.
        warn!(error = %error, "no supervisor thread for chromium");
    }
    process
}

/// Sends SIGKILL to process group `group` (never to init's or ours).
fn kill_group(group: u32) {
    let ours = procfs::process_group(std::process::id());
    if group <= 1 || Some(group) == ours {
        return;
    }
    if let Some(pid) = i32::try_from(group).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}

/// Sends SIGKILL to every process whose command line names `dir`.
fn kill_processes_naming(dir: &Path) {
    for pid in procfs::processes_naming(dir) {
        if pid <= 1 || pid == std::process::id() {
            continue;
        }
        if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
}

/// Removes every profile under `base` whose owner is dead, after killing the
/// processes that still use it.
fn sweep_stale_profiles(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let is_profile = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PROFILE_PREFIX));
        let path = entry.path();
        if !is_profile || owner_alive(&path) {
            continue;
        }
        kill_processes_naming(&path);
        match std::fs::remove_dir_all(&path) {
            Ok(()) => debug!(profile = %path.display(), "swept a dead crawler's browser profile"),
            Err(error) => {
                warn!(profile = %path.display(), error = %error, "cannot remove a stale browser profile");
            }
        }
    }
}

/// Whether the process that created `profile` still runs (a profile being
/// created, or one we cannot read, counts as owned).
fn owner_alive(profile: &Path) -> bool {
    match std::fs::read_to_string(profile.join(OWNER_FILE)) {
        Ok(owner) => {
            let mut fields = owner.split_whitespace().map(str::parse::<u64>);
            let (Some(Ok(pid)), Some(Ok(started))) = (fields.next(), fields.next()) else {
                return false;
            };
            u32::try_from(pid)
                .ok()
                .and_then(procfs::start_time)
                .is_some_and(|now| now == started)
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => std::fs::metadata(profile)
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_none_or(|age| age < OWNERLESS_GRACE),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_holds_only_what_the_browser_needs() {
        let base = tempfile::tempdir().unwrap();
        let profile = Profile::create_in(base.path()).unwrap();
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

    /// Returns the pid of a process that has exited.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn the_profile_of_a_dead_owner_is_swept_with_its_processes() {
        let base = tempfile::tempdir().unwrap();
        let live = Profile::create_in(base.path()).unwrap();
        let dead = Profile::create_in(base.path()).unwrap().dir.keep();
        std::fs::write(dead.join(OWNER_FILE), format!("{} 1\n", dead_pid())).unwrap();
        // A leftover browser process: its command line names the profile.
        let mut leftover = std::process::Command::new("sh")
            .args(["-c", "sleep 60; :"])
            .arg(dead.join("data"))
            .spawn()
            .unwrap();
        // Until it has exec'd, the child has the test's command line.
        while !procfs::processes_naming(&dead).contains(&leftover.id()) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let unrelated = base.path().join("copyhound-other");
        std::fs::create_dir(&unrelated).unwrap();

        sweep_stale_profiles(base.path());

        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(status) = leftover.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                leftover.kill().unwrap();
                leftover.wait().unwrap();
                panic!("the leftover process was not killed");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(!status.success(), "{status}");
        assert!(!dead.try_exists().unwrap());
        assert!(live.path().try_exists().unwrap(), "our own profile stays");
        assert!(unrelated.try_exists().unwrap());
    }

    #[test]
    fn an_ownerless_profile_is_kept_while_young() {
        let base = tempfile::tempdir().unwrap();
        let young = base.path().join(format!("{PROFILE_PREFIX}young"));
        std::fs::create_dir(&young).unwrap();
        sweep_stale_profiles(base.path());
        assert!(young.try_exists().unwrap());
    }
}
