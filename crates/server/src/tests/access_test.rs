//! Every route of the API, walked as no key, a revoked key, the wrong role and a
//! publisher admin of another tenant. The table is the router's own route list,
//! so a route added later is walked too.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{ADMIN_KEY, Harness, assert_error};
use crate::routes::api_routes;

/// Routes anyone may call.
const PUBLIC: [&str; 3] = ["/health", "/metrics", "/api/v1/openapi.json"];

/// Ids of A's resources, one per path parameter.
struct Fixture {
    work: String,
    site: String,
    run: String,
    found: String,
    report: String,
    key_of_a: String,
}

impl Fixture {
    async fn build(harness: &Harness) -> Self {
        let work = harness.register_work_a("w_access").await.to_string();
        let site = harness.create_site_a().await;
        let (_, run) = harness
            .call(
                "POST",
                &format!("/api/v1/sites/{site}/crawls"),
                &harness.key_a,
                None,
            )
            .await;
        let found = harness
            .insert_match(
                &work.parse().unwrap(),
                &site,
                "http://pirate.example/1.html",
                0.9,
                0,
            )
            .await;
        let (_, report) = harness
            .call(
                "POST",
                "/api/v1/reports",
                &harness.key_a,
                Some(json!({"format": "csv"})),
            )
            .await;
        let (status, key) = harness
            .call(
                "POST",
                "/api/v1/admin/publishers/pub_a/keys",
                ADMIN_KEY,
                Some(json!({})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{key}");
        Self {
            work,
            site: site.to_string(),
            run: run["id"].as_str().unwrap().to_string(),
            found: found.to_string(),
            report: report["id"].as_str().unwrap().to_string(),
            key_of_a: key["id"].as_str().unwrap().to_string(),
        }
    }

    /// Fills a route template with A's ids.
    fn path(&self, template: &str) -> String {
        template
            .replace("{work_id}", &self.work)
            .replace("{chapter_id}", "c_0001")
            .replace("{site_id}", &self.site)
            .replace("{run_id}", &self.run)
            .replace("{match_id}", &self.found)
            .replace("{report_id}", &self.report)
            .replace("{publisher_id}", "pub_a")
            .replace("{key_id}", &self.key_of_a)
    }
}

/// A body that passes validation, so the answer is about the key alone.
fn body_for(method: &str, template: &str) -> Option<Value> {
    if template == "/api/v1/admin/publishers" && method == "post" {
        return Some(json!({"id": "pub_new", "name": "New", "kind": "books"}));
    }
    matches!(method, "post" | "put" | "patch").then(|| json!({}))
}

async fn issue(harness: &Harness, publisher: &str, role: &str) -> (String, String) {
    let (status, key) = harness
        .call(
            "POST",
            &format!("/api/v1/admin/publishers/{publisher}/keys"),
            ADMIN_KEY,
            Some(json!({"role": role})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key}");
    (
        key["key"].as_str().unwrap().to_string(),
        key["id"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn every_route_refuses_missing_revoked_and_wrong_role_keys() {
    for harness in Harness::each().await {
        let fixture = Fixture::build(&harness).await;
        let (revoked, revoked_id) = issue(&harness, "pub_a", "publisher").await;
        let (status, _) = harness
            .call(
                "DELETE",
                &format!("/api/v1/admin/keys/{revoked_id}"),
                ADMIN_KEY,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (admin_of_b, _) = issue(&harness, "pub_b", "admin").await;

        let routes = api_routes();
        assert!(
            routes.entries().len() >= 30,
            "the route table is walked whole"
        );
        for (method, template) in routes.entries() {
            let path = fixture.path(template);
            let verb = method.to_uppercase();
            let body = body_for(method, template);
            let label = format!("{verb} {template}");
            if PUBLIC.contains(&template.as_str()) {
                let (status, _) = harness.call(&verb, &path, "", None).await;
                assert_ne!(status, StatusCode::UNAUTHORIZED, "{label} is public");
                continue;
            }
            for key in ["", "chk_garbage", revoked.as_str()] {
                let (status, response) = harness.call(&verb, &path, key, body.clone()).await;
                assert_error(
                    status,
                    &response,
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "",
                );
                assert!(
                    !response.to_string().contains("pub_a"),
                    "{label} leaks to key `{key}`: {response}"
                );
            }
            let is_admin_route = template.contains("/admin/");
            if is_admin_route {
                // A publisher key is the wrong role.
                let (status, response) = harness
                    .call(&verb, &path, &harness.key_b, body.clone())
                    .await;
                assert_error(status, &response, StatusCode::FORBIDDEN, "forbidden", "");
                // B's admin reaches nothing of A's.
                let (status, response) =
                    harness.call(&verb, &path, &admin_of_b, body.clone()).await;
                assert!(
                    matches!(
                        status,
                        StatusCode::FORBIDDEN | StatusCode::NOT_FOUND | StatusCode::OK
                    ),
                    "{label} as B's admin: {status} {response}"
                );
                assert!(
                    status != StatusCode::OK || !response.to_string().contains("pub_a"),
                    "{label} shows A to B's admin: {response}"
                );
            } else if template != "/api/v1/me" {
                // The operator key acts for no publisher.
                let (status, response) = harness.call(&verb, &path, ADMIN_KEY, body.clone()).await;
                assert_error(status, &response, StatusCode::FORBIDDEN, "forbidden", "");
            }
        }
    }
}

#[tokio::test]
async fn a_publisher_admin_administers_its_own_publisher_only() {
    for harness in Harness::each().await {
        let fixture = Fixture::build(&harness).await;
        let (admin_of_b, _) = issue(&harness, "pub_b", "admin").await;

        // Minting a key for A, revoking A's key, creating publishers: refused.
        let (status, response) = harness
            .call(
                "POST",
                "/api/v1/admin/publishers/pub_a/keys",
                &admin_of_b,
                Some(json!({"role": "admin"})),
            )
            .await;
        assert_error(
            status,
            &response,
            StatusCode::NOT_FOUND,
            "not_found",
            "not found",
        );
        let (status, response) = harness
            .call(
                "DELETE",
                &format!("/api/v1/admin/keys/{}", fixture.key_of_a),
                &admin_of_b,
                None,
            )
            .await;
        assert_error(
            status,
            &response,
            StatusCode::NOT_FOUND,
            "not_found",
            "not found",
        );
        let (status, response) = harness
            .call(
                "POST",
                "/api/v1/admin/publishers",
                &admin_of_b,
                Some(json!({"id": "pub_c", "name": "C", "kind": "books"})),
            )
            .await;
        assert_error(
            status,
            &response,
            StatusCode::FORBIDDEN,
            "forbidden",
            "operator",
        );
        let (status, listing) = harness
            .call("GET", "/api/v1/admin/publishers", &admin_of_b, None)
            .await;
        assert_eq!(status, StatusCode::OK);
        let ids: Vec<&str> = listing["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|publisher| publisher["id"].as_str())
            .collect();
        assert_eq!(ids, ["pub_b"]);

        // A's key still works; B's admin manages B's own keys.
        let (status, _) = harness
            .call("GET", "/api/v1/works", &harness.key_a, None)
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, minted) = harness
            .call(
                "POST",
                "/api/v1/admin/publishers/pub_b/keys",
                &admin_of_b,
                Some(json!({})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{minted}");
        let minted_id = minted["id"].as_str().unwrap();
        let (status, _) = harness
            .call(
                "DELETE",
                &format!("/api/v1/admin/keys/{minted_id}"),
                &admin_of_b,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        // The operator administers everyone.
        let (status, _) = harness
            .call(
                "DELETE",
                &format!("/api/v1/admin/keys/{}", fixture.key_of_a),
                ADMIN_KEY,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
}

#[tokio::test]
async fn a_reused_work_id_never_hands_a_match_to_its_next_owner() {
    for harness in Harness::each().await {
        let work = harness.register_work_a("wShared").await;
        let site = harness.create_site_a().await;
        let url = "http://pirate.example/shared.html";
        let of_a = harness.insert_match(&work, &site, url, 0.9, 0).await;
        let (status, reviewed) = harness
            .call(
                "POST",
                &format!("/api/v1/matches/{of_a}/review"),
                &harness.key_a,
                Some(json!({"action": "confirm", "note": "A's confidential note"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{reviewed}");
        let (status, _) = harness
            .call("DELETE", "/api/v1/works/wShared", &harness.key_a, None)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        // What hung off A's work went with it.
        let (status, _) = harness
            .call(
                "GET",
                &format!("/api/v1/matches/{of_a}"),
                &harness.key_a,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // B registers the same id and text; the matcher finds the same page.
        let body = json!({
            "id": "wShared", "title": "风起青萍", "author": "佚名",
            "chapters": [{"title": "第一章 风起", "text": "天色已晚，林中起了大风。\n少年背着柴往回走。"}]
        });
        let (status, created) = harness
            .call("POST", "/api/v1/works", &harness.key_b, Some(body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let publisher_b = "pub_b".parse().unwrap();
        let of_b = harness
            .insert_match_of(&publisher_b, &work, &site, url, 0.9, 0)
            .await;
        assert_ne!(of_a, of_b);
        for id in [&of_a, &of_b] {
            let (status, detail) = harness
                .call(
                    "GET",
                    &format!("/api/v1/matches/{id}"),
                    &harness.key_b,
                    None,
                )
                .await;
            let text = detail.to_string();
            assert!(!text.contains("confidential"), "{text}");
            if status == StatusCode::OK {
                assert_eq!(detail["status"], "new", "{detail}");
                assert_eq!(detail["reviews"], json!([]), "{detail}");
            }
        }
        let (_, listing) = harness
            .call("GET", "/api/v1/matches", &harness.key_b, None)
            .await;
        assert!(!listing.to_string().contains("confidential"));
    }
}
