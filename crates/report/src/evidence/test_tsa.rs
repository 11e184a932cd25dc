//! A time-stamping authority made at test time with the `openssl` CLI: a
//! test CA, a TSA certificate it signs (extendedKeyUsage critical
//! timeStamping), and `openssl ts -reply` for each request. For tests only:
//! the product never runs `openssl`.
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use std::path::{Path, PathBuf};
use std::process::Command;

use async_trait::async_trait;
use copyhound_core::{Error, ErrorKind, Result};

use super::TimestampAuthority;

/// A TSA answering with `openssl ts -reply`, keys and certificates in `dir`.
#[derive(Debug)]
pub struct OpensslTsa {
    dir: PathBuf,
}

impl OpensslTsa {
    /// Makes a CA and a TSA certificate it signs; `None` without `openssl`
    /// (outside CI, where `.ci/run` installs it).
    pub fn new(dir: &Path) -> Option<Self> {
        if Command::new("openssl").arg("version").output().is_err() {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "openssl is required in CI"
            );
            eprintln!("skipping: openssl not found");
            return None;
        }
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        std::fs::write(
            dir.join("tsa.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
             extendedKeyUsage=critical,timeStamping\nsubjectKeyIdentifier=hash\n",
        )
        .unwrap();
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "3650",
            "-subj",
            "/CN=CopyHound Test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ]);
        run(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "tsa.key",
            "-out",
            "tsa.csr",
            "-subj",
            "/CN=CopyHound Test TSA",
        ]);
        run(&[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "tsa.crt",
            "-days",
            "365",
            "-extfile",
            "tsa.ext",
        ]);
        std::fs::write(dir.join("serial"), "01\n").unwrap();
        std::fs::write(
            dir.join("tsa.cnf"),
            format!(
                "[ tsa ]\ndefault_tsa = tsa1\n[ tsa1 ]\ndir = {}\nserial = $dir/serial\n\
                 crypto_device = builtin\nsigner_cert = $dir/tsa.crt\nsigner_key = $dir/tsa.key\n\
                 signer_digest = sha256\ndefault_policy = 1.2.3.4.1\ndigests = sha256\n\
                 accuracy = secs:1\nordering = no\ntsa_name = no\ness_cert_id_alg = sha256\n",
                dir.display()
            ),
        )
        .unwrap();
        Some(Self {
            dir: dir.to_path_buf(),
        })
    }

    /// The CA certificate as DER, what `evidence.tsa_certificates` names.
    pub fn ca_der(&self) -> Vec<Vec<u8>> {
        let pem = std::fs::read_to_string(self.dir.join("ca.crt")).unwrap();
        let body: String = pem
            .lines()
            .filter(|line| !line.starts_with("-----"))
            .collect();
        vec![base64::Engine::decode(&base64::engine::general_purpose::STANDARD, body).unwrap()]
    }
}

#[async_trait]
impl TimestampAuthority for OpensslTsa {
    fn url(&self) -> &str {
        "http://127.0.0.1/test-tsa"
    }

    async fn timestamp(&self, request_der: &[u8]) -> Result<Vec<u8>> {
        self.reply(request_der)
    }
}

impl OpensslTsa {
    /// The CA certificate's PEM file.
    pub fn ca_pem_path(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    /// Answers one DER request with `openssl ts -reply` (blocking).
    pub fn reply(&self, request_der: &[u8]) -> Result<Vec<u8>> {
        let query = self.dir.join("query.tsq");
        let reply = self.dir.join("reply.tsr");
        std::fs::write(&query, request_der).unwrap();
        let out = Command::new("openssl")
            .args(["ts", "-reply", "-config"])
            .arg(self.dir.join("tsa.cnf"))
            .arg("-queryfile")
            .arg(&query)
            .arg("-out")
            .arg(&reply)
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(Error::new(
                ErrorKind::Transient,
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        Ok(std::fs::read(&reply).unwrap())
    }
}
