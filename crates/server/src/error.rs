//! The one place where an [`ErrorKind`] becomes an HTTP status. Handlers return
//! core errors; this module turns them into `{"error": {"code", "message"}}`
//! bodies. Client errors (4xx) carry the message that says what was wrong;
//! server errors (5xx) are logged in full and answered with a generic message,
//! so backend details never leak to callers.

use axum::Json;
use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use copyhound_core::{Error, ErrorKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// Returns the HTTP status of an error kind: the only such mapping in the server.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::InvalidInput => StatusCode::BAD_REQUEST,
        ErrorKind::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorKind::Blocked => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorKind::Transient => StatusCode::BAD_GATEWAY,
        ErrorKind::Corrupt | ErrorKind::Config | ErrorKind::Internal => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
}

/// Code of a `405` answer: the path exists, the method does not.
pub const METHOD_NOT_ALLOWED_CODE: &str = "method_not_allowed";

/// Body of every error answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// The stable code and the message of an error.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable code (`not_found`, `invalid_input`, ...); branch on this.
    #[schema(schema_with = error_code_schema)]
    pub code: &'static str,
    /// What was wrong (4xx), or a generic message (5xx; the server log has details).
    pub message: String,
}

impl ErrorBody {
    /// Returns the body of an error with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            error: ErrorDetail {
                code,
                message: message.into(),
            },
        }
    }
}

/// Returns the schema of error codes: every kind's code, and `method_not_allowed`.
fn error_code_schema() -> Schema {
    let mut codes: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.code()).collect();
    codes.push(METHOD_NOT_ALLOWED_CODE);
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(codes))
        .into()
}

/// A core error on its way to becoming an HTTP response.
#[derive(Debug)]
pub struct ApiError(pub Error);

/// Result of handlers.
pub type ApiResult<T> = std::result::Result<T, ApiError>;

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        Self(error)
    }
}

impl ApiError {
    /// Returns an `InvalidInput` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self(Error::invalid(message))
    }

    /// Returns the status and the stable code and message of the body.
    pub fn parts(&self) -> (StatusCode, &'static str, String) {
        let kind = self.0.kind();
        let status = status_of(kind);
        let message = if status.is_server_error() {
            match kind {
                ErrorKind::Unavailable => "a backend is unavailable; retry later".to_string(),
                ErrorKind::Timeout => "a backend timed out; retry later".to_string(),
                ErrorKind::Transient => "a remote failed transiently; retry later".to_string(),
                _ => "internal error; the server log has details".to_string(),
            }
        } else {
            self.0.message().to_string()
        };
        (status, kind.code(), message)
    }

    /// Converts an axum extractor rejection (status + text) into an API error.
    pub fn from_rejection(status: StatusCode, text: String) -> Self {
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            return Self(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "request body is larger than the upload limit of this route (server.max_upload_bytes for works, {} KiB for other routes)",
                    crate::routes::MAX_BODY_BYTES >> 10
                ),
            ));
        }
        Self(Error::invalid(text.to_lowercase()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = self.parts();
        if status.is_server_error() {
            tracing::error!(code, error = %self.0, source = ?std::error::Error::source(&self.0), "request failed");
        } else {
            tracing::debug!(code, error = %self.0, "request refused");
        }
        let mut response = (status, Json(ErrorBody::new(code, message))).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECONDS),
            );
        }
        response
    }
}

/// `Retry-After` of 503 answers (a backend down, the upload pool full), seconds.
pub const RETRY_AFTER_SECONDS: &str = "5";

/// A JSON body whose rejections are API errors (400 with the reason, 413 past the limit).
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// Parses a JSON body already read as bytes (a handler that checks the path's
/// resource first), with `ApiJson`'s content-type rule and errors.
pub fn json_from_bytes<T: DeserializeOwned>(
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> Result<T, ApiError> {
    let json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| {
            let media = media.trim();
            media == "application/json" || media.ends_with("+json")
        });
    if !json {
        return Err(json_rejection(JsonRejection::MissingJsonContentType(
            Default::default(),
        )));
    }
    Json::<T>::from_bytes(body)
        .map(|Json(value)| value)
        .map_err(json_rejection)
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match &rejection {
        JsonRejection::MissingJsonContentType(_) => {
            ApiError::invalid("expected a JSON body with `Content-Type: application/json`")
        }
        _ => ApiError::from_rejection(rejection.status(), rejection.body_text()),
    }
}

/// A query string whose rejections are API errors.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(query_rejection(rejection)),
        }
    }
}

fn query_rejection(rejection: QueryRejection) -> ApiError {
    ApiError::from_rejection(rejection.status(), rejection.body_text())
}

/// Path parameters whose rejections are API errors.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Self(value)),
            Err(rejection) => Err(path_rejection(rejection)),
        }
    }
}

fn path_rejection(rejection: PathRejection) -> ApiError {
    ApiError::from_rejection(StatusCode::BAD_REQUEST, rejection.body_text())
}

/// A raw body (uploads) whose rejections are API errors.
#[derive(Debug)]
pub struct ApiBytes(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for ApiBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(request, state).await {
            Ok(bytes) => Ok(Self(bytes)),
            Err(rejection) => Err(bytes_rejection(rejection)),
        }
    }
}

fn bytes_rejection(rejection: BytesRejection) -> ApiError {
    ApiError::from_rejection(rejection.status(), rejection.body_text())
}

/// Parses an id from a path or query value, naming the parameter on failure.
pub fn parse_id<T>(name: &str, raw: &str) -> ApiResult<T>
where
    T: std::str::FromStr<Err = Error>,
{
    raw.parse::<T>()
        .map_err(|error| ApiError::invalid(format!("`{name}`: {}", error.message())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_status_and_client_errors_keep_their_message() {
        for kind in ErrorKind::ALL {
            let (status, code, message) = ApiError(Error::new(kind, "work w1 not found")).parts();
            assert_eq!(code, kind.code());
            assert_eq!(status, status_of(kind));
            if status.is_client_error() {
                assert_eq!(message, "work w1 not found");
            } else {
                assert!(!message.contains("w1"), "{message}");
            }
        }
        assert_eq!(status_of(ErrorKind::NotFound), StatusCode::NOT_FOUND);
        assert_eq!(
            status_of(ErrorKind::TooLarge),
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }
}
