//! The admin UI: server-rendered HTML over the same handlers' logic as the API,
//! no JavaScript build step. A reviewer logs in with an API key, which is kept in
//! an HttpOnly, SameSite=Strict cookie (so other sites can neither read it nor
//! post forms with it); every page is scoped to that key's publisher exactly like
//! the API. Every post must come from the console's own origin ([`csrf`]).

mod csrf;
mod front_matter;
mod headers;
mod i18n;
mod login;
mod not_found;
mod operator;
mod pages;
mod preview_json;
mod session;
mod test_mail;
mod throttle;
mod work_editor;

use std::sync::OnceLock;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRequestParts};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use minijinja::Environment;
use serde::Serialize;

pub use copyhound_report::{DailyCount as DayCount, daily_bar_chart as bar_chart_svg};
pub(crate) use headers::nosniff;
pub use session::{SESSION_COOKIE, Sessions};
pub use test_mail::{TEST_MAIL_INTERVAL, TestMailThrottle};
pub use throttle::{CLIENT_BURST as LOGIN_BURST_PER_CLIENT, LoginThrottle};

use pages::{alerts, dashboard, keys, matches, policy, reports, sites, suggestions, works};

use crate::AppState;
use crate::auth::{PublisherCaller, authenticate_key_id};
use crate::error::ApiError;

/// Largest body of `/login` and `/logout`, the console's routes reached
/// without a session, bytes: a key and nothing else.
pub const MAX_LOGIN_BODY_BYTES: usize = 16 << 10;

/// Returns the UI routes. Forms take up to [`crate::routes::MAX_BODY_BYTES`];
/// only the routes that carry work text (the upload preview, its confirmation
/// and the chapter editor) take up to `server.max_upload_bytes`.
pub fn routes() -> Router<AppState> {
    let public = Router::new()
        .route("/login", get(login::login_form).post(login::login))
        .route("/logout", post(login::logout))
        .layer(DefaultBodyLimit::max(MAX_LOGIN_BODY_BYTES));
    let work_text = Router::new()
        .route("/ui/works/preview", post(work_editor::preview_upload))
        .route("/ui/works/confirm", post(work_editor::confirm_upload))
        .route(
            "/ui/works/{work_id}/replace",
            post(work_editor::replace_work),
        );
    Router::new()
        .route("/", get(dashboard::dashboard))
        .route("/ui/lang/{lang}", get(i18n::switch))
        .route("/ui/works", get(works::works))
        .route("/ui/works/{work_id}", get(works::work))
        .route("/ui/works/{work_id}/delete", post(works::delete_work))
        .route("/ui/works/{work_id}/edit", get(work_editor::edit_work))
        .route(
            "/ui/works/{work_id}/licensed-hosts",
            post(works::set_licensed_hosts),
        )
        .route(
            "/ui/works/{work_id}/release-schedule",
            post(works::set_release_schedule),
        )
        .route("/ui/sites", get(sites::sites).post(sites::create_site))
        .route("/ui/sites/{site_id}", get(sites::site))
        .route("/ui/sites/{site_id}/crawl", post(sites::crawl_site))
        .route("/ui/sites/{site_id}/edit", post(sites::edit_site))
        .route("/ui/sites/{site_id}/enabled", post(sites::set_site_enabled))
        .route("/ui/suggestions", get(suggestions::suggestions))
        .route(
            "/ui/suggestions/{suggestion_id}/accept",
            post(suggestions::accept),
        )
        .route(
            "/ui/suggestions/{suggestion_id}/dismiss",
            post(suggestions::dismiss),
        )
        .route("/ui/operator", get(operator::publishers))
        .route("/ui/operator/publishers", post(operator::create_publisher))
        .route(
            "/ui/operator/publishers/{publisher_id}/keys",
            post(operator::create_admin_key),
        )
        .route(
            "/ui/reports/schedules",
            post(reports::save_report_schedules),
        )
        .route("/ui/alerts", get(alerts::alerts).post(alerts::save_alerts))
        .route("/ui/alerts/profile", post(alerts::save_profile))
        .route("/ui/alerts/test", post(test_mail::send))
        .route("/ui/policy", get(policy::policy).post(policy::save_policy))
        .route("/ui/keys", get(keys::keys).post(keys::create_key))
        .route("/ui/keys/{key_id}/revoke", post(keys::revoke_key))
        .route(
            "/ui/reports",
            get(reports::reports).post(reports::create_report),
        )
        .route(
            "/ui/reports/{report_id}/artifact",
            get(reports::report_artifact),
        )
        .route("/ui/matches", get(matches::matches))
        .route("/ui/matches/review", post(matches::bulk_review))
        .route("/ui/matches/{match_id}", get(matches::match_page))
        .route("/ui/matches/{match_id}/review", post(matches::review))
        .route("/ui/matches/{match_id}/evidence", get(matches::evidence))
        .route(
            "/ui/matches/{match_id}/evidence/bundle",
            get(matches::evidence_bundle),
        )
        .route("/ui/{*rest}", any(not_found::page))
        .layer(DefaultBodyLimit::max(crate::routes::MAX_BODY_BYTES))
        .merge(public)
        .merge(work_text)
        .layer(axum::middleware::from_fn(csrf::same_origin_only))
        .layer(axum::middleware::from_fn(viewer_scope))
        .layer(axum::middleware::from_fn(i18n::scope))
        .layer(axum::middleware::from_fn(headers::console))
}

