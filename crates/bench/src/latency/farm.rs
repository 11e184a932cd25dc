//! The piracy farm: every site of the plan served from memory on its own
//! loopback address and port. A copy is on its site from the second the plan
//! gives it (relative to the start of the timed phase): from then on the
//! work's table of contents and the home page's latest updates list it and
//! its page (or two pages) answer; before, they answer 404. Every request is
//! logged with its time, site and path.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::plan::{Copy, DISALLOWED_PREFIX, PageRef, Plan};

/// One request the farm answered.
#[derive(Clone, Debug)]
pub struct Request {
    /// When it arrived.
    pub at: Instant,
    /// Which site.
    pub site: usize,
    /// Its path (no query).
    pub path: String,
    /// The answer's status.
    pub status: u16,
}

/// The farm's shared state.
#[derive(Debug)]
pub struct FarmState {
    /// The plan served.
    pub plan: Arc<Plan>,
    start: OnceLock<Instant>,
    log: Mutex<Vec<Request>>,
}

impl FarmState {
    /// Starts the timed phase: copies appear from now on, at their seconds.
    pub fn start_clock(&self, at: Instant) {
        let _ = self.start.set(at);
    }

    /// When `copy` appears (`None`: from the start, or the clock has not started).
    pub fn appears_at(&self, copy: &Copy) -> Option<Instant> {
        let start = self.start.get()?;
        Some(*start + Duration::from_secs_f64(copy.appears?))
    }

    /// Whether `copy` is on its site now.
    pub fn visible(&self, copy: &Copy, now: Instant) -> bool {
        match copy.appears {
            None => true,
            Some(_) => self.appears_at(copy).is_some_and(|at| at <= now),
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().expect("farm log").clone()
    }

    /// Requests so far.
    pub fn request_count(&self) -> usize {
        self.log.lock().expect("farm log").len()
    }

    fn record(&self, site: usize, path: &str, status: StatusCode) {
        self.log.lock().expect("farm log").push(Request {
            at: Instant::now(),
            site,
            path: path.to_string(),
            status: status.as_u16(),
        });
    }
}

/// The running farm; its servers stop on drop.
#[derive(Debug)]
pub struct Farm {
    /// The shared state.
    pub state: Arc<FarmState>,
    /// Per site, `http://<address>:<port>`.
    pub bases: Vec<String>,
    stop_tx: watch::Sender<bool>,
    servers: Vec<JoinHandle<()>>,
}

impl Farm {
    /// Binds every site of `plan` on its own loopback address and serves it.
    pub async fn serve(plan: Arc<Plan>) -> anyhow::Result<Self> {
        let state = Arc::new(FarmState {
            plan: plan.clone(),
            start: OnceLock::new(),
            log: Mutex::new(Vec::new()),
        });
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut bases = Vec::new();
        let mut servers = Vec::new();
        for (index, site) in plan.sites.iter().enumerate() {
            let listener = TcpListener::bind((site.ip, 0)).await.with_context(|| {
                format!(
                    "cannot bind {}: Linux routes 127.0.0.0/8 to lo, other systems may not",
                    site.ip
                )
            })?;
            let address = listener.local_addr()?;
            let listener = listener.tap_io(|stream| {
                let _ = stream.set_nodelay(true);
            });
            let router = axum::Router::new()
                .fallback(answer)
                .with_state((state.clone(), index));
            let mut stop = stop_rx.clone();
            servers.push(tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stop.wait_for(|stopped| *stopped).await;
                };
                if let Err(error) = axum::serve(listener, router)
                    .with_graceful_shutdown(shutdown)
                    .await
                {
                    tracing::warn!(error = %error, "farm site server failed");
                }
            }));
            bases.push(format!("http://{address}"));
        }
        Ok(Self {
            state,
            bases,
            stop_tx,
            servers,
        })
    }
}

impl Drop for Farm {
    fn drop(&mut self) {
        let _ = self.stop_tx.send(true);
        for server in &self.servers {
            server.abort();
        }
    }
}

