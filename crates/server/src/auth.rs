//! API keys and who is calling. A key reads `chk_<key id>_<secret>`: the key id
//! finds the stored record, and only the SHA-256 of the secret is stored, so a
//! leaked database does not leak working keys. The configured bootstrap admin key
//! is compared as is (it lives in the operator's config, not in the store).
//!
//! Every publisher-scoped handler takes a [`PublisherCaller`]; the publisher id in
//! it is the only tenant a handler ever reads or writes.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
pub use copyhound_core::api_keys::{IssuedKey, KEY_PREFIX, issue_key};
use copyhound_core::ids::{ApiKeyId, PublisherId, sha256_hex};
use copyhound_core::model::{ApiKey, Role};
use copyhound_core::{Error, ErrorKind, Result};

use crate::AppState;
use crate::error::ApiError;

/// Key id reported for the bootstrap admin key of the configuration.
pub const BOOTSTRAP_ADMIN_ID: &str = "config-admin";

/// An authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The key id (audit trail `by`), or [`BOOTSTRAP_ADMIN_ID`].
    pub key_id: String,
    /// What the key may do.
    pub role: Role,
    /// The tenant the key acts for; `None` for the bootstrap admin key.
    pub publisher_id: Option<PublisherId>,
    /// Who holds the key, when its creator named them.
    pub name: Option<String>,
}

/// Splits `chk_<key id>_<secret>` into the key id and the secret.
pub fn parse_key(key: &str) -> Result<(ApiKeyId, &str)> {
    let malformed = || {
        Error::new(
            ErrorKind::Unauthorized,
            "malformed api key: expected chk_<key id>_<secret>",
        )
    };
    let rest = key.strip_prefix(KEY_PREFIX).ok_or_else(malformed)?;
    let (id, secret) = rest.rsplit_once('_').ok_or_else(malformed)?;
    if secret.len() != 64 || !secret.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err(malformed());
    }
    let id = id.parse::<ApiKeyId>().map_err(|_| malformed())?;
    Ok((id, secret))
}

fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    if left.len() != right.len() {
        return false;
    }
    left.iter()
        .zip(right)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// Returns the caller a presented key authenticates, or `Unauthorized`.
pub async fn authenticate(state: &AppState, presented: &str) -> Result<Caller> {
    let admin_key = state.config.admin_key.as_deref().unwrap_or_default();
    if !admin_key.is_empty() && constant_time_eq(admin_key.as_bytes(), presented.as_bytes()) {
        return Ok(operator());
    }
    let (id, secret) = parse_key(presented)?;
    let record = live_key(state, &id).await?;
    let hash = sha256_hex(secret.as_bytes());
    if !constant_time_eq(hash.as_bytes(), record.secret_sha256.as_bytes()) {
        return Err(invalid_key());
    }
    Ok(caller_of(record))
}

/// Returns the caller of a key id a console session recorded at login, or
/// `Unauthorized` once the key is revoked (or the operator key unset).
pub async fn authenticate_key_id(state: &AppState, key_id: &str) -> Result<Caller> {
    if key_id == BOOTSTRAP_ADMIN_ID {
        let configured = state
            .config
            .admin_key
            .as_deref()
            .is_some_and(|key| !key.is_empty());
        return if configured {
            Ok(operator())
        } else {
            Err(invalid_key())
        };
    }
    let id = key_id.parse::<ApiKeyId>().map_err(|_| invalid_key())?;
    Ok(caller_of(live_key(state, &id).await?))
}

fn invalid_key() -> Error {
    Error::new(ErrorKind::Unauthorized, "invalid or revoked api key")
}

fn operator() -> Caller {
    Caller {
        key_id: BOOTSTRAP_ADMIN_ID.to_string(),
        role: Role::Admin,
        publisher_id: None,
        name: None,
    }
}

/// Returns the stored record of a key that is not revoked.
async fn live_key(state: &AppState, id: &ApiKeyId) -> Result<ApiKey> {
    match state.ports.publishers.get_api_key(id).await {
        Ok(record) if !record.revoked => Ok(record),
        Ok(_) => Err(invalid_key()),
        Err(error) if error.kind() == ErrorKind::NotFound => Err(invalid_key()),
        Err(error) => Err(error),
    }
}

fn caller_of(record: ApiKey) -> Caller {
    Caller {
        key_id: record.id.to_string(),
        role: record.role,
        publisher_id: Some(record.publisher_id),
        name: record.name,
    }
}

