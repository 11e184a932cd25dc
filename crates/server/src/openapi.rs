//! The OpenAPI document of the JSON API, generated from the Rust types: every
//! handler carries a `#[utoipa::path]` annotation (its parameters, body and every
//! status it answers, errors included) and every body type derives
//! `utoipa::ToSchema`, so a field added to a type is in the document at the next
//! build. Rules the handlers enforce that a type cannot show (id characters,
//! non-blank names, lengths, cursors, time formats) are stated by the schema
//! helpers below, which use the same constants as the handlers.
//!
//! The document's paths are the handlers of the one route list
//! ([`crate::routes::with_api_handlers`]), which the router is built from too.
//! The document is served at `/api/v1/openapi.json`; tests hold it to the
//! router's route table and `docs/api.md`, and check that it is a valid
//! OpenAPI 3.1 document.

use std::sync::OnceLock;

use copyhound_core::ids::MAX_ID_LEN;
use serde_json::Value;
use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{KnownFormat, RefOr};
use utoipa::{Modify, OpenApi};

use crate::api::{
    MAX_CURSOR_LEN, admin, alerts, matches, policy, profile, releases, report_schedules, reports,
    sites, suggestions, system, works,
};

/// Characters Rust's `str::trim` removes (Unicode `White_Space`), as a regex class body.
const WHITESPACE_CLASS: &str =
    r"\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

/// Returns the pattern of a text that holds something besides whitespace
/// (what `str::trim` leaves non-empty).
pub fn non_blank_pattern() -> String {
    format!("[^{WHITESPACE_CLASS}]")
}

/// Returns the pattern of a body text that holds something besides whitespace
/// and byte-order marks (what paragraph normalization leaves non-empty).
pub fn non_blank_text_pattern() -> String {
    format!(r"[^{WHITESPACE_CLASS}\ufeff]")
}

/// The alphabet of page cursors (URL-safe base64 without padding).
pub const CURSOR_PATTERN: &str = "^[A-Za-z0-9_-]*$";

/// Returns a string schema: non-blank, at most `max_chars` characters.
pub fn non_blank(max_chars: usize) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(max_chars))
        .pattern(Some(non_blank_pattern()))
}

/// Returns a string schema of at most `max_chars` characters.
pub fn bounded(max_chars: usize) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(max_chars))
}

/// Returns `schema` that also admits `null`.
pub fn nullable(schema: impl Into<RefOr<Schema>>) -> Schema {
    AnyOfBuilder::new()
        .item(schema)
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .into()
}

/// Returns the schema of a page cursor: a `next` value of an earlier page.
pub fn cursor() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(MAX_CURSOR_LEN))
        .pattern(Some(CURSOR_PATTERN))
        .format(Some(SchemaFormat::Custom("cursor".to_string())))
        .description(Some(
            "Opaque cursor: the `next` of the previous page; empty for the first page",
        ))
}

/// Returns the schema of an optional id given as a string (a query value or a body field).
pub fn id_string() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_ID_LEN))
        .pattern(Some(copyhound_core::ids::ID_PATTERN))
}

/// Returns the schema of an RFC 3339 time.
pub fn date_time() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
}

/// Returns the schema of an RFC 3339 time or a `YYYY-MM-DD` date (midnight UTC).
pub fn date_or_time() -> Schema {
    AnyOfBuilder::new()
        .item(date_time())
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date))),
        )
        .into()
}

macro_rules! api_doc {
    ($($module:ident::$handler:ident $(($limit:ident))?),* $(,)?) => {
        /// The generated document: the handlers of [`crate::routes::with_api_handlers`].
        #[derive(Debug, OpenApi)]
        #[openapi(
            info(
                title = "CopyHound API",
                version = "1",
                description = "Text-copyright tracking. Authenticate with `Authorization: Bearer chk_<key id>_<secret>` \
                    (or the operator key). Every publisher route is scoped to the key's publisher: ids of other \
                    tenants answer 404, exactly like missing ones. Errors are `{\"error\": {\"code\", \"message\"}}` \
                    with stable codes. Generated from the server's types."
            ),
            paths($($module::$handler),*),
            security(("bearer" = [])),
            modifiers(&BearerScheme),
            tags(
                (name = "system", description = "Health, metrics, this document, the caller"),
                (name = "admin", description = "Publishers and API keys (admin keys)"),
                (name = "works", description = "Registered works, chapters and news articles"),
                (name = "sites", description = "Watched sites and their crawl runs"),
                (name = "suggestions", description = "Sites nobody listed: what watched sites and book-source files point at"),
                (name = "matches", description = "Matches, evidence and review"),
                (name = "reports", description = "Infringement reports"),
                (name = "policy", description = "When a copy counts as an infringement, per kind of work"),
            )
        )]
        pub struct ApiDoc;
    };
}

crate::routes::with_api_handlers!(api_doc);

/// Adds the `bearer` security scheme every authenticated operation names.
#[derive(Debug)]
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API key `chk_<key id>_<secret>`, or the operator key (`server.admin_key`)",
                    ))
                    .build(),
            ),
        );
    }
}

/// Returns the document as JSON.
pub fn document() -> Value {
    let mut document =
        serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI document serializes");
    open_flattened_schemas(&mut document);
    require_chapters_of_novels(&mut document);
    require_query_parameter(&mut document, "/api/v1/works/import/txt", "title");
    document
}

/// Marks a query parameter required: utoipa 6 drops `required = true` on a
/// parameter whose schema comes from `schema_with`.
fn require_query_parameter(document: &mut Value, path: &str, name: &str) {
    for operation in document["paths"][path]
        .as_object_mut()
        .into_iter()
        .flat_map(|item| item.values_mut())
    {
        for parameter in operation["parameters"].as_array_mut().into_iter().flatten() {
            if parameter["name"] == name && parameter["in"] == "query" {
                parameter["required"] = Value::Bool(true);
            }
        }
    }
}

/// Lets the schemas that answers flatten into a larger object (`Work` into
/// `WorkDetail`, `Match` into `MatchDetail`) admit the other object's fields:
/// `deny_unknown_fields` on a stored type says nothing about the answer it is
/// part of.
fn open_flattened_schemas(document: &mut Value) {
    let mut flattened = Vec::new();
    if let Some(schemas) = document["components"]["schemas"].as_object() {
        for schema in schemas.values() {
            for part in schema["allOf"].as_array().into_iter().flatten() {
                if let Some(name) = part["$ref"]
                    .as_str()
                    .and_then(|reference| reference.strip_prefix("#/components/schemas/"))
                {
                    flattened.push(name.to_string());
                }
            }
        }
    }
    for name in flattened {
        if let Some(schema) = document["components"]["schemas"][&name].as_object_mut() {
            schema.remove("additionalProperties");
        }
    }
}

/// States the one cross-field rule of `RegisterWork`: a novel (the default
/// kind) needs at least one chapter; a news work may start empty.
fn require_chapters_of_novels(document: &mut Value) {
    let Some(schema) = document["components"]["schemas"]["RegisterWork"].as_object_mut() else {
        return;
    };
    schema.insert(
        "anyOf".to_string(),
        serde_json::json!([
            { "required": ["kind"], "properties": { "kind": { "const": "news" } } },
            { "required": ["chapters"], "properties": { "chapters": { "minItems": 1 } } }
        ]),
    );
}

/// Returns the document as served (built once).
pub fn document_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        serde_json::to_string_pretty(&document()).expect("the OpenAPI document serializes")
    })
}
