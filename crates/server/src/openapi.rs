//! The OpenAPI document of the JSON API: hand-written (`openapi.json`), embedded,
//! served at `/api/v1/openapi.json`, and held to the router by a test.

/// The document, as served.
pub const DOCUMENT: &str = include_str!("openapi.json");
