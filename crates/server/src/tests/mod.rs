//! End-to-end tests of the router on the embedded store and queue, the
//! backends a user runs (one test binary).

mod access_test;
mod alerts_test;
mod api_test;
mod chromium_test;
mod connections_test;
mod console_test;
mod csrf_test;
mod evidence_bundle_test;
mod first_hour_test;
mod headers_test;
mod openapi_test;
mod policy_test;
mod recipients_test;
mod register_test;
mod releases_test;
mod reports_test;
mod session_test;
mod sites_validation_test;
mod suggestions_test;
mod system_test;
mod tenancy_test;
mod titles_test;
mod ui_test;
mod upload_limits_test;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{Duration, Utc};
use copyhound_core::config::ServerConfig;
use copyhound_core::ids::{ChapterId, MatchId, PageId, PublisherId, SiteId, WorkId};
use copyhound_core::model::{CopiedSpan, EvidenceExcerpt, FetchMeta, Match, MatchStatus, Page};
use copyhound_core::site::SitePolicy;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::AppState;
use crate::ui::SESSION_COOKIE;
use copyhound_core::model::Task;
use copyhound_queue::LocalTaskQueue;

pub(crate) const ADMIN_KEY: &str = "test-admin-secret";

/// What a browser says of a form posted from the console's own page.
pub(crate) const SEC_FETCH_SITE: &str = "sec-fetch-site";

/// A router with two publishers, A and B, each with a key, on the embedded
/// store and queue.
pub(crate) struct Harness {
    pub state: AppState,
    pub queue: Arc<LocalTaskQueue>,
    pub router: Router,
    /// The router's console sessions, which [`Harness::session`] logs into.
    pub console: crate::ui::ConsoleState,
    sessions: std::sync::Mutex<std::collections::HashMap<String, String>>,
    _dir: tempfile::TempDir,
    pub key_a: String,
    pub key_b: String,
    pub publisher_a: PublisherId,
}

pub(crate) fn config() -> ServerConfig {
    ServerConfig {
        admin_key: Some(ADMIN_KEY.to_string()),
        max_upload_bytes: 1 << 20,
        ..ServerConfig::default()
    }
}

/// Returns a state on a fresh embedded store and queue under `dir`.
pub(crate) async fn embedded_state(dir: &std::path::Path) -> (AppState, Arc<LocalTaskQueue>) {
    let stores = copyhound_store::Stores::local(dir.join("store")).unwrap();
    copyhound_store::migrate_up(&stores).await.unwrap();
    let queue = Arc::new(
        LocalTaskQueue::open(&dir.join("queue"), &Default::default())
            .await
            .unwrap(),
    );
    let index = Arc::new(copyhound_index::MemoryFingerprintIndex::new(3).unwrap());
    let state = AppState {
        ports: stores.ports(index, queue.clone()),
        config: config(),
        // Loopback tests: sites on 127.0.0.1 are registered.
        site_policy: SitePolicy::new(true),
        matcher: copyhound_core::config::MatcherConfig::default(),
        mail: None,
        recipients: None,
        evidence: None,
    };
    (state, queue)
}

impl Harness {
    /// Returns a harness on a fresh embedded store and queue.
    pub async fn new() -> Self {
        Self::with_policy(SitePolicy::new(true)).await
    }

    /// The same, with the server's address policy for registered sites.
    pub async fn with_policy(policy: SitePolicy) -> Self {
        Self::build(policy, None).await
    }

    /// The same, with a mail server.
    pub async fn with_mail(mail: Arc<dyn copyhound_report::MailTransport>) -> Self {
        Self::build(SitePolicy::new(true), Some(mail)).await
    }

    async fn build(
        policy: SitePolicy,
        mail: Option<Arc<dyn copyhound_report::MailTransport>>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (mut state, queue) = embedded_state(dir.path()).await;
        state.site_policy = policy;
        state.mail = mail;
        let console = crate::ui::ConsoleState::default();
        let router = crate::router_with_console(state.clone(), console.clone());
        let mut harness = Self {
            state,
            queue,
            router,
            console,
            sessions: Default::default(),
            _dir: dir,
            key_a: String::new(),
            key_b: String::new(),
            publisher_a: "pub_a".parse().unwrap(),
        };
        harness.key_a = harness.publisher_with_key("pub_a", "Publisher A").await;
        harness.key_b = harness.publisher_with_key("pub_b", "Publisher B").await;
        harness
    }

    /// The harnesses a backend-sensitive test runs on.
    pub async fn each() -> Vec<Self> {
        vec![Self::new().await]
    }

