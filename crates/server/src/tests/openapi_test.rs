use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::Value;

use super::Harness;
use crate::routes::api_routes;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

#[test]
fn every_route_is_documented_and_every_documented_route_exists() {
    let document = crate::openapi::document();
    let mut documented = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if METHODS.contains(&method.as_str()) {
                documented.insert((method.clone(), path.clone()));
            }
        }
    }
    assert_same_routes(&documented, "the OpenAPI document");
}

/// Asserts that `documented` (by `source`) holds exactly the router's routes.
fn assert_same_routes(documented: &BTreeSet<(String, String)>, source: &str) {
    let registered: BTreeSet<(String, String)> = api_routes()
        .entries()
        .iter()
        .map(|(method, path)| (method.to_string(), path.clone()))
        .collect();
    let undocumented: Vec<_> = registered.difference(documented).collect();
    let missing: Vec<_> = documented.difference(&registered).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from {source}: {undocumented:?}"
    );
    assert!(
        missing.is_empty(),
        "{source} has routes the router lacks: {missing:?}"
    );
}

/// Returns the (method, path) pairs of the route table in `docs/api.md`
/// (section "Routes"), methods lowercase, query strings dropped.
fn routes_in_api_md() -> BTreeSet<(String, String)> {
    let text = include_str!("../../../../docs/api.md");
    let section = text
        .split("\n## Routes\n")
        .nth(1)
        .expect("docs/api.md has a Routes section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut routes = BTreeSet::new();
    for row in section.lines().filter(|line| line.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (methods, path) = (cells[1], cells[2]);
        let Some(path) = path.strip_prefix('`').and_then(|p| p.split('`').next()) else {
            continue;
        };
        let path = path.split('?').next().unwrap_or_default();
        for method in methods.split(',') {
            routes.insert((method.trim().to_lowercase(), path.to_string()));
        }
    }
    routes
}

#[test]
fn the_route_table_of_api_md_is_the_router_s() {
    assert_same_routes(&routes_in_api_md(), "docs/api.md");
}

#[test]
fn every_documented_path_parameter_is_declared() {
    let document = crate::openapi::document();
    for (path, item) in document["paths"].as_object().unwrap() {
        let placeholders: BTreeSet<String> = path
            .split('/')
            .filter_map(|part| {
                part.strip_prefix('{')?
                    .strip_suffix('}')
                    .map(str::to_string)
            })
            .collect();
        for (method, operation) in item.as_object().unwrap() {
            let declared: BTreeSet<String> = operation["parameters"]
                .as_array()
                .map(|parameters| {
                    parameters
                        .iter()
                        .filter(|p| p["in"] == "path")
                        .map(|p| {
                            assert_eq!(p["required"], true, "{method} {path}");
                            p["name"].as_str().unwrap().to_string()
                        })
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(placeholders, declared, "{method} {path}");
        }
    }
}

/// Walks every JSON value of the document with its JSON pointer.
fn walk<'a>(value: &'a Value, pointer: String, visit: &mut dyn FnMut(&str, &'a Value)) {
    visit(&pointer, value);
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                walk(child, format!("{pointer}/{escaped}"), visit);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                walk(child, format!("{pointer}/{index}"), visit);
            }
        }
        _ => {}
    }
}

#[test]
fn the_document_is_structurally_valid() {
    let document = crate::openapi::document();
    assert!(
        document["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        document["openapi"]
    );
    let mut problems = Vec::new();
    walk(&document, String::new(), &mut |pointer, value| {
        let Value::Object(map) = value else { return };
        if let Some(required) = map.get("required").and_then(Value::as_array) {
            if required.is_empty() {
                problems.push(format!("{pointer}: empty `required`"));
            }
            let properties = map.get("properties").and_then(Value::as_object);
            for name in required {
                let name = name.as_str().unwrap_or_default();
                if properties.is_some_and(|properties| !properties.contains_key(name)) {
                    problems.push(format!("{pointer}: required `{name}` is not a property"));
                }
            }
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| document.pointer(pointer));
            if target.is_none() {
                problems.push(format!("{pointer}: `$ref` {reference} does not resolve"));
            }
        }
    });
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_operation_documents_its_errors_and_security() {
    let document = crate::openapi::document();
    let public = ["/health", "/metrics", "/api/v1/openapi.json"];
    let scheme = &document["components"]["securitySchemes"]["bearer"];
    assert_eq!(scheme["type"], "http");
    assert_eq!(scheme["scheme"], "bearer");
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            if public.contains(&path.as_str()) {
                assert_eq!(
                    operation["security"],
                    serde_json::json!([{}]),
                    "{method} {path}"
                );
                continue;
            }
            for status in ["401", "403"] {
                if path == "/api/v1/me" && status == "403" {
                    continue;
                }
                assert!(
                    responses.contains_key(status),
                    "{method} {path} lacks {status}"
                );
            }
            for (status, response) in responses {
                if status.starts_with('4') {
                    let schema = &response["content"]["application/json"]["schema"]["$ref"];
                    assert_eq!(
                        schema, "#/components/schemas/ErrorBody",
                        "{method} {path} {status}"
                    );
                }
            }
            if operation.get("requestBody").is_some() {
                assert!(responses.contains_key("413"), "{method} {path} lacks 413");
            }
        }
    }
}