/// Returns the bearer token of the `Authorization` header.
fn bearer(parts: &Parts) -> Result<&str> {
    let header = parts.headers.get(AUTHORIZATION).ok_or_else(|| {
        Error::new(
            ErrorKind::Unauthorized,
            "missing `Authorization: Bearer <api key>` header",
        )
    })?;
    let value = header.to_str().map_err(|_| {
        Error::new(
            ErrorKind::Unauthorized,
            "the authorization header is not ASCII",
        )
    })?;
    value.strip_prefix("Bearer ").map(str::trim).ok_or_else(|| {
        Error::new(
            ErrorKind::Unauthorized,
            "the authorization header must read `Bearer <api key>`",
        )
    })
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let key = bearer(parts)?;
        Ok(authenticate(state, key).await?)
    }
}

/// A caller acting for one publisher: every scoped read and write uses `publisher_id`.
#[derive(Clone, Debug)]
pub struct PublisherCaller {
    /// The tenant.
    pub publisher_id: PublisherId,
    /// The key id, recorded in audit trails.
    pub key_id: String,
    /// The key's role: a publisher's admin key also edits its settings.
    pub role: Role,
    /// Who holds the key, when named.
    pub name: Option<String>,
}

impl PublisherCaller {
    /// How audit trails name the caller: `Li Wei (key_abc)`, or the key id.
    pub fn reviewer(&self) -> String {
        match &self.name {
            Some(name) => format!("{name} ({})", self.key_id),
            None => self.key_id.clone(),
        }
    }
}

impl PublisherCaller {
    /// Returns the publisher caller of an authenticated caller, or `Forbidden`.
    pub fn from_caller(caller: Caller) -> Result<Self> {
        match caller.publisher_id {
            Some(publisher_id) => Ok(Self {
                publisher_id,
                key_id: caller.key_id,
                role: caller.role,
                name: caller.name,
            }),
            None => Err(Error::new(
                ErrorKind::Forbidden,
                "the bootstrap admin key acts for no publisher; create a publisher key with \
                 POST /api/v1/admin/publishers/{publisher_id}/keys",
            )),
        }
    }
}

impl FromRequestParts<AppState> for PublisherCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state).await?;
        Ok(Self::from_caller(caller)?)
    }
}

/// What an admin caller may administer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdminScope {
    /// The operator (the configured bootstrap key): every publisher, and publishers themselves.
    Installation,
    /// A publisher's admin key: that publisher's keys only.
    Publisher(PublisherId),
}

impl AdminScope {
    /// Returns whether this scope administers `publisher_id`.
    pub fn covers(&self, publisher_id: &PublisherId) -> bool {
        match self {
            AdminScope::Installation => true,
            AdminScope::Publisher(own) => own == publisher_id,
        }
    }
}

/// A caller with the admin role, and the scope it administers.
#[derive(Clone, Debug)]
pub struct AdminCaller(pub Caller);

impl AdminCaller {
    /// Returns what this caller administers: a publisher key never reaches past its publisher.
    pub fn scope(&self) -> AdminScope {
        match &self.0.publisher_id {
            Some(publisher_id) => AdminScope::Publisher(publisher_id.clone()),
            None => AdminScope::Installation,
        }
    }

    /// Returns `NotFound` (as for a missing tenant) unless the scope covers `publisher_id`.
    pub fn check_covers(&self, publisher_id: &PublisherId) -> Result<()> {
        if self.scope().covers(publisher_id) {
            return Ok(());
        }
        Err(Error::not_found(format!("publisher {publisher_id}")))
    }

    /// Returns `Forbidden` unless this is the operator.
    pub fn require_operator(&self) -> Result<()> {
        match self.scope() {
            AdminScope::Installation => Ok(()),
            AdminScope::Publisher(_) => Err(Error::new(
                ErrorKind::Forbidden,
                "only the operator key administers the installation; a publisher's admin key \
                 administers its own publisher",
            )),
        }
    }
}

impl FromRequestParts<AppState> for AdminCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if caller.role != Role::Admin {
            return Err(Error::new(ErrorKind::Forbidden, "this route needs an admin key").into());
        }
        Ok(Self(caller))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_keys_parse_back_to_their_id_and_hash() {
        let issued = issue_key("pub_a".parse().unwrap(), Role::Publisher);
        let (id, secret) = parse_key(&issued.key).unwrap();
        assert_eq!(id, issued.record.id);
        assert_eq!(sha256_hex(secret.as_bytes()), issued.record.secret_sha256);
        assert!(!issued.record.secret_sha256.contains(secret));
    }

    #[test]
    fn malformed_keys_are_unauthorized() {
        for key in [
            "",
            "chk_",
            "abc",
            "chk_key_1_short",
            &format!("chk_bad id_{}", "a".repeat(64)),
        ] {
            assert_eq!(
                parse_key(key).unwrap_err().kind(),
                ErrorKind::Unauthorized,
                "{key}"
            );
        }
    }
}