fn environment() -> &'static Environment<'static> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        let mut environment = Environment::new();
        for (name, source) in TEMPLATES {
            environment
                .add_template(name, source)
                .expect("embedded templates are valid");
        }
        environment.add_filter("t", i18n::translate);
        environment
    })
}

/// The embedded templates.
const TEMPLATES: [(&str, &str); 16] = [
    ("base.html", include_str!("templates/base.html")),
    ("login.html", include_str!("templates/login.html")),
    ("error.html", include_str!("templates/error.html")),
    ("dashboard.html", include_str!("templates/dashboard.html")),
    ("works.html", include_str!("templates/works.html")),
    ("work.html", include_str!("templates/work.html")),
    ("policy.html", include_str!("templates/policy.html")),
    ("reports.html", include_str!("templates/reports.html")),
    (
        "work_preview.html",
        include_str!("templates/work_preview.html"),
    ),
    ("sites.html", include_str!("templates/sites.html")),
    (
        "suggestions.html",
        include_str!("templates/suggestions.html"),
    ),
    ("match.html", include_str!("templates/match.html")),
    ("keys.html", include_str!("templates/keys.html")),
    ("alerts.html", include_str!("templates/alerts.html")),
    ("operator.html", include_str!("templates/operator.html")),
    ("not_found.html", include_str!("templates/not_found.html")),
];

/// Who is looking at a console page, by name: the header shows it.
#[derive(Clone, Debug, Serialize)]
struct Viewer {
    /// The publisher's display name (its id when its record is missing).
    publisher_name: String,
    /// The holder of the session's key, when the key is named.
    person: Option<String>,
}

tokio::task_local! {
    /// The viewer of the request being handled, set once its caller is known.
    static VIEWER: OnceLock<Viewer>;
}

/// Gives each console request a slot for its viewer, which [`UiCaller`] fills.
async fn viewer_scope(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    VIEWER.scope(OnceLock::new(), next.run(request)).await
}

/// Renders a template; a rendering failure is logged and answered with a plain 500.
pub fn render(name: &str, context: impl Serialize) -> Response {
    let viewer = VIEWER.try_with(|slot| slot.get().cloned()).ok().flatten();
    let context = minijinja::context! {
        lang => i18n::current().code(),
        viewer => minijinja::Value::from(minijinja::value::Serde(&viewer)),
        ..minijinja::Value::from(minijinja::value::Serde(&context))
    };
    let rendered = environment()
        .get_template(name)
        .and_then(|template| template.render(context));
    match rendered {
        Ok(html) => Html(html).into_response(),
        Err(error) => {
            tracing::error!(template = name, error = %error, "template rendering failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error; the server log has details",
            )
                .into_response()
        }
    }
}

/// A UI error: the API error rendered as a page.
#[derive(Debug)]
pub struct UiError(pub ApiError);

impl<E: Into<ApiError>> From<E> for UiError {
    fn from(error: E) -> Self {
        Self(error.into())
    }
}