    /// Renders every queued report, as a worker would.
    pub async fn render_queued_reports(&self) {
        let state = &self.state;
        let handler = copyhound_report::ReportHandler::new(
            state.ports.publishers.clone(),
            state.ports.reports.clone(),
            state.ports.matches.clone(),
            state.ports.works.clone(),
            state.ports.sites.clone(),
            state.ports.pages.clone(),
        )
        .with_recipients(state.recipients.clone());
        for task in self.enqueued().await {
            if let copyhound_core::model::TaskKind::GenerateReport {
                publisher_id,
                report_id,
            } = &task.kind
            {
                handler
                    .generate_report(publisher_id, report_id)
                    .await
                    .unwrap();
            }
        }
    }

    /// Returns the console session of `key`, logged in once per key as
    /// `/login` would; a key that does not authenticate is returned as is,
    /// a session id no server knows.
    pub async fn session(&self, key: &str) -> String {
        if let Some(session) = self.sessions.lock().unwrap().get(key) {
            return session.clone();
        }
        let Ok(caller) = crate::auth::authenticate(&self.state, key).await else {
            return key.to_string();
        };
        let session = self.console.sessions.create(&caller.key_id);
        self.sessions
            .lock()
            .unwrap()
            .insert(key.to_string(), session.clone());
        session
    }

    /// Tasks enqueued and not yet delivered, oldest first.
    pub async fn enqueued(&self) -> Vec<Task> {
        self.queue.ready_tasks(usize::MAX).await.unwrap()
    }

