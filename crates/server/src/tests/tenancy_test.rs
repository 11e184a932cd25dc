//! Publisher B can never see or change publisher A's things: every route that
//! takes an id answers 404 for another tenant's id, exactly as for a missing one.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{Harness, assert_error};
use crate::routes::api_routes;

#[tokio::test]
async fn another_tenants_ids_answer_404_on_every_route() {
    for harness in Harness::each().await {
        let work = harness.register_work_a("w_tenant_a").await;
        let (status, body) = harness
            .call(
                "POST",
                "/api/v1/works",
                &harness.key_a,
                Some(json!({"id": "news_a", "title": "n", "kind": "news"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let site = harness.create_site_a().await;
        let (_, run) = harness
            .call(
                "POST",
                &format!("/api/v1/sites/{site}/crawls"),
                &harness.key_a,
                None,
            )
            .await;
        let run = run["id"].as_str().unwrap().to_string();
        let found = harness
            .insert_match(&work, &site, "http://pirate.example/1.html", 0.9, 0)
            .await;
        let (_, report) = harness
            .call(
                "POST",
                "/api/v1/reports",
                &harness.key_a,
                Some(json!({"format": "csv"})),
            )
            .await;
        let report = report["id"].as_str().unwrap().to_string();
        let admin_a = harness
            .admin_key(harness.publisher_a.as_str(), "admin a")
            .await;
        let (status, imported) = harness
            .call(
                "POST",
                "/api/v1/suggestions/book-sources",
                &admin_a,
                Some(json!([{"bookSourceUrl": "http://mirror-a.example"}])),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{imported}");
        let (_, suggestions) = harness
            .call("GET", "/api/v1/suggestions", &harness.key_a, None)
            .await;
        let suggestion = suggestions["items"][0]["id"].as_str().unwrap().to_string();
        let admin_b = harness
            .admin_key(
                harness
                    .call("GET", "/api/v1/me", &harness.key_b, None)
                    .await
                    .1["publisher_id"]
                    .as_str()
                    .unwrap(),
                "admin b",
            )
            .await;

        let registration = json!({"title": "stolen", "chapters": [{"text": "x"}]});
        let cases: Vec<(&str, String, Option<Value>)> = vec![
            ("GET", format!("/api/v1/works/{work}"), None),
            ("PUT", format!("/api/v1/works/{work}"), Some(registration)),
            ("DELETE", format!("/api/v1/works/{work}"), None),
            ("GET", format!("/api/v1/works/{work}/chapters/c_0001"), None),
            (
                "POST",
                "/api/v1/works/news_a/articles".to_string(),
                Some(json!({"title": "t", "text": "x"})),
            ),
            ("GET", format!("/api/v1/works/{work}/licensed-hosts"), None),
            (
                "PUT",
                format!("/api/v1/works/{work}/licensed-hosts"),
                Some(json!({"hosts": ["b.example"]})),
            ),
            (
                "GET",
                format!("/api/v1/works/{work}/release-schedule"),
                None,
            ),
            (
                "PUT",
                format!("/api/v1/works/{work}/release-schedule"),
                Some(json!({"cron": "0 8 * * *"})),
            ),
            ("GET", format!("/api/v1/sites/{site}"), None),
            (
                "PATCH",
                format!("/api/v1/sites/{site}"),
                Some(json!({"enabled": false})),
            ),
            ("POST", format!("/api/v1/sites/{site}/crawls"), None),
            ("GET", format!("/api/v1/sites/{site}/crawls"), None),
            ("GET", format!("/api/v1/sites/{site}/recipients"), None),
            ("GET", format!("/api/v1/suggestions/{suggestion}"), None),
            (
                "POST",
                format!("/api/v1/suggestions/{suggestion}/accept"),
                None,
            ),
            (
                "POST",
                format!("/api/v1/suggestions/{suggestion}/dismiss"),
                None,
            ),
            ("GET", format!("/api/v1/crawls/{run}"), None),
            ("GET", format!("/api/v1/matches/{found}"), None),
            ("GET", format!("/api/v1/matches/{found}/evidence"), None),
            (
                "GET",
                format!("/api/v1/matches/{found}/evidence/bundle"),
                None,
            ),
            (
                "POST",
                format!("/api/v1/matches/{found}/review"),
                Some(json!({"action": "dismiss"})),
            ),
            ("GET", format!("/api/v1/reports/{report}"), None),
            ("GET", format!("/api/v1/reports/{report}/artifact"), None),
            (
                "POST",
                "/api/v1/reports".to_string(),
                Some(json!({"format": "csv", "work_id": work.to_string()})),
            ),
            (
                "POST",
                "/api/v1/reports".to_string(),
                Some(json!({"format": "csv", "site_id": site.to_string()})),
            ),
        ];
        for (method, path, body) in &cases {
            // Admin routes are tried with B's admin key: 404, not 403.
            let key = if path.starts_with("/api/v1/suggestions/") {
                &admin_b
            } else {
                &harness.key_b
            };
            let (status, response) = harness.call(method, path, key, body.clone()).await;
            assert_error(
                status,
                &response,
                StatusCode::NOT_FOUND,
                "not_found",
                "not found",
            );
            assert!(
                !response.to_string().contains("pub_a"),
                "{method} {path} leaks the tenant: {response}"
            );
        }
        let (status, response) = harness
            .send(
                "POST",
                "/api/v1/works/news_a/articles/bulk",
                &harness.key_b,
                "application/x-ndjson",
                Some(b"{\"title\":\"t\",\"text\":\"x\"}".to_vec()),
            )
            .await;
        assert_error(
            status,
            &response,
            StatusCode::NOT_FOUND,
            "not_found",
            "not found",
        );

        // Every route with an id parameter is in the table (or the bulk case above).
        let covered: Vec<String> = cases
            .iter()
            .map(|(method, path, _)| format!("{} {}", method.to_lowercase(), path))
            .collect();
        for (method, template) in api_routes().entries() {
            if !template.contains('{') || template.contains("/admin/") {
                continue;
            }
            if template.ends_with("/articles/bulk") {
                continue;
            }
            let prefix = template.split('{').next().unwrap();
            let suffix = template.rsplit('}').next().unwrap();
            let hit = covered.iter().any(|case| {
                case.starts_with(&format!("{method} {prefix}")) && case.ends_with(suffix)
            });
            assert!(hit, "tenancy table lacks {method} {template}");
        }

        // B's listings show none of A's things, and A's things are unchanged.
        for path in [
            "/api/v1/works",
            "/api/v1/sites",
            "/api/v1/matches",
            "/api/v1/reports",
            "/api/v1/suggestions",
        ] {
            let (status, listing) = harness.call("GET", path, &harness.key_b, None).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(listing["items"], json!([]), "{path}");
        }
        let (_, detail) = harness
            .call(
                "GET",
                &format!("/api/v1/matches/{found}"),
                &harness.key_a,
                None,
            )
            .await;
        assert_eq!(detail["status"], "new");
        let (_, site_now) = harness
            .call(
                "GET",
                &format!("/api/v1/sites/{site}"),
                &harness.key_a,
                None,
            )
            .await;
        assert_eq!(site_now["enabled"], true);
        let (status, _) = harness
            .call(
                "GET",
                &format!("/api/v1/works/{work}"),
                &harness.key_a,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
}
