//! Issuing API keys. A key reads `chk_<key id>_<secret>`: the key id finds the
//! stored record, and only the SHA-256 of the secret is stored, so a leaked
//! database does not leak working keys. The API (`POST
//! /admin/publishers/{id}/keys`) and the CLI (`copyhound keys create`) both
//! mint keys here; the server checks presented keys against the record.

use chrono::Utc;
use rand::RngCore;

use crate::ids::{ApiKeyId, PublisherId, sha256_hex};
use crate::model::{ApiKey, Role};

/// Prefix of every issued key.
pub const KEY_PREFIX: &str = "chk_";

/// A freshly issued key: the record to store and the key to show once.
#[derive(Clone, Debug)]
pub struct IssuedKey {
    /// The record (hash only).
    pub record: ApiKey,
    /// The full key, `chk_<key id>_<secret>`.
    pub key: String,
}

/// Returns a new key for `publisher_id` with `role`: a 256-bit random secret,
/// of which the record keeps only the SHA-256.
pub fn issue_key(publisher_id: PublisherId, role: Role) -> IssuedKey {
    let mut secret_bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut secret_bytes);
    let secret: String = secret_bytes
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let id = ApiKeyId::generate();
    let key = format!("{KEY_PREFIX}{id}_{secret}");
    let record = ApiKey {
        id,
        publisher_id,
        secret_sha256: sha256_hex(secret.as_bytes()),
        role,
        created_at: Utc::now(),
        revoked: false,
        name: None,
    };
    IssuedKey { record, key }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_key_names_its_record_and_keeps_only_the_hash() {
        let issued = issue_key("pub_a".parse().expect("valid id"), Role::Publisher);
        let rest = issued
            .key
            .strip_prefix(&format!("{KEY_PREFIX}{}_", issued.record.id))
            .expect("the key starts with its id");
        assert_eq!(rest.len(), 64);
        assert_eq!(sha256_hex(rest.as_bytes()), issued.record.secret_sha256);
        assert!(!issued.record.secret_sha256.contains(rest));
        assert!(!issued.record.revoked);
    }
}
