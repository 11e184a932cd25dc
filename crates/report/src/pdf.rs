//! PDF by printing the HTML report with headless Chromium: one layout to maintain
//! (the HTML's print stylesheet), and the browser's text shaping handles Chinese
//! well, which PDF libraries in Rust do not without a large build. The cost is a
//! runtime dependency on a browser and a CJK font: on Debian
//! `apt-get install -y chromium fonts-wqy-microhei`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use copyhound_core::chromium;
use copyhound_core::{Error, ErrorKind, Result};

use crate::data::ReportData;
use crate::html::{HtmlOptions, render_html};

/// Longest time a print may take before the browser is killed.
const PRINT_TIMEOUT: Duration = Duration::from_secs(300);
/// Distinguishes the scratch directories of concurrent prints in one process.
static SCRATCH_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Port of the proxy every connection of the browser goes to: the discard
/// port, where nothing listens.
const NO_PROXY_PORT: u16 = 9;

/// Returns the flags of a print: headless, offline and stateless
/// (`copyhound_core::chromium`), and `--no-sandbox` because workers and CI
/// run as root. The report is a local file that needs no network, so an
/// excerpt of a hostile page can never make the browser reach out.
fn base_flags(user_data_dir: &Path) -> Vec<String> {
    let mut flags = chromium::offline_flags(NO_PROXY_PORT, user_data_dir);
    flags.push("--no-sandbox".to_string());
    flags
}

/// What the browser's environment holds (`copyhound_core::chromium`): of the
/// process's own (`parent`), which carries the operator key and the mail
/// password, only what Chromium and fontconfig need; home and temporary files
/// are the scratch folder.
fn browser_env(
    scratch: &Path,
    parent: impl Iterator<Item = (String, String)>,
) -> Vec<(&'static str, OsString)> {
    let parent: Vec<(String, String)> = parent.collect();
    chromium::environment(scratch, scratch, |name| {
        parent
            .iter()
            .find(|(kept, _)| kept == name)
            .map(|(_, value)| OsString::from(value))
    })
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let name = format!(
            "copyhound-report-{}-{nanos}-{}",
            std::process::id(),
            SCRATCH_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).map_err(|error| {
            Error::with_source(
                ErrorKind::Internal,
                "failed to create a scratch directory",
                error,
            )
        })?;
        Ok(Self(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!(path = %self.0.display(), %error, "failed to remove a scratch directory");
        }
    }
}

