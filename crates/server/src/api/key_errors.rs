//! The 401 and 403 answers of authenticated routes, written once for the
//! OpenAPI document: a handler's `#[utoipa::path(responses(...))]` names one of
//! these types instead of repeating the two responses.

use std::collections::BTreeMap;

use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{IntoResponses, ToSchema};

use crate::error::ErrorBody;

/// What the 401 of every authenticated route says.
const UNAUTHORIZED: &str = "Missing, malformed, unknown or revoked key";

/// Returns the responses: 401, and 403 with `forbidden` when the route has one.
fn key_errors(forbidden: Option<&str>) -> BTreeMap<String, RefOr<Response>> {
    let error = |description: &str| {
        let content = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(ErrorBody::name())))
            .build();
        RefOr::T(
            ResponseBuilder::new()
                .description(description)
                .content("application/json", content)
                .build(),
        )
    };
    let mut responses = BTreeMap::from([("401".to_string(), error(UNAUTHORIZED))]);
    if let Some(forbidden) = forbidden {
        responses.insert("403".to_string(), error(forbidden));
    }
    responses
}

macro_rules! key_errors {
    ($($(#[$doc:meta])* $name:ident => $forbidden:expr;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub struct $name;

            impl IntoResponses for $name {
                fn responses() -> BTreeMap<String, RefOr<Response>> {
                    key_errors($forbidden)
                }
            }
        )*
    };
}

key_errors! {
    /// Any valid key: 401 only.
    AnyKey => None;
    /// A key of a publisher (the operator key acts for none): 401, 403.
    PublisherKey => Some("The operator key acts for no publisher");
    /// An admin key of a publisher: 401, 403.
    PublisherAdminKey => Some("Not an admin key of a publisher");
    /// An admin key (the operator's or a publisher's): 401, 403.
    AdminKey => Some("Not an admin key");
    /// The operator key: 401, 403.
    OperatorKey => Some("Not the operator key");
}
