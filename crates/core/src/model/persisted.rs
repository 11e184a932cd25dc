use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, ErrorKind, Result};

/// The field that carries a stored document's schema version.
pub const SCHEMA_VERSION_FIELD: &str = "schema_version";

/// A type stored by a backend. The stored document is the serde JSON form plus
/// `schema_version`; reading a document written by a newer build is refused
/// (never silently misread), an older one goes through [`Persisted::upgrade`].
pub trait Persisted: Serialize + DeserializeOwned {
    /// The name of the kind, used in messages and collection names.
    const KIND: &'static str;
    /// The schema version this build writes.
    const SCHEMA_VERSION: u32;

    /// Rewrites a document of an older `version` into the current shape.
    fn upgrade(version: u32, document: serde_json::Value) -> Result<serde_json::Value> {
        let _ = document;
        Err(Error::new(
            ErrorKind::Corrupt,
            format!(
                "{} schema version {version} has no upgrade path",
                Self::KIND
            ),
        ))
    }

    /// Returns the stored form: a JSON object with `schema_version`.
    fn to_document(&self) -> Result<serde_json::Value> {
        let mut document = serde_json::to_value(self).map_err(encode_error::<Self>)?;
        let Some(object) = document.as_object_mut() else {
            return Err(not_an_object::<Self>());
        };
        object.insert(
            SCHEMA_VERSION_FIELD.to_string(),
            Self::SCHEMA_VERSION.into(),
        );
        Ok(document)
    }

    /// The stored form as JSON bytes, written in one pass (no document
    /// tree: for a fingerprint record's hundreds of numbers the tree cost
    /// more than the JSON); `schema_version` goes last.
    fn to_document_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec(self).map_err(encode_error::<Self>)?;
        if bytes.first() != Some(&b'{') || bytes.pop() != Some(b'}') {
            return Err(not_an_object::<Self>());
        }
        if bytes.len() > 1 {
            bytes.push(b',');
        }
        bytes.extend_from_slice(
            format!("\"{SCHEMA_VERSION_FIELD}\":{}}}", Self::SCHEMA_VERSION).as_bytes(),
        );
        Ok(bytes)
    }

    /// Decodes a stored document, upgrading older schema versions.
    fn from_document(mut document: serde_json::Value) -> Result<Self> {
        let Some(object) = document.as_object_mut() else {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("stored {} is not an object", Self::KIND),
            ));
        };
        let version = object
            .remove(SCHEMA_VERSION_FIELD)
            .and_then(|value| value.as_u64())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Corrupt,
                    format!("stored {} has no schema_version", Self::KIND),
                )
            })?;
        let version = u32::try_from(version).unwrap_or(u32::MAX);
        if version > Self::SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "stored {} has schema version {version}, newer than this build's {}; upgrade copyhound",
                    Self::KIND,
                    Self::SCHEMA_VERSION
                ),
            ));
        }
        let current = if version < Self::SCHEMA_VERSION {
            Self::upgrade(version, document)?
        } else {
            document
        };
        serde_json::from_value(current).map_err(|error| {
            Error::with_source(
                ErrorKind::Corrupt,
                format!("stored {} cannot be decoded", Self::KIND),
                error,
            )
        })
    }
}

fn encode_error<T: Persisted>(error: serde_json::Error) -> Error {
    Error::with_source(
        ErrorKind::Internal,
        format!("failed to encode {}", T::KIND),
        error,
    )
}

fn not_an_object<T: Persisted>() -> Error {
    Error::internal(format!("{} does not encode as an object", T::KIND))
}

/// Implements [`Persisted`] at version 1 for types that have never changed shape.
macro_rules! persisted_v1 {
    ($($ty:ty => $kind:literal),* $(,)?) => {
        $(impl $crate::model::Persisted for $ty {
            const KIND: &'static str = $kind;
            const SCHEMA_VERSION: u32 = 1;
        })*
    };
}
pub(crate) use persisted_v1;