async fn answer(State((state, site)): State<(Arc<FarmState>, usize)>, uri: Uri) -> Response {
    let path = uri.path().to_string();
    let (status, content_type, body) = page(&state, site, &path, Instant::now());
    state.record(site, &path, status);
    (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

const HTML: &str = "text/html; charset=utf-8";

fn page(
    state: &FarmState,
    site_index: usize,
    path: &str,
    now: Instant,
) -> (StatusCode, &'static str, String) {
    let plan = &state.plan;
    let site = &plan.sites[site_index];
    if path == "/robots.txt" {
        return (
            StatusCode::OK,
            "text/plain; charset=utf-8",
            site.robots.text(),
        );
    }
    if path == "/" || path == "/index.html" {
        return (StatusCode::OK, HTML, home(state, site_index, now));
    }
    if path.starts_with(DISALLOWED_PREFIX) {
        let body = shell(
            &format!("VIP书库_{}", site.name),
            &format!(
                "<h1>VIP书库</h1><p>会员专享，请先登录。</p><a href=\"{DISALLOWED_PREFIX}list-2.html\">更多</a> <a href=\"/\">首页</a>"
            ),
        );
        return (StatusCode::OK, HTML, body);
    }
    let not_found = (
        StatusCode::NOT_FOUND,
        HTML,
        shell("404", "<h1>页面不存在</h1><a href=\"/\">返回首页</a>"),
    );
    match plan.paths[site_index].get(path) {
        Some(PageRef::Toc(work)) => (StatusCode::OK, HTML, toc(state, site_index, *work, now)),
        Some(PageRef::Chapter { copy, part }) => {
            let copy = &plan.copies[*copy];
            if state.visible(copy, now) {
                (StatusCode::OK, HTML, chapter(state, copy, *part, now))
            } else {
                not_found
            }
        }
        None => not_found,
    }
}

fn shell(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"zh-CN\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body>\n{body}\n</body></html>\n"
    )
}

fn home(state: &FarmState, site_index: usize, now: Instant) -> String {
    let plan = &state.plan;
    let site = &plan.sites[site_index];
    let mut body = format!(
        "<h1>{}</h1>\n<div class=\"nav\"><a href=\"/\">首页</a>",
        site.name
    );
    if site.robots.disallow {
        body.push_str(&format!(" <a href=\"{DISALLOWED_PREFIX}\">VIP书库</a>"));
    }
    body.push_str("</div>\n<h2>热门小说</h2>\n<ul class=\"books\">\n");
    for &work in &site.works {
        body.push_str(&format!(
            "<li><a href=\"{}\">{}</a> 作者：{}</li>\n",
            site.toc_path(work),
            plan.works[work].title,
            plan.works[work].author
        ));
    }
    body.push_str("</ul>\n<h2>最新更新</h2>\n<ul class=\"latest\">\n");
    let mut latest: Vec<&Copy> = plan
        .copies
        .iter()
        .filter(|copy| copy.site == site_index && state.visible(copy, now))
        .collect();
    latest.sort_by(|a, b| {
        b.appears
            .unwrap_or(-1.0)
            .total_cmp(&a.appears.unwrap_or(-1.0))
            .then(b.chapter.cmp(&a.chapter))
    });
    for copy in latest.into_iter().take(12) {
        let work = &plan.works[copy.work];
        body.push_str(&format!(
            "<li>[{}] <a href=\"{}\">{}</a></li>\n",
            work.title,
            site.chapter_path(copy.work, copy.chapter, 0),
            work.chapters[copy.chapter].title
        ));
    }
    body.push_str("</ul>\n<div class=\"footer\">本站所有小说均来自网友上传</div>");
    shell(&format!("{}_最新小说_免费阅读", site.name), &body)
}

fn toc(state: &FarmState, site_index: usize, work_index: usize, now: Instant) -> String {
    let plan = &state.plan;
    let site = &plan.sites[site_index];
    let work = &plan.works[work_index];
    let mut listed: Vec<&Copy> = plan
        .copies
        .iter()
        .filter(|copy| {
            copy.site == site_index && copy.work == work_index && state.visible(copy, now)
        })
        .collect();
    listed.sort_by_key(|copy| copy.chapter);
    let mut body = format!(
        "<div class=\"nav\"><a href=\"/\">{}</a> &gt; {}</div>\n<h1>{}</h1>\n<p>作者：{}</p>\n<h2>章节目录</h2>\n<ul class=\"chapters\">\n",
        site.name, work.title, work.title, work.author
    );
    for copy in listed {
        body.push_str(&format!(
            "<li><a href=\"{}\">{}</a></li>\n",
            site.chapter_path(work_index, copy.chapter, 0),
            work.chapters[copy.chapter].title
        ));
    }
    body.push_str("</ul>");
    shell(&format!("{}最新章节列表_{}", work.title, site.name), &body)
}

fn chapter(state: &FarmState, copy: &Copy, part: usize, now: Instant) -> String {
    let plan = &state.plan;
    let site = &plan.sites[copy.site];
    let work = &plan.works[copy.work];
    let title = &work.chapters[copy.chapter].title;
    let visible_chapter = |chapter: usize| {
        plan.paths[copy.site]
            .get(&site.chapter_path(copy.work, chapter, 0))
            .is_some_and(|page| match page {
                PageRef::Chapter { copy, .. } => state.visible(&plan.copies[*copy], now),
                PageRef::Toc(_) => false,
            })
    };
    let mut body = format!(
        "<div class=\"nav\"><a href=\"/\">{}</a> &gt; <a href=\"{}\">{}</a> &gt; {title}</div>\n<h1>{title}{}</h1>\n<div id=\"content\">\n",
        site.name,
        site.toc_path(copy.work),
        work.title,
        if site.parts() > 1 {
            format!("（{}/2）", part + 1)
        } else {
            String::new()
        }
    );
    for line in plan.copied_paragraphs(copy, part) {
        body.push_str(&format!("<p>{line}</p>\n"));
    }
    body.push_str("</div>\n<div class=\"pager\">");
    if copy.chapter > 0 && visible_chapter(copy.chapter - 1) {
        body.push_str(&format!(
            "<a href=\"{}\">上一章</a> ",
            site.chapter_path(copy.work, copy.chapter - 1, 0)
        ));
    }
    body.push_str(&format!(
        "<a href=\"{}\">目录</a> ",
        site.toc_path(copy.work)
    ));
    if part + 1 < site.parts() {
        body.push_str(&format!(
            "<a href=\"{}\">下一页</a>",
            site.chapter_path(copy.work, copy.chapter, part + 1)
        ));
    } else if visible_chapter(copy.chapter + 1) {
        body.push_str(&format!(
            "<a href=\"{}\">下一章</a>",
            site.chapter_path(copy.work, copy.chapter + 1, 0)
        ));
    }
    body.push_str("</div>");
    shell(&format!("{title}_{}_{}", work.title, site.name), &body)
}

#[cfg(test)]
mod tests {
    use super::super::plan::PlanParams;
    use super::*;

    #[test]
    fn copies_are_listed_and_served_from_their_second() {
        let plan = Arc::new(Plan::new(PlanParams {
            sites: 12,
            works: 4,
            phase_seconds: 300.0,
            grace_seconds: 60.0,
            max_delay: 120.0,
            seed: 9,
        }));
        let state = FarmState {
            plan: plan.clone(),
            start: OnceLock::new(),
            log: Mutex::new(Vec::new()),
        };
        let (index, copy) = plan.timed().next().expect("a timed copy");
        let _ = index;
        let site = &plan.sites[copy.site];
        let chapter_path = site.chapter_path(copy.work, copy.chapter, 0);
        let toc_path = site.toc_path(copy.work);
        let now = Instant::now();
        assert_eq!(
            page(&state, copy.site, &chapter_path, now).0,
            StatusCode::NOT_FOUND
        );
        assert!(
            !page(&state, copy.site, &toc_path, now)
                .2
                .contains(&chapter_path)
        );
        state.start_clock(now);
        let later = now + Duration::from_secs_f64(copy.appears.unwrap() + 0.1);
        let (status, _, body) = page(&state, copy.site, &chapter_path, later);
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("<p>"));
        assert!(
            page(&state, copy.site, &toc_path, later)
                .2
                .contains(&chapter_path)
        );
        assert!(
            page(&state, copy.site, "/", later)
                .2
                .contains(&chapter_path)
        );
        // Initial chapters are there before the clock.
        let initial = site.chapter_path(copy.work, 0, 0);
        assert_eq!(page(&state, copy.site, &initial, now).0, StatusCode::OK);
    }
}