    /// Issues an admin key of `publisher` held by `name` (the operator's call).
    pub async fn admin_key(&self, publisher: &str, name: &str) -> String {
        let (status, body) = self
            .call(
                "POST",
                &format!("/api/v1/admin/publishers/{publisher}/keys"),
                ADMIN_KEY,
                Some(json!({"role": "admin", "name": name})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["key"].as_str().unwrap().to_string()
    }

    pub async fn publisher_with_key(&self, id: &str, name: &str) -> String {
        let (status, body) = self
            .call(
                "POST",
                "/api/v1/admin/publishers",
                ADMIN_KEY,
                Some(json!({"id": id, "name": name, "kind": "books"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = self
            .call(
                "POST",
                &format!("/api/v1/admin/publishers/{id}/keys"),
                ADMIN_KEY,
                Some(json!({})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["key"].as_str().unwrap().to_string()
    }

    /// Sends a JSON request (or none) and returns the status and JSON body (`Null` if not JSON).
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let bytes = body.map(|value| serde_json::to_vec(&value).unwrap());
        self.send(method, path, key, "application/json", bytes)
            .await
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        key: &str,
        content_type: &str,
        body: Option<Vec<u8>>,
    ) -> (StatusCode, Value) {
        let mut request = Request::builder().method(method).uri(path);
        if !key.is_empty() {
            request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let request = match body {
            Some(bytes) => request
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(bytes)),
            None => request.body(Body::empty()),
        }
        .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        (status, value)
    }

    /// Registers a two-chapter work for A and returns its id.
    pub async fn register_work_a(&self, id: &str) -> WorkId {
        let body = json!({
            "id": id, "title": "风起青萍", "author": "佚名",
            "chapters": [
                {"title": "第一章 风起", "text": "天色已晚，林中起了大风。\n少年背着柴往回走。"},
                {"title": "第二章 云涌", "text": "第二天清晨，村口来了一个陌生人。"}
            ]
        });
        let (status, body) = self
            .call("POST", "/api/v1/works", &self.key_a, Some(body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        id.parse().unwrap()
    }

    pub async fn create_site_a(&self) -> SiteId {
        let body = json!({"name": "盗版小说网", "seeds": ["http://127.0.0.1:8001/"], "schedule": "0 3 * * *"});
        let (status, body) = self
            .call("POST", "/api/v1/sites", &self.key_a, Some(body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().parse().unwrap()
    }

    /// Stores a page and a match of it against chapter `c_0001` of A's `work_id`.
    pub async fn insert_match(
        &self,
        work_id: &WorkId,
        site_id: &SiteId,
        url: &str,
        score: f32,
        age_days: i64,
    ) -> MatchId {
        let owner = self.publisher_a.clone();
        self.insert_match_of(&owner, work_id, site_id, url, score, age_days)
            .await
    }

    /// Stores a page and the match the matcher would store for `owner`'s work.
    pub async fn insert_match_of(
        &self,
        owner: &PublisherId,
        work_id: &WorkId,
        site_id: &SiteId,
        url: &str,
        score: f32,
        age_days: i64,
    ) -> MatchId {
        let page_text =
            "广告：免费小说\n天色已晚，林中起了大风。\n少年背着柴往回走。\n本站域名 pirate.example";
        self.insert_match_on_page(owner, work_id, site_id, url, score, age_days, page_text, 8)
            .await
    }

    /// The same on a page of `page_text` whose copy starts at char `page_start`.
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_match_on_page(
        &self,
        owner: &PublisherId,
        work_id: &WorkId,
        site_id: &SiteId,
        url: &str,
        score: f32,
        age_days: i64,
        page_text: &str,
        page_start: u32,
    ) -> MatchId {
        let page_id = PageId::for_url(url);
        let now = Utc::now() - Duration::days(age_days);
        let page = Page {
            id: page_id.clone(),
            url: url.to_string(),
            site_id: site_id.clone(),
            title: "第一章 风起 - 盗版小说网".into(),
            raw_body: page_text.as_bytes().to_vec(),
            body_truncated: false,
            body_sha256: copyhound_core::ids::sha256_hex(page_text.as_bytes()),
            charset: "utf-8".into(),
            text: page_text.into(),
            content_sha256: copyhound_core::ids::sha256_hex(page_text.as_bytes()),
            first_seen: now,
            last_seen: now,
            fetch: FetchMeta::default(),
            previous_versions: Vec::new(),
        };
        self.state.ports.pages.upsert_page(&page).await.unwrap();
        let chapter_id: ChapterId = "c_0001".parse().unwrap();
        let id = MatchId::for_pair(owner, &page_id, work_id, &chapter_id, 1);
        let span = CopiedSpan {
            chapter_start: 0,
            chapter_end: 22,
            page_start,
            page_end: page_start + 22,
        };
        self.state
            .ports
            .matches
            .upsert_match(&Match {
                id: id.clone(),
                publisher_id: owner.clone(),
                page_id,
                page_url: url.to_string(),
                site_id: site_id.clone(),
                work_id: work_id.clone(),
                chapter_id,
                fingerprint_version: 1,
                score,
                chapter_coverage: 1.0,
                page_coverage: 0.6,
                spans: vec![span],
                evidence: vec![EvidenceExcerpt {
                    span,
                    chapter_excerpt: "天色已晚，林中起了大风。".into(),
                    page_excerpt: "天色已晚，林中起了大风。".into(),
                }],
                page_body_sha256: String::new(),
                page_reading: Default::default(),
                duplicate_page_ids: Vec::new(),
                status: MatchStatus::New,
                reviews: Vec::new(),
                first_seen: now,
                last_seen: now,
            })
            .await
            .unwrap();
        id
    }
}

/// Asserts an error body with `code` whose message contains `fragment`.
pub(crate) fn assert_error(
    status: StatusCode,
    body: &Value,
    expected: StatusCode,
    code: &str,
    fragment: &str,
) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(fragment),
        "message `{message}` lacks `{fragment}`"
    );
}

/// A console page's answer, as a browser sees it.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub location: Option<String>,
    pub disposition: Option<String>,
    pub cache_control: Option<String>,
    pub body: String,
}

/// Sends a console request in a session of `key`, and a form body if any.
pub(crate) async fn send(
    harness: &Harness,
    method: &str,
    path: &str,
    key: &str,
    form: Option<&str>,
) -> Answer {
    let session = harness.session(key).await;
    let builder = Request::builder()
        .method(method)
        .uri(path)
        .header(header::COOKIE, format!("{SESSION_COOKIE}={session}"))
        .header(SEC_FETCH_SITE, "same-origin");
    let request = match form {
        Some(form) => builder
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(form.to_string())),
        None => builder.body(Body::empty()),
    }
    .unwrap();
    let response = harness.router.clone().oneshot(request).await.unwrap();
    let header_text = |name| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
    };
    let location = header_text(header::LOCATION);
    let disposition = header_text(header::CONTENT_DISPOSITION);
    let cache_control = header_text(header::CACHE_CONTROL);
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        location,
        disposition,
        cache_control,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// Returns the `once` token of a console form on `body`.
pub(crate) fn form_token(body: &str) -> String {
    let marker = "name=\"once\" value=\"";
    let start = body.find(marker).expect("a form with a token") + marker.len();
    let end = start + body[start..].find('"').unwrap();
    body[start..end].to_string()
}

/// Posts a form that takes effect once, as a browser does: reads the token of
/// `page`, posts `form` with it to `action`, and follows the redirect to the result.
pub(crate) async fn send_once(
    harness: &Harness,
    page: &str,
    action: &str,
    key: &str,
    form: &str,
) -> Answer {
    let page = send(harness, "GET", page, key, None).await;
    let token = form_token(&page.body);
    let posted = send(
        harness,
        "POST",
        action,
        key,
        Some(&format!("{form}&once={token}")),
    )
    .await;
    match (&posted.location, posted.status) {
        (Some(location), StatusCode::SEE_OTHER) => send(harness, "GET", location, key, None).await,
        _ => posted,
    }
}