/// Runs Chromium with `arguments` and waits for it, killing it after `timeout`.
pub(crate) fn run_chromium(
    chromium_path: &Path,
    arguments: &[String],
    timeout: Duration,
) -> Result<()> {
    let scratch = Scratch::new()?;
    let mut child = Command::new(chromium_path)
        .env_clear()
        .envs(browser_env(&scratch.0, std::env::vars()))
        .args(base_flags(&scratch.0.join("profile")))
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            Error::with_source(
                ErrorKind::Config,
                format!(
                    "failed to start chromium `{}`; install it (debian: chromium)",
                    chromium_path.display()
                ),
                error,
            )
        })?;
    let started = Instant::now();
    loop {
        let waited = child.try_wait().map_err(|error| {
            Error::with_source(ErrorKind::Internal, "failed to wait for chromium", error)
        })?;
        if let Some(status) = waited {
            if status.success() {
                return Ok(());
            }
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                use std::io::Read;
                // Best effort: the exit status is the error, stderr only explains it.
                let _ = pipe.read_to_string(&mut stderr);
            }
            let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
            return Err(Error::new(
                ErrorKind::Internal,
                format!("chromium exited with {status}: {tail}"),
            ));
        }
        if started.elapsed() > timeout {
            // Best effort: the process may have exited between the check and the kill.
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::new(
                ErrorKind::Timeout,
                format!("chromium did not finish within {timeout:?}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Prints the HTML file `html_path` to the PDF file `pdf_path` with the headless
/// Chromium binary `chromium_path` (a path, or a name looked up on `PATH`).
///
/// Blocking (up to five minutes; about a minute for a 400-page report): call it from `spawn_blocking` in async code.
/// Page size and margins come from the report's print stylesheet (A4); no
/// header or footer is added. Fails with `Config` when the browser cannot be
/// started and `Internal` when it fails or writes no PDF. Chinese text needs a
/// CJK font installed (Debian: `fonts-wqy-microhei`).
pub fn render_pdf_with_chromium(
    html_path: &Path,
    pdf_path: &Path,
    chromium_path: &Path,
) -> Result<()> {
    let html_path = std::path::absolute(html_path)
        .map_err(|error| Error::with_source(ErrorKind::InvalidInput, "invalid html path", error))?;
    let arguments = vec![
        "--no-pdf-header-footer".to_string(),
        format!("--print-to-pdf={}", pdf_path.display()),
        format!("file://{}", html_path.display()),
    ];
    run_chromium(chromium_path, &arguments, PRINT_TIMEOUT)?;
    match std::fs::metadata(pdf_path) {
        Ok(metadata) if metadata.len() > 0 => Ok(()),
        Ok(_) => Err(Error::new(
            ErrorKind::Internal,
            "chromium wrote an empty pdf",
        )),
        Err(error) => Err(Error::with_source(
            ErrorKind::Internal,
            "chromium wrote no pdf",
            error,
        )),
    }
}

/// Returns a PNG of `html` (a stored page body) as `chromium_path` renders it
/// from a local file, offline (nothing the page links is fetched), 1280 px
/// wide. Blocking; errors as [`render_pdf_with_chromium`].
pub fn screenshot_with_chromium(html: &[u8], chromium_path: &Path) -> Result<Vec<u8>> {
    let scratch = Scratch::new()?;
    let html_path = scratch.0.join("page.html");
    let png_path = scratch.0.join("page.png");
    std::fs::write(&html_path, html).map_err(|error| {
        Error::with_source(ErrorKind::Internal, "failed to write the page", error)
    })?;
    let arguments = vec![
        "--hide-scrollbars".to_string(),
        "--window-size=1280,1600".to_string(),
        format!("--screenshot={}", png_path.display()),
        format!("file://{}", html_path.display()),
    ];
    run_chromium(chromium_path, &arguments, Duration::from_secs(120))?;
    match std::fs::read(&png_path) {
        Ok(png) if png.starts_with(b"\x89PNG") => Ok(png),
        Ok(_) => Err(Error::new(ErrorKind::Internal, "chromium wrote no png")),
        Err(error) => Err(Error::with_source(
            ErrorKind::Internal,
            "chromium wrote no png",
            error,
        )),
    }
}

/// Returns `data` as a PDF: the HTML report printed by `chromium_path` in a
/// scratch directory (see [`render_pdf_with_chromium`]).
pub fn render_pdf(
    data: &ReportData,
    options: &HtmlOptions,
    chromium_path: &Path,
) -> Result<Vec<u8>> {
    let html = render_html(data, options)?;
    let scratch = Scratch::new()?;
    let html_path = scratch.0.join("report.html");
    let pdf_path = scratch.0.join("report.pdf");
    std::fs::write(&html_path, html).map_err(|error| {
        Error::with_source(
            ErrorKind::Internal,
            "failed to write the html for printing",
            error,
        )
    })?;
    render_pdf_with_chromium(&html_path, &pdf_path, chromium_path)?;
    std::fs::read(&pdf_path)
        .map_err(|error| Error::with_source(ErrorKind::Internal, "failed to read the pdf", error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_browser_is_a_config_error() {
        let error = run_chromium(
            Path::new("/nonexistent/chromium"),
            &[],
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
    }

    /// The browser starts with none of the process's secrets (operator key,
    /// mail password), offline: a stand-in binary records what it was given.
    #[cfg(unix)]
    #[test]
    fn the_browser_gets_no_secret_and_no_network() {
        use std::os::unix::fs::PermissionsExt;
        let parent = [
            ("PATH", "/usr/bin"),
            ("COPYHOUND_SERVER_ADMIN_KEY", "operator-secret"),
            ("COPYHOUND_SMTP_PASSWORD", "hunter2"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("LANG", "C.UTF-8"),
        ]
        .map(|(name, value)| (name.to_string(), value.to_string()));
        let env = browser_env(Path::new("/scratch"), parent.into_iter());
        let names: Vec<&str> = env.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "PATH",
                "LANG",
                "HOME",
                "TMPDIR",
                "XDG_CONFIG_HOME",
                "XDG_CACHE_HOME"
            ]
        );
        // And the real launch clears the rest (the test process's own
        // COPYHOUND_TEST_* variables under CI, for one).
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("seen");
        let fake = dir.path().join("chromium");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\n{{ env; echo ARGS \"$@\"; }} > '{}'\n",
                out.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        run_chromium(&fake, &["about:blank".into()], Duration::from_secs(10)).unwrap();
        let seen = std::fs::read_to_string(&out).unwrap();
        let variables: Vec<&str> = seen
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name))
            .filter(|name| !name.starts_with("ARGS"))
            .collect();
        assert!(
            variables.iter().all(|name| !name.starts_with("COPYHOUND")),
            "{seen}"
        );
        assert!(
            seen.contains("--host-resolver-rules=MAP * ~NOTFOUND"),
            "{seen}"
        );
        assert!(seen.contains("--proxy-bypass-list=<-loopback>"), "{seen}");
    }
}