#[derive(Serialize)]
struct ErrorPage {
    code: &'static str,
    message: String,
    status: u16,
}

impl IntoResponse for UiError {
    fn into_response(self) -> Response {
        let (status, code, message) = self.0.parts();
        if status.is_server_error() {
            tracing::error!(code, error = %self.0.0, "ui request failed");
        }
        let mut response = render(
            "error.html",
            ErrorPage {
                code,
                message,
                status: status.as_u16(),
            },
        );
        *response.status_mut() = status;
        response
    }
}

/// What the console keeps in the serving process: its sessions and the
/// login throttle. [`crate::router`] installs one as an extension.
#[derive(Clone, Debug, Default)]
pub struct ConsoleState {
    /// Logged-in sessions.
    pub sessions: Sessions,
    /// Login attempts per client and in all.
    pub throttle: LoginThrottle,
    /// When each publisher last sent a test e-mail.
    pub test_mail: test_mail::TestMailThrottle,
}

/// The caller of a console session, or the way to the login page. The key
/// is read again on every request, so a revoked key ends its sessions.
pub(crate) async fn session_caller(
    parts: &Parts,
    state: &AppState,
) -> Result<crate::auth::Caller, Response> {
    let Some(console) = parts.extensions.get::<ConsoleState>() else {
        let error = copyhound_core::Error::internal("the router has no console state");
        return Err(UiError::from(error).into_response());
    };
    let Some(session_id) = session::session_id(&parts.headers) else {
        return Err(Redirect::to("/login").into_response());
    };
    let Some(key_id) = console.sessions.key_id(&session_id) else {
        return Err(Redirect::to("/login?expired=1").into_response());
    };
    match authenticate_key_id(state, &key_id).await {
        Ok(caller) => Ok(caller),
        Err(error) if error.kind() == copyhound_core::ErrorKind::Unauthorized => {
            console.sessions.end(&session_id);
            Err(Redirect::to("/login?expired=1").into_response())
        }
        Err(error) => Err(UiError::from(error).into_response()),
    }
}

/// A logged-in reviewer; pages without a valid session redirect to `/login`.
#[derive(Debug, Clone)]
pub struct UiCaller(pub PublisherCaller);

impl FromRequestParts<AppState> for UiCaller {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let caller = session_caller(parts, state).await?;
        if caller.publisher_id.is_none() {
            // The operator's console is its own.
            return Err(Redirect::to("/ui/operator").into_response());
        }
        let caller = PublisherCaller::from_caller(caller)
            .map_err(|error| UiError::from(error).into_response())?;
        let publisher_name = match state
            .ports
            .publishers
            .get_publisher(&caller.publisher_id)
            .await
        {
            Ok(publisher) => publisher.name,
            Err(error) if error.kind() == copyhound_core::ErrorKind::NotFound => {
                caller.publisher_id.to_string()
            }
            Err(error) => return Err(UiError::from(error).into_response()),
        };
        let viewer = Viewer {
            publisher_name,
            person: caller.name.clone(),
        };
        // Outside the console's routes (no slot) the header keeps the id.
        let _ = VIEWER.try_with(|slot| slot.set(viewer));
        Ok(Self(caller))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A filter missing from the engine's build fails only when its branch
    /// renders (a second page, an error): every filter a template names must exist.
    #[test]
    fn every_filter_the_templates_use_is_built_in() {
        let block = regex::Regex::new(r"(?s)\{[{%](.*?)[}%]\}").expect("valid pattern");
        let pattern = regex::Regex::new(r"\|\s*([a-z_]+)").expect("valid pattern");
        let mut checked = 0;
        for (name, source) in TEMPLATES {
            let code: String = block
                .captures_iter(source)
                .map(|found| found[1].to_string())
                .collect::<Vec<_>>()
                .join(" ");
            for found in pattern.captures_iter(&code) {
                let filter = &found[1];
                let probe = format!("{{{{ value|{filter} }}}}");
                let outcome =
                    environment().render_str(&probe, minijinja::context! { value => "a b" });
                if let Err(error) = outcome {
                    assert_ne!(
                        error.kind(),
                        minijinja::ErrorKind::UnknownFilter,
                        "{name} uses `{filter}`, which this build lacks"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 10, "the templates' filters were found");
    }
}
