//! The HTTP side of evidence bundles: an RFC 3161 time-stamping authority
//! over HTTP(S), and the bundle options read from `[evidence]`.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::config::Config;
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_report::evidence::timestamp::certificates_from_pem;
use copyhound_report::evidence::{BundleOptions, TimestampAuthority};

/// Largest time-stamp response read.
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// Posts `application/timestamp-query` to `evidence.tsa_url`, 30 s a request.
#[derive(Debug, Clone)]
pub struct HttpTimestampAuthority {
    client: reqwest::Client,
    url: String,
}

impl HttpTimestampAuthority {
    /// Returns the client for `url`.
    pub fn new(url: &str) -> Result<Self> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| {
                Error::with_source(ErrorKind::Config, "cannot build the TSA client", error)
            })?;
        Ok(Self {
            client,
            url: url.to_owned(),
        })
    }

    /// The TSA of `config`, or a `Config` error naming the key to set.
    pub fn from_config(config: &Config) -> Result<Self> {
        if config.evidence.tsa_url.is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                "evidence bundles need a time-stamping authority: set evidence.tsa_url (COPYHOUND_EVIDENCE_TSA_URL)",
            ));
        }
        Self::new(&config.evidence.tsa_url)
    }
}

#[async_trait]
impl TimestampAuthority for HttpTimestampAuthority {
    fn url(&self) -> &str {
        &self.url
    }

    async fn timestamp(&self, request_der: &[u8]) -> Result<Vec<u8>> {
        let failed = |error: reqwest::Error| {
            Error::with_source(
                ErrorKind::Transient,
                format!("time-stamp request to {} failed", self.url),
                error,
            )
        };
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/timestamp-query")
            .body(request_der.to_vec())
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        if !status.is_success() {
            return Err(Error::new(
                ErrorKind::Transient,
                format!("the TSA at {} answered http {status}", self.url),
            ));
        }
        let body = response.bytes().await.map_err(failed)?;
        if body.len() > MAX_RESPONSE_BYTES {
            return Err(Error::new(
                ErrorKind::Transient,
                format!(
                    "the TSA at {} answered over {MAX_RESPONSE_BYTES} bytes",
                    self.url
                ),
            ));
        }
        Ok(body.to_vec())
    }
}

/// The bundle options of `config`: the chain certificates from
/// `evidence.tsa_certificates`, and `crawler.chromium` for screenshots when
/// that browser starts.
pub fn bundle_options(config: &Config) -> Result<BundleOptions> {
    let tsa_certificates = match &config.evidence.tsa_certificates {
        None => Vec::new(),
        Some(path) => {
            let pem = std::fs::read_to_string(path).map_err(|error| {
                Error::with_source(
                    ErrorKind::Config,
                    format!("cannot read evidence.tsa_certificates {}", path.display()),
                    error,
                )
            })?;
            certificates_from_pem(&normalize_pem(&pem)).map_err(|error| {
                Error::new(
                    ErrorKind::Config,
                    format!("evidence.tsa_certificates {}: {error}", path.display()),
                )
            })?
        }
    };
    let chromium = PathBuf::from(&config.crawler.chromium);
    let starts = std::process::Command::new(&chromium)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    Ok(BundleOptions {
        tsa_certificates,
        chromium: starts.then_some(chromium),
    })
}

/// The certificate blocks of a PEM file in canonical form (64 columns, `\n`),
/// anything between them dropped.
fn normalize_pem(pem: &str) -> String {
    let mut out = String::new();
    let mut body = String::new();
    let mut inside = false;
    for line in pem.lines().map(str::trim) {
        match line {
            "-----BEGIN CERTIFICATE-----" => {
                inside = true;
                body.clear();
            }
            "-----END CERTIFICATE-----" if inside => {
                inside = false;
                out.push_str("-----BEGIN CERTIFICATE-----\n");
                for chunk in body.as_bytes().chunks(64) {
                    out.push_str(&String::from_utf8_lossy(chunk));
                    out.push('\n');
                }
                out.push_str("-----END CERTIFICATE-----\n");
            }
            _ if inside => body.push_str(line),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_files_are_read_whatever_their_layout() {
        let pem =
            "junk\r\n-----BEGIN CERTIFICATE-----\r\nMAMCAQE=\r\n-----END CERTIFICATE-----\r\n";
        assert_eq!(
            normalize_pem(pem),
            "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n"
        );
    }

    #[test]
    fn no_tsa_url_is_a_config_error_naming_the_key() {
        let error = HttpTimestampAuthority::from_config(&Config::default()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
        assert!(error.to_string().contains("evidence.tsa_url"), "{error}");
    }
}
