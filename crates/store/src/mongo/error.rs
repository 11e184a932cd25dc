//! The one place where MongoDB driver errors become core errors.

use copyhound_core::{Error, ErrorKind};
use mongodb::error::{Error as MongoError, ErrorKind as MongoKind, WriteFailure};

/// Duplicate key: a unique index (or `_id`) already holds the key.
pub(crate) const DUPLICATE_KEY: i32 = 11000;
/// The collection or database does not exist.
pub(crate) const NAMESPACE_NOT_FOUND: i32 = 26;
/// The collection exists already.
pub(crate) const NAMESPACE_EXISTS: i32 = 48;
/// Server code of `dropIndexes` for an index that does not exist.
pub(crate) const INDEX_NOT_FOUND: i32 = 27;
/// A document failed the collection's validator.
const DOCUMENT_VALIDATION_FAILURE: i32 = 121;
/// A document exceeds the 16 MiB limit.
const OBJECT_TOO_LARGE: i32 = 10334;

/// Returns the server error code of a command or single write error.
pub(crate) fn server_code(error: &MongoError) -> Option<i32> {
    match error.kind.as_ref() {
        MongoKind::Command(command) => Some(command.code),
        MongoKind::Write(WriteFailure::WriteError(write)) => Some(write.code),
        MongoKind::Write(WriteFailure::WriteConcernError(concern)) => Some(concern.code),
        MongoKind::InsertMany(insert) => insert
            .write_errors
            .as_ref()
            .and_then(|errors| errors.first())
            .map(|first| first.code),
        _ => None,
    }
}

/// Returns whether the error is a duplicate key.
pub(crate) fn is_duplicate_key(error: &MongoError) -> bool {
    server_code(error) == Some(DUPLICATE_KEY)
}

fn kind_of(error: &MongoError) -> ErrorKind {
    if error.contains_label("RetryableWriteError")
        || error.contains_label("TransientTransactionError")
    {
        return ErrorKind::Unavailable;
    }
    match error.kind.as_ref() {
        MongoKind::ServerSelection { .. }
        | MongoKind::Io(_)
        | MongoKind::ConnectionPoolCleared { .. }
        | MongoKind::DnsResolve { .. }
        | MongoKind::Shutdown => ErrorKind::Unavailable,
        MongoKind::InvalidArgument { .. } | MongoKind::BsonSerialization(_) => {
            ErrorKind::InvalidInput
        }
        MongoKind::BsonDeserialization(_) | MongoKind::InvalidResponse { .. } => ErrorKind::Corrupt,
        MongoKind::Authentication { .. } => ErrorKind::Config,
        _ => match server_code(error) {
            Some(DUPLICATE_KEY) => ErrorKind::Conflict,
            Some(NAMESPACE_NOT_FOUND) => ErrorKind::NotFound,
            Some(DOCUMENT_VALIDATION_FAILURE) | Some(2) | Some(9) => ErrorKind::InvalidInput,
            Some(OBJECT_TOO_LARGE) => ErrorKind::TooLarge,
            // HostUnreachable, HostNotFound, NetworkTimeout, ShutdownInProgress,
            // PrimarySteppedDown, NotWritablePrimary, NotPrimaryOrSecondary, ...
            Some(6 | 7 | 89 | 91 | 189 | 10107 | 11600 | 11602 | 13435 | 13436) => {
                ErrorKind::Unavailable
            }
            Some(50) => ErrorKind::Timeout,
            _ => ErrorKind::Internal,
        },
    }
}

/// Translates a driver error into a core error (with the driver error as source).
pub(crate) fn mongo_error(error: MongoError) -> Error {
    let kind = kind_of(&error);
    Error::with_source(
        kind,
        format!("mongodb: {}", first_line(&error.to_string())),
        error,
    )
}

fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}
