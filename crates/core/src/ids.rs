//! Identifiers are opaque strings with a short type prefix, so an id pasted into the
//! wrong place (a page id where a work id belongs) is visible in logs and rejected
//! by parsing. Ids that follow from a natural key (a page's URL, a match's page +
//! chapter + fingerprint version) are derived from it, which makes every write of
//! the same thing land on the same document: that is what keeps retried tasks
//! idempotent.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind};

/// Longest accepted id, in bytes; anything longer is malformed input.
pub const MAX_ID_LEN: usize = 128;

/// The id rule as a regular expression (ECMA-262 and Python alike), as the
/// OpenAPI document states it: 1 to [`MAX_ID_LEN`] ASCII letters, digits, `_`, `-`, `.`.
pub const ID_PATTERN: &str = "^[A-Za-z0-9_.-]{1,128}$";

/// Returns the lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

fn validate_id(type_name: &str, value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{type_name} is empty"),
        ));
    }
    if value.len() > MAX_ID_LEN {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{type_name} is longer than {MAX_ID_LEN} bytes"),
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if let Some(bad) = value.chars().find(|c| !allowed(*c)) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{type_name} `{value}` contains `{bad}`; ids use ASCII letters, digits, `_`, `-`, `.`"
            ),
        ));
    }
    Ok(())
}

/// Returns the schema every id type shares: a string under [`ID_PATTERN`].
#[cfg(feature = "openapi")]
fn id_schema(description: &str) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_ID_LEN))
        .pattern(Some(ID_PATTERN))
        .description(Some(description))
        .into()
}

macro_rules! define_id {
    ($(#[$meta:meta])* $name:ident, $prefix:literal) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// The prefix of generated ids of this type.
            pub const PREFIX: &'static str = $prefix;

            /// Returns a new random, time-ordered id.
            pub fn generate() -> Self {
                Self(format!("{}{}", $prefix, uuid::Uuid::now_v7().simple()))
            }

            /// Returns the id derived from a natural key: equal keys give equal ids.
            pub fn derive_from(natural_key: &str) -> Self {
                Self(format!("{}{}", $prefix, &sha256_hex(natural_key.as_bytes())[..32]))
            }

            /// Returns the id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(value: &str) -> Result<Self, Error> {
                validate_id(stringify!($name), value)?;
                Ok(Self(value.to_string()))
            }
        }

        impl TryFrom<String> for $name {
            type Error = Error;
            fn try_from(value: String) -> Result<Self, Error> {
                validate_id(stringify!($name), &value)?;
                Ok(Self(value))
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                id_schema(concat!(
                    stringify!($name),
                    ": ASCII letters, digits, `_`, `-`, `.`; generated ids start with `",
                    $prefix,
                    "`"
                ))
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

define_id!(
    /// A publisher (tenant): a novel platform or a news agency.
    PublisherId,
    "pub_"
);
define_id!(
    /// A registered work; publishers may bring their own (`w417`).
    WorkId,
    "w_"
);
define_id!(
    /// A chapter, unique within its work.
    ChapterId,
    "c_"
);
define_id!(
    /// A watched site.
    SiteId,
    "site_"
);
define_id!(
    /// One crawl of a site.
    CrawlRunId,
    "run_"
);
define_id!(
    /// A crawled page, derived from its normalized URL.
    PageId,
    "pg_"
);
define_id!(
    /// A match, derived from its owner + page + work + chapter + fingerprint version.
    MatchId,
    "m_"
);
define_id!(
    /// A queued task, derived from its idempotency key.
    TaskId,
    "t_"
);
define_id!(
    /// A generated report.
    ReportId,
    "rep_"
);
define_id!(
    /// An API key record (the key itself is never stored).
    ApiKeyId,
    "key_"
);

impl PageId {
    /// Returns the id of the page at `normalized_url`.
    pub fn for_url(normalized_url: &str) -> Self {
        Self::derive_from(normalized_url)
    }
}

impl MatchId {
    /// Returns the id of the match of `page` against a chapter of `owner`'s work
    /// under a fingerprint version. The owner is part of the id so that a work id
    /// reused by another publisher never lands on the first one's match.
    pub fn for_pair(
        owner: &PublisherId,
        page: &PageId,
        work: &WorkId,
        chapter: &ChapterId,
        fingerprint_version: u32,
    ) -> Self {
        Self::derive_from(&format!(
            "{owner}\u{1f}{page}\u{1f}{work}\u{1f}{chapter}\u{1f}{fingerprint_version}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        let a = PageId::for_url("http://127.0.0.1:8001/a.html");
        assert_eq!(a, PageId::for_url("http://127.0.0.1:8001/a.html"));
        assert_ne!(a, PageId::for_url("http://127.0.0.1:8001/b.html"));
        assert!(a.as_str().starts_with("pg_"));
        // Golden value: persisted ids must never change between builds.
        assert_eq!(a.as_str(), "pg_f4921b84f8ea960669111dd68c5840af");
    }

    #[test]
    fn match_ids_carry_their_owner() {
        let page = PageId::for_url("http://127.0.0.1:8001/a.html");
        let (work, chapter) = ("w1".parse().unwrap(), "c1".parse().unwrap());
        let of =
            |owner: &str| MatchId::for_pair(&owner.parse().unwrap(), &page, &work, &chapter, 1);
        assert_ne!(of("pub_a"), of("pub_b"));
        assert_eq!(of("pub_a"), of("pub_a"));
    }

    #[test]
    fn malformed_ids_are_rejected_with_the_reason() {
        let err = "w 1".parse::<WorkId>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains("contains ` `"), "{err}");
        assert!("".parse::<WorkId>().is_err());
        assert!("x".repeat(200).parse::<WorkId>().is_err());
        assert_eq!("w417".parse::<WorkId>().unwrap().as_str(), "w417");
        assert!(serde_json::from_str::<WorkId>("\"a/b\"").is_err());
    }

    #[test]
    fn the_documented_pattern_is_the_rule() {
        let samples = ["w417", "a.b-c_d", "", "a b", "a/b", "é", "x"];
        for sample in samples {
            let pattern_ok = !sample.is_empty()
                && sample.len() <= MAX_ID_LEN
                && sample
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            assert_eq!(sample.parse::<WorkId>().is_ok(), pattern_ok, "{sample}");
        }
        assert_eq!(ID_PATTERN, format!("^[A-Za-z0-9_.-]{{1,{MAX_ID_LEN}}}$"));
    }

    #[test]
    fn generated_ids_have_the_prefix_and_are_unique() {
        let a = SiteId::generate();
        let b = SiteId::generate();
        assert_ne!(a, b);
        assert!(a.as_str().starts_with("site_"));
        a.as_str().parse::<SiteId>().unwrap();
    }
}
