//! Telling a CDN in front of a site: by the network holding its address (the
//! RDAP network name and organization of the big CDN operators) or by the
//! response header fields the CDN adds to every page the crawler stored.
//! A CDN hides the origin host; its abuse channel forwards complaints to it.

/// A CDN operator: how to recognise it and where to complain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CdnOperator {
    /// Display name.
    pub name: &'static str,
    /// Lower-case fragments of RDAP network names or organizations that are
    /// this operator's edge networks.
    pub network_names: &'static [&'static str],
    /// Header fields only this operator sets: (lower-case name, lower-case
    /// fragment of the value, empty for any value).
    pub headers: &'static [(&'static str, &'static str)],
    /// The abuse address the operator publishes (empty: none known here;
    /// the network's RDAP abuse contact serves).
    pub abuse_email: &'static str,
    /// The abuse form the operator publishes (empty: none known here).
    pub abuse_url: &'static str,
}

/// The CDN operators recognised. Plain hosting networks (a cloud's compute
/// ranges) are not here: a site there is hosted, not fronted.
pub const CDN_OPERATORS: &[CdnOperator] = &[
    CdnOperator {
        name: "Cloudflare",
        network_names: &["cloudflarenet", "cloudflare"],
        headers: &[("cf-ray", ""), ("server", "cloudflare")],
        abuse_email: "abuse@cloudflare.com",
        abuse_url: "https://abuse.cloudflare.com/",
    },
    CdnOperator {
        name: "Akamai",
        network_names: &["akamai"],
        headers: &[("server", "akamaighost"), ("x-akamai-transformed", "")],
        abuse_email: "abuse@akamai.com",
        abuse_url: "",
    },
    CdnOperator {
        name: "Fastly",
        network_names: &["fastly"],
        headers: &[("x-fastly-request-id", ""), ("fastly-debug-digest", "")],
        abuse_email: "abuse@fastly.com",
        abuse_url: "",
    },
    CdnOperator {
        name: "Amazon CloudFront",
        network_names: &["amazon-cf", "cloudfront"],
        headers: &[
            ("x-amz-cf-id", ""),
            ("x-amz-cf-pop", ""),
            ("via", "cloudfront"),
        ],
        abuse_email: "abuse@amazonaws.com",
        abuse_url: "",
    },
    CdnOperator {
        name: "Imperva",
        network_names: &["incapsula", "imperva"],
        headers: &[
            ("x-iinfo", ""),
            ("x-cdn", "imperva"),
            ("x-cdn", "incapsula"),
        ],
        abuse_email: "",
        abuse_url: "",
    },
    CdnOperator {
        name: "Sucuri",
        network_names: &["sucuri"],
        headers: &[("x-sucuri-id", "")],
        abuse_email: "",
        abuse_url: "",
    },
];

/// Returns the operator whose edge network `names` (network name, handle,
/// organization) belong to, and the name that matched.
pub fn by_network<'a>(names: &[&'a str]) -> Option<(&'static CdnOperator, &'a str)> {
    CDN_OPERATORS.iter().find_map(|operator| {
        names
            .iter()
            .find(|name| {
                let name = name.to_ascii_lowercase();
                operator
                    .network_names
                    .iter()
                    .any(|fragment| name.contains(fragment))
            })
            .map(|name| (operator, *name))
    })
}

/// Returns the operator whose header fields a response carries, and the field.
pub fn by_headers(headers: &[(String, String)]) -> Option<(&'static CdnOperator, String)> {
    CDN_OPERATORS.iter().find_map(|operator| {
        headers.iter().find_map(|(name, value)| {
            let name = name.to_ascii_lowercase();
            let value = value.to_ascii_lowercase();
            operator
                .headers
                .iter()
                .any(|(field, fragment)| name == *field && value.contains(fragment))
                .then_some((operator, name))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn operators_are_told_by_their_header_fields() {
        let cases = [
            (
                headers(&[("CF-RAY", "8a1b2c3d4e5f-HKG")]),
                Some("Cloudflare"),
            ),
            (headers(&[("Server", "cloudflare")]), Some("Cloudflare")),
            (
                headers(&[("X-Amz-Cf-Id", "abc==")]),
                Some("Amazon CloudFront"),
            ),
            (
                headers(&[("Via", "1.1 abc.cloudfront.net (CloudFront)")]),
                Some("Amazon CloudFront"),
            ),
            (headers(&[("Server", "AkamaiGHost")]), Some("Akamai")),
            (headers(&[("X-Fastly-Request-ID", "1")]), Some("Fastly")),
            (
                headers(&[("Server", "nginx"), ("Via", "1.1 varnish")]),
                None,
            ),
            (headers(&[("X-Served-By", "cache-hkg17920-HKG")]), None),
        ];
        for (fields, expected) in cases {
            let found = by_headers(&fields).map(|(operator, _)| operator.name);
            assert_eq!(found, expected, "{fields:?}");
        }
    }

    #[test]
    fn operators_are_told_by_their_network_names() {
        let found = by_network(&["CLOUDFLARENET", "Cloudflare, Inc."]).unwrap();
        assert_eq!((found.0.name, found.1), ("Cloudflare", "CLOUDFLARENET"));
        assert_eq!(by_network(&["AMAZON-02", "Amazon.com, Inc."]), None);
        assert_eq!(
            by_network(&["EXAMPLE-HOSTING", "Example Hosting Ltd"]),
            None
        );
    }
}
