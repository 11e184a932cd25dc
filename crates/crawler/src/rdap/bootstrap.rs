//! RFC 9224 bootstrap files: which RDAP server answers for a top-level domain
//! or an address range. The files are IANA's (`dns.json`, `ipv4.json`,
//! `ipv6.json`) or an operator's own copy in the same format:
//! `{"services": [[["com", "net"], ["https://rdap.example/"]], ...]}`.

use std::net::IpAddr;

use copyhound_core::{Error, ErrorKind, Result};
use serde_json::Value;

/// One bootstrap file's services: entries (labels or CIDR prefixes) to base URLs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bootstrap {
    services: Vec<(Vec<String>, Vec<String>)>,
}

impl Bootstrap {
    /// Parses a bootstrap file; `source` names it in errors.
    pub fn parse(bytes: &[u8], source: &str) -> Result<Self> {
        let document: Value = serde_json::from_slice(bytes).map_err(|error| {
            Error::with_source(
                ErrorKind::Config,
                format!("rdap bootstrap {source} is not JSON"),
                error,
            )
        })?;
        let malformed = || {
            Error::new(
                ErrorKind::Config,
                format!("rdap bootstrap {source} has no `services` list of [entries, urls] pairs"),
            )
        };
        let services = document
            .get("services")
            .and_then(Value::as_array)
            .ok_or_else(malformed)?;
        let strings = |value: &Value| -> Option<Vec<String>> {
            value
                .as_array()?
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect()
        };
        let services = services
            .iter()
            .map(|service| {
                let pair = service.as_array().filter(|pair| pair.len() >= 2)?;
                let entries = strings(&pair[0])?;
                let urls = strings(&pair[1])?;
                Some((entries, urls))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(malformed)?;
        Ok(Self { services })
    }

    /// Returns the base URL of the server for domain `name`, the service
    /// whose entry is the longest suffix of its labels (`co.uk` before `uk`),
    /// and how many labels that entry has.
    pub fn server_for_domain(&self, name: &str) -> Option<(String, usize)> {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let labels: Vec<&str> = name.split('.').collect();
        (0..labels.len())
            .map(|start| labels[start..].join("."))
            .find_map(|suffix| {
                self.services.iter().find_map(|(entries, urls)| {
                    entries
                        .iter()
                        .any(|entry| entry.eq_ignore_ascii_case(&suffix))
                        .then(|| preferred_url(urls))
                        .flatten()
                        .map(|url| (url, suffix.split('.').count()))
                })
            })
    }

    /// Returns the base URL of the server for `address`: the service with
    /// the longest prefix containing it.
    pub fn server_for_address(&self, address: IpAddr) -> Option<String> {
        self.services
            .iter()
            .flat_map(|(entries, urls)| entries.iter().map(move |entry| (entry, urls)))
            .filter_map(|(entry, urls)| {
                let length = prefix_contains(entry, address)?;
                Some((length, urls))
            })
            .max_by_key(|(length, _)| *length)
            .and_then(|(_, urls)| preferred_url(urls))
    }
}

/// The https URL of a service when it has one, else its first; always ending in `/`.
fn preferred_url(urls: &[String]) -> Option<String> {
    let url = urls
        .iter()
        .find(|url| url.starts_with("https://"))
        .or_else(|| urls.iter().find(|url| url.starts_with("http://")))?;
    Some(if url.ends_with('/') {
        url.clone()
    } else {
        format!("{url}/")
    })
}

/// Returns the prefix length of `cidr` when it contains `address`.
fn prefix_contains(cidr: &str, address: IpAddr) -> Option<u8> {
    let (network, length) = cidr.split_once('/').unwrap_or((cidr, ""));
    let network: IpAddr = network.trim().parse().ok()?;
    let full = if network.is_ipv4() { 32 } else { 128 };
    let length: u8 = if length.is_empty() {
        full
    } else {
        length.trim().parse().ok()?
    };
    if length > full {
        return None;
    }
    let (network_bits, address_bits) = match (network, address) {
        (IpAddr::V4(network), IpAddr::V4(address)) => (
            u128::from(u32::from(network)) << 96,
            u128::from(u32::from(address)) << 96,
        ),
        (IpAddr::V6(network), IpAddr::V6(address)) => (u128::from(network), u128::from(address)),
        _ => return None,
    };
    let mask = if length == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(length))
    };
    (network_bits & mask == address_bits & mask).then_some(length)
}