#[test]
fn optional_fields_of_responses_are_nullable() {
    let document = crate::openapi::document();
    let schemas = &document["components"]["schemas"];
    for (schema, field) in [
        ("Me", "publisher_id"),
        ("Report", "finished_at"),
        ("CrawlRun", "started_at"),
        ("CrawlRun", "finished_at"),
        ("Site", "schedule"),
        ("SplitPreview", "title"),
        ("SplitPreview", "author"),
        ("MatchDetail", "work_title"),
    ] {
        let text = schemas[schema].to_string();
        let property = find_property(&schemas[schema], field)
            .unwrap_or_else(|| panic!("{schema}.{field} missing: {text}"));
        let nullable = property.to_string().contains("\"null\"");
        assert!(nullable, "{schema}.{field} is not nullable: {property}");
    }
}

/// Returns the schema of `field` in an object schema or in one of its `allOf` parts.
fn find_property<'a>(schema: &'a Value, field: &str) -> Option<&'a Value> {
    if let Some(property) = schema["properties"].get(field) {
        return Some(property);
    }
    schema["allOf"]
        .as_array()?
        .iter()
        .find_map(|part| find_property(part, field))
}

#[test]
fn enforced_rules_are_in_the_schema() {
    let document = crate::openapi::document();
    let schemas = &document["components"]["schemas"];
    assert_eq!(
        schemas["WorkId"]["pattern"],
        copyhound_core::ids::ID_PATTERN
    );
    assert_eq!(
        schemas["CreatePublisher"]["properties"]["name"]["minLength"],
        1
    );
    assert_eq!(schemas["CreateSite"]["properties"]["name"]["minLength"], 1);
    let matches = &document["paths"]["/api/v1/matches"]["get"]["parameters"];
    let since = matches
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "since")
        .unwrap();
    assert!(since.to_string().contains("date-time"), "{since}");
    let after = matches
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "after")
        .unwrap();
    assert_eq!(
        after["schema"]["pattern"],
        crate::openapi::CURSOR_PATTERN,
        "{after}"
    );
}

#[tokio::test]
async fn the_document_is_served() {
    let harness = Harness::new().await;
    let (status, body) = harness.call("GET", "/api/v1/openapi.json", "", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, crate::openapi::document());
}

#[tokio::test]
async fn an_undeclared_method_answers_405_with_allow() {
    let harness = Harness::new().await;
    let (status, body) = harness
        .call("DELETE", "/api/v1/sites", &harness.key_a, None)
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
    assert_eq!(body["error"]["code"], "method_not_allowed");
}

#[tokio::test]
async fn extraction_hints_must_be_an_object() {
    let harness = Harness::new().await;
    let body = serde_json::json!({
        "name": "x", "seeds": ["https://pirate.example/"], "extraction": [null, null]
    });
    let (status, body) = harness
        .call("POST", "/api/v1/sites", &harness.key_a, Some(body))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[test]
fn query_parameters_the_server_requires_are_required() {
    let document = crate::openapi::document();
    let parameters = document["paths"]["/api/v1/works/import/txt"]["post"]["parameters"]
        .as_array()
        .unwrap();
    let title = parameters
        .iter()
        .find(|parameter| parameter["name"] == "title")
        .unwrap();
    assert_eq!(title["required"], true, "{title}");
}
