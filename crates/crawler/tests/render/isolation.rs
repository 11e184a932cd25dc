//! The browser runs whatever scripts a hostile site serves: it must inherit no
//! secret of the crawler, die with the crawler even under `kill -9`, leave no
//! profile behind and run as an unprivileged user. The tests that kill re-run
//! this test binary as a child that launches a browser and prints its pid.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use copyhound_crawler::render::{Chromium, Sandbox};

use super::chromium;

/// Set in the child to the chromium binary it launches.
const CHILD_ENV: &str = "COPYHOUND_TEST_RENDER_CHILD_CHROMIUM";
const SECRET: &str = "s3cr3t-that-must-not-leak";

/// The child: only does something when spawned by a test below. Launches a
/// browser, prints `browser <pid> <profile>` and drops it at the end of stdin.
#[test]
fn launching_child() {
    let Ok(binary) = std::env::var(CHILD_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let browser = Chromium::launch(&binary).await.unwrap();
        println!(
            "browser {} {}",
            browser.pid(),
            browser.profile_dir().display()
        );
        std::io::stdout().flush().unwrap();
        let _ = tokio::task::spawn_blocking(|| std::io::stdin().lines().count()).await;
        drop(browser);
    });
}

/// A child test process holding a browser.
struct Launcher {
    child: Child,
    browser_pid: u32,
    profile: PathBuf,
}

fn spawn_launcher(binary: &str, env: &[(&str, &str)]) -> Launcher {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "isolation::launching_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, binary)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        let line = line.unwrap();
        // libtest prints the test's name on the same line.
        if let Some((_, rest)) = line.split_once("browser ") {
            let (pid, profile) = rest.split_once(' ').unwrap();
            return Launcher {
                child,
                browser_pid: pid.parse().unwrap(),
                profile: PathBuf::from(profile),
            };
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    panic!("the child printed no browser");
}

/// Processes whose command line names `profile` (or a path inside it).
fn processes_naming(profile: &Path) -> Vec<u32> {
    let profile = profile.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                String::from_utf8_lossy(&cmdline)
                    .split('\0')
                    .any(|arg| arg.contains(&profile))
            })
        })
        .collect()
}

fn environment(pid: u32) -> Vec<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    String::from_utf8_lossy(&environ)
        .split('\0')
        .filter(|entry| !entry.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_browser_inherits_no_secret() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let mut launcher = spawn_launcher(
        &binary,
        &[
            ("COPYHOUND_SERVER_ADMIN_KEY", SECRET),
            ("COPYHOUND_SMTP_PASSWORD", SECRET),
        ],
    );
    let environ = environment(launcher.browser_pid);
    drop(launcher.child.stdin.take());
    launcher.child.wait().unwrap();
    assert!(
        environ.iter().any(|entry| entry.starts_with("PATH=")),
        "{environ:?}"
    );
    for entry in &environ {
        assert!(
            !entry.starts_with("COPYHOUND_") && !entry.contains(SECRET),
            "the browser inherited `{entry}`"
        );
    }
    let home = environ
        .iter()
        .find_map(|entry| entry.strip_prefix("HOME="))
        .unwrap_or_default();
    assert!(
        Path::new(home).starts_with(&launcher.profile),
        "HOME={home} is outside the profile {}",
        launcher.profile.display()
    );
}

#[test]
fn a_killed_crawler_leaves_no_browser_and_no_profile_behind() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let mut launcher = spawn_launcher(&binary, &[]);
    assert!(!processes_naming(&launcher.profile).is_empty());
    launcher.child.kill().unwrap(); // SIGKILL: no destructor runs
    launcher.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = processes_naming(&launcher.profile);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = processes_naming(&launcher.profile);
    }
    if !left.is_empty() {
        let pids: Vec<String> = left.iter().map(u32::to_string).collect();
        let _ = Command::new("kill").arg("-9").args(&pids).status();
    }
    assert!(
        left.is_empty(),
        "browser processes outlived their parent: {left:?}"
    );
    // The next launch sweeps the dead crawler's profile away.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async { drop(Chromium::launch(&binary).await.unwrap()) });
    assert!(
        !launcher.profile.try_exists().unwrap(),
        "{} left behind",
        launcher.profile.display()
    );
}

#[tokio::test]
async fn a_dropped_browser_leaves_no_process_and_no_profile() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let browser = Chromium::launch(&binary).await.unwrap();
    let profile = browser.profile_dir().to_path_buf();
    assert!(!processes_naming(&profile).is_empty());
    drop(browser);
    let deadline = Instant::now() + Duration::from_secs(5);
    while (!processes_naming(&profile).is_empty() || profile.try_exists().unwrap())
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(processes_naming(&profile), Vec::<u32>::new());
    assert!(!profile.try_exists().unwrap(), "{}", profile.display());
}

/// Returns the real uid of `pid`.
fn uid_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn the_browser_runs_as_an_unprivileged_user() {
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    let browser = Chromium::launch(&binary).await.unwrap();
    eprintln!("chromium sandbox: {:?}", browser.sandbox());
    let processes = processes_naming(browser.profile_dir());
    assert!(!processes.is_empty());
    let root = uid_of(std::process::id()) == Some(0);
    for pid in processes {
        let Some(uid) = uid_of(pid) else { continue };
        if root {
            assert_ne!(uid, 0, "browser process {pid} runs as root");
        }
    }
}

#[tokio::test]
async fn a_browser_that_cannot_be_sandboxed_runs_without_and_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let Some(binary) = chromium() else {
        eprintln!("no chromium installed: skipped");
        return;
    };
    // A chromium whose sandbox never starts. Readable by `nobody`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = dir.path().join("chromium");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" --no-sandbox \"*) exec {binary} \"$@\";; esac\n\
             echo 'no usable sandbox' >&2\nexit 1\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let browser = Chromium::launch(fake.to_str().unwrap()).await.unwrap();
    assert_eq!(browser.sandbox(), Sandbox::Off);
}
