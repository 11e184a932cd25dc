use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{ApiKeyId, PublisherId};

/// What a publisher publishes; it picks the defaults for works it registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PublisherKind {
    /// A novel platform or book publisher.
    Books,
    /// A news agency.
    News,
}

/// A tenant: everything it registers and everything found for it is visible to it alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Publisher {
    /// Its id.
    pub id: PublisherId,
    /// Display name.
    pub name: String,
    /// What it publishes.
    pub kind: PublisherKind,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
}

/// What an API key may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Acts within its publisher only.
    Publisher,
    /// Also administers its publisher's keys (never another publisher's; only the
    /// operator's configured key administers the installation).
    Admin,
}

/// An API key record. The key is shown once at creation; only its hash is kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKey {
    /// Its id (also the public prefix of the key).
    pub id: ApiKeyId,
    /// The tenant it acts for.
    pub publisher_id: PublisherId,
    /// SHA-256 of the secret part, hex.
    pub secret_sha256: String,
    /// What it may do.
    pub role: Role,
    /// When it was created.
    pub created_at: Timestamp,
    /// Revoked keys authenticate nobody.
    pub revoked: bool,
}

super::persisted::persisted_v1!(Publisher => "publisher", ApiKey => "api_key");
