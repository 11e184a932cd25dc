use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::Value;

use super::Harness;
use crate::routes::api_routes;

#[test]
fn every_route_is_documented_and_every_documented_route_exists() {
    let document: Value = serde_json::from_str(crate::openapi::DOCUMENT).unwrap();
    let mut documented = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            documented.insert((method.clone(), path.clone()));
        }
    }
    let registered: BTreeSet<(String, String)> = api_routes()
        .entries()
        .iter()
        .map(|(method, path)| (method.to_string(), path.clone()))
        .collect();
    let undocumented: Vec<_> = registered.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&registered).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from openapi.json: {undocumented:?}"
    );
    assert!(
        missing.is_empty(),
        "openapi.json documents routes the router lacks: {missing:?}"
    );
}

#[test]
fn every_documented_path_parameter_is_declared() {
    let document: Value = serde_json::from_str(crate::openapi::DOCUMENT).unwrap();
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
                        .map(|p| p["name"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(placeholders, declared, "{method} {path}");
        }
    }
}

#[tokio::test]
async fn the_document_is_served() {
    let harness = Harness::new().await;
    let (status, body) = harness.call("GET", "/api/v1/openapi.json", "", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["openapi"], "3.0.3");
}
