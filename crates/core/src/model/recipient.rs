//! Who to notify about an infringing site: its domain's registrar, the network
//! hosting its address and, when one fronts it, the CDN. Found by RDAP
//! (RFC 9083) and kept as plain data, so takedown notices, the API, the console
//! and the CLI show the same recipients.

use serde::{Deserialize, Serialize};

use super::Timestamp;

/// The recipients of a takedown notice for one site, as looked up at one time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Recipients {
    /// The host that was looked up (the site's first seed's host).
    pub host: String,
    /// The registered domain the registry answered for (`novels.example`
    /// for `www.novels.example`); none when no registry knows it.
    pub domain: Option<String>,
    /// The domain's registrar.
    pub registrar: Option<Registrar>,
    /// The network hosting the host's first public address.
    pub hosting: Option<HostingNetwork>,
    /// The CDN fronting the site, when one does: its abuse channel forwards
    /// complaints to the origin host, which the CDN hides.
    pub cdn: Option<CdnFront>,
    /// When the lookup ran (answers may come from the cache of that time).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub looked_up_at: Timestamp,
    /// The RDAP URLs queried, in order.
    pub sources: Vec<String>,
    /// What could not be looked up, one line each (`no registry for .test`);
    /// the fields above are what was found regardless.
    pub problems: Vec<String>,
}

/// A domain's registrar, with its abuse contact.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Registrar {
    /// Registrar name (`fn` of its vCard).
    pub name: String,
    /// IANA Registrar ID, when given.
    pub iana_id: Option<String>,
    /// Abuse e-mail address.
    pub abuse_email: Option<String>,
    /// Abuse telephone number.
    pub abuse_phone: Option<String>,
    /// The registrar's web site.
    pub url: Option<String>,
}

/// The IP network an address belongs to, with its abuse contact.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HostingNetwork {
    /// The address looked up.
    pub address: String,
    /// Network name (`CLOUDFLARENET`, `EXAMPLE-HOSTING-NET`).
    pub name: Option<String>,
    /// Registry handle of the network.
    pub handle: Option<String>,
    /// The network's range, as CIDR when it is one prefix, else `start - end`.
    pub cidr: Option<String>,
    /// The organization holding the network (its registrant's name).
    pub organization: Option<String>,
    /// Abuse e-mail address.
    pub abuse_email: Option<String>,
    /// Abuse telephone number.
    pub abuse_phone: Option<String>,
}

/// A CDN in front of a site.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CdnFront {
    /// The CDN operator (`Cloudflare`, `Akamai`, `Fastly`, `Amazon CloudFront`).
    pub name: String,
    /// What gave it away: `network CLOUDFLARENET`, `header cf-ray`.
    pub detected_by: String,
    /// Abuse e-mail address (the network's RDAP abuse contact, else the
    /// operator's published one).
    pub abuse_email: Option<String>,
    /// The operator's abuse form, when it has one.
    pub abuse_url: Option<String>,
}

impl Recipients {
    /// Returns the address a notice goes to first: the CDN's abuse address
    /// when a CDN fronts the site (it forwards to the origin host), else the
    /// hosting network's, else the registrar's.
    pub fn primary_email(&self) -> Option<&str> {
        let cdn = self.cdn.as_ref().and_then(|cdn| cdn.abuse_email.as_deref());
        let hosting = self
            .hosting
            .as_ref()
            .and_then(|hosting| hosting.abuse_email.as_deref());
        let registrar = self
            .registrar
            .as_ref()
            .and_then(|registrar| registrar.abuse_email.as_deref());
        cdn.or(hosting).or(registrar)
    }

    /// Returns every distinct abuse address found, the primary one first.
    pub fn abuse_emails(&self) -> Vec<&str> {
        let mut emails: Vec<&str> = Vec::new();
        let candidates = [
            self.primary_email(),
            self.cdn.as_ref().and_then(|cdn| cdn.abuse_email.as_deref()),
            self.hosting
                .as_ref()
                .and_then(|hosting| hosting.abuse_email.as_deref()),
            self.registrar
                .as_ref()
                .and_then(|registrar| registrar.abuse_email.as_deref()),
        ];
        for email in candidates.into_iter().flatten() {
            if !emails.iter().any(|seen| seen.eq_ignore_ascii_case(email)) {
                emails.push(email);
            }
        }
        emails
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdn_is_notified_first_then_the_host_then_the_registrar() {
        let mut recipients = Recipients {
            host: "www.novels.example".into(),
            domain: Some("novels.example".into()),
            registrar: Some(Registrar {
                name: "Registrar".into(),
                abuse_email: Some("abuse@registrar.example".into()),
                ..Registrar::default()
            }),
            hosting: Some(HostingNetwork {
                abuse_email: Some("ABUSE@registrar.example".into()),
                ..HostingNetwork::default()
            }),
            cdn: None,
            looked_up_at: chrono::Utc::now(),
            sources: Vec::new(),
            problems: Vec::new(),
        };
        assert_eq!(recipients.primary_email(), Some("ABUSE@registrar.example"));
        assert_eq!(recipients.abuse_emails(), ["ABUSE@registrar.example"]);
        recipients.cdn = Some(CdnFront {
            name: "Cloudflare".into(),
            abuse_email: Some("abuse@cloudflare.com".into()),
            ..CdnFront::default()
        });
        assert_eq!(recipients.primary_email(), Some("abuse@cloudflare.com"));
        assert_eq!(
            recipients.abuse_emails(),
            ["abuse@cloudflare.com", "ABUSE@registrar.example"]
        );
    }
}