/// Returns `start`..`end` as one CIDR prefix when it is exactly one.
pub fn range_as_cidr(start: IpAddr, end: IpAddr) -> Option<String> {
    let (start_bits, end_bits, full) = match (start, end) {
        (IpAddr::V4(start), IpAddr::V4(end)) => (
            u128::from(u32::from(start)),
            u128::from(u32::from(end)),
            32u32,
        ),
        (IpAddr::V6(start), IpAddr::V6(end)) => (u128::from(start), u128::from(end), 128u32),
        _ => return None,
    };
    let host_bits = (start_bits ^ end_bits).count_ones();
    let host_mask = if host_bits == 0 {
        0
    } else {
        u128::MAX >> (128 - host_bits)
    };
    let is_prefix = start_bits & host_mask == 0 && end_bits == start_bits | host_mask;
    is_prefix.then(|| format!("{start}/{}", full - host_bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DNS: &str = r#"{"version": "1.0", "publication": "2026-11-01T00:00:00Z",
        "services": [[["uk"], ["https://rdap.uk.example/"]],
                     [["co.uk"], ["http://co.uk.example/rdap", "https://rdap.co.uk.example/rdap"]],
                     [["com", "NET"], ["https://rdap.verisign.example/com/v1/"]]]}"#;

    #[test]
    fn the_longest_domain_suffix_wins_and_https_is_preferred() {
        let bootstrap = Bootstrap::parse(DNS.as_bytes(), "dns.json").unwrap();
        let server = |name: &str| bootstrap.server_for_domain(name).unwrap();
        assert_eq!(
            server("www.shop.co.uk"),
            ("https://rdap.co.uk.example/rdap/".into(), 2)
        );
        assert_eq!(server("bbc.uk."), ("https://rdap.uk.example/".into(), 1));
        assert_eq!(
            server("novels.net"),
            ("https://rdap.verisign.example/com/v1/".into(), 1)
        );
        assert_eq!(bootstrap.server_for_domain("novels.test"), None);
    }

    #[test]
    fn the_longest_address_prefix_wins() {
        let ipv4 = r#"{"services": [[["104.0.0.0/8"], ["https://arin.example/"]],
            [["104.16.0.0/12", "198.51.100.0/24"], ["https://cdn-registry.example/"]]]}"#;
        let bootstrap = Bootstrap::parse(ipv4.as_bytes(), "ipv4.json").unwrap();
        let server = |ip: &str| bootstrap.server_for_address(ip.parse().unwrap());
        assert_eq!(
            server("104.17.2.3").as_deref(),
            Some("https://cdn-registry.example/")
        );
        assert_eq!(
            server("104.200.0.1").as_deref(),
            Some("https://arin.example/")
        );
        assert_eq!(server("8.8.8.8"), None);
        assert_eq!(server("2001:db8::1"), None);
    }

    #[test]
    fn malformed_files_are_config_errors() {
        for bad in [
            "",
            "{}",
            r#"{"services": [["com"]]}"#,
            r#"{"services": [[[1], []]]}"#,
        ] {
            let error = Bootstrap::parse(bad.as_bytes(), "dns.json").unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Config, "{bad}");
            assert!(error.to_string().contains("dns.json"), "{error}");
        }
    }

    #[test]
    fn ranges_are_shown_as_cidr_when_they_are_one_prefix() {
        let cidr =
            |start: &str, end: &str| range_as_cidr(start.parse().unwrap(), end.parse().unwrap());
        assert_eq!(
            cidr("104.16.0.0", "104.31.255.255").as_deref(),
            Some("104.16.0.0/12")
        );
        assert_eq!(
            cidr("203.0.113.7", "203.0.113.7").as_deref(),
            Some("203.0.113.7/32")
        );
        assert_eq!(cidr("104.16.0.0", "104.16.0.10"), None);
        assert_eq!(
            cidr("2606:4700::", "2606:4700:ffff:ffff:ffff:ffff:ffff:ffff").as_deref(),
            Some("2606:4700::/32")
        );
    }
}
