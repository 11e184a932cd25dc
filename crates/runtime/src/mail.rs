//! Alert, report and test e-mail over SMTP (lettre, rustls). One connection
//! per message: they are rare, and a pooled connection would only go stale between them.

use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::config::{SmtpConfig, SmtpSecurity};
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_report::{AlertEmail, MailTransport};
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Attachment, Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// Sends alert e-mails through the `[smtp]` server.
#[derive(Debug, Clone)]
pub struct SmtpMailTransport {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailTransport {
    /// Returns the transport of `config`, or `None` when no server is configured.
    pub fn from_config(config: &SmtpConfig) -> Result<Option<Self>> {
        if config.host.is_empty() {
            return Ok(None);
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config_error = |what: &str, error: &dyn std::fmt::Display| {
            Error::new(ErrorKind::Config, format!("smtp: {what}: {error}"))
        };
        let builder = match config.security {
            SmtpSecurity::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&config.host)
                .map_err(|error| config_error("TLS to host", &error))?,
            SmtpSecurity::Starttls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&config.host)
                    .map_err(|error| config_error("STARTTLS to host", &error))?
            }
            SmtpSecurity::None => {
                AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host)
            }
        };
        let mut builder = builder
            .port(config.port)
            .timeout(Some(Duration::from_secs(config.timeout_secs)));
        // An empty login (a compose variable left unset) means none.
        if let Some(username) = config.username.as_ref().filter(|name| !name.is_empty()) {
            builder = builder.credentials(Credentials::new(
                username.clone(),
                config.password.clone().unwrap_or_default(),
            ));
        }
        let from = config
            .from
            .parse::<Mailbox>()
            .map_err(|error| config_error("from", &error))?;
        Ok(Some(Self {
            transport: builder.build(),
            from,
        }))
    }
}

#[async_trait]
impl MailTransport for SmtpMailTransport {
    async fn send(&self, email: &AlertEmail) -> Result<()> {
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(email.subject.clone())
            .raw_header(HeaderValue::new(
                HeaderName::new_from_ascii_str("X-CopyHound-Delivery"),
                email.delivery_id.clone(),
            ));
        for address in &email.to {
            let mailbox = address.parse::<Mailbox>().map_err(|error| {
                Error::invalid(format!("e-mail recipient {address:?}: {error}"))
            })?;
            builder = builder.to(mailbox);
        }
        let mut body = MultiPart::alternative_plain_html(email.text.clone(), email.html.clone());
        if !email.attachments.is_empty() {
            let mut mixed = MultiPart::mixed().multipart(body);
            for attached in &email.attachments {
                let content_type = ContentType::parse(&attached.content_type).map_err(|error| {
                    Error::invalid(format!(
                        "attachment {}: content type {:?}: {error}",
                        attached.filename, attached.content_type
                    ))
                })?;
                mixed = mixed.singlepart(
                    Attachment::new(attached.filename.clone())
                        .body(attached.bytes.clone(), content_type),
                );
            }
            body = mixed;
        }
        let message = builder
            .multipart(body)
            .map_err(|error| Error::invalid(format!("e-mail: {error}")))?;
        self.transport.send(message).await.map_err(|error| {
            // 5xx replies are permanent; everything else may pass on retry.
            let kind = if error.is_permanent() {
                ErrorKind::InvalidInput
            } else {
                ErrorKind::Transient
            };
            Error::new(kind, format!("SMTP delivery failed: {error}"))
        })?;
        Ok(())
    }
}
