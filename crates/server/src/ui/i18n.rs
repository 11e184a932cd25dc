//! The console in Chinese or English. Templates are written in English and
//! mark what they show with the `t` filter; a request's language comes from
//! the `copyhound_lang` cookie (set by the header's 中文 / English links), else
//! from `Accept-Language`, else English. Text the dictionary lacks shows in
//! English, so a new string never breaks a page.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::Request;
use axum::http::header::{ACCEPT_LANGUAGE, COOKIE, REFERER, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

/// A console language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// English (the templates' own text).
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// The code used in the cookie and `<html lang>`.
    pub fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh",
        }
    }
}

/// The cookie that keeps a user's choice.
const LANG_COOKIE: &str = "copyhound_lang";

tokio::task_local! {
    static LANG: Lang;
}

/// The language of the request being rendered (English outside a request).
pub fn current() -> Lang {
    LANG.try_with(|lang| *lang).unwrap_or(Lang::En)
}

/// Returns the language a request asks for.
fn requested(headers: &HeaderMap) -> Lang {
    let cookie = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == LANG_COOKIE)
        .map(|(_, value)| value.trim().to_string());
    match cookie.as_deref() {
        Some("zh") => return Lang::Zh,
        Some("en") => return Lang::En,
        _ => {}
    }
    let accepted = headers
        .get(ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    // The first listed language decides (browsers list the preferred first).
    let first = accepted.split(',').next().unwrap_or_default().trim();
    if first.to_ascii_lowercase().starts_with("zh") {
        Lang::Zh
    } else {
        Lang::En
    }
}

/// Middleware: renders the request's pages in its language.
pub async fn scope(request: Request, next: Next) -> Response {
    let lang = requested(request.headers());
    LANG.scope(lang, next.run(request)).await
}

/// `GET /ui/lang/{lang}`: remembers the choice and goes back.
pub async fn switch(
    axum::extract::Path(lang): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    let code = if lang == "zh" { "zh" } else { "en" };
    // Back to the page the link was on, on this site only.
    let back = headers
        .get(REFERER)
        .and_then(|value| value.to_str().ok())
        .and_then(local_path_of)
        .unwrap_or_else(|| "/".to_string());
    let mut response = Redirect::to(&back).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&format!(
        "{LANG_COOKIE}={code}; Path=/; Max-Age=31536000; SameSite=Lax"
    )) {
        response.headers_mut().insert(SET_COOKIE, cookie);
    }
    response
}

/// Returns the path and query of a `Referer` when they are safe to redirect
/// to on this site: one leading `/`, no backslash (browsers read `/\\x` as
/// `//x`, another host) and no control character.
fn local_path_of(referer: &str) -> Option<String> {
    let path = match url::Url::parse(referer) {
        Ok(url) => match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        },
        // A relative reference: taken as is, then checked like any other.
        Err(_) => referer.to_string(),
    };
    let local = path.starts_with('/')
        && !path.starts_with("//")
        && !path.contains('\\')
        && !path.chars().any(char::is_control);
    local.then_some(path)
}

/// The `t` filter: `text` in the language being rendered.
pub fn translate(text: String) -> String {
    if current() == Lang::En {
        return text;
    }
    dictionary()
        .get(text.as_str())
        .map_or(text, |translated| (*translated).to_string())
}

fn dictionary() -> &'static HashMap<&'static str, &'static str> {
    static DICTIONARY: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    DICTIONARY.get_or_init(|| ZH.iter().copied().collect())
}

/// English text of the templates and its Chinese.
const ZH: &[(&str, &str)] = &[
    // Navigation and common words.
    ("Dashboard", "概览"),
    ("Works", "作品"),
    ("Sites", "站点"),
    ("Matches", "匹配"),
    ("Reports", "报告"),
    ("Alerts", "提醒"),
    ("Policy", "判定规则"),
    ("People", "成员"),
    ("Log out", "退出"),
    ("Log in", "登录"),
    ("Save", "保存"),
    ("Saved.", "已保存。"),
    ("Cancel", "取消"),
    ("Error", "错误"),
    ("Back to the dashboard", "返回概览"),
    ("Page not found", "页面不存在"),
    (
        "The console has no page at this address:",
        "控制台没有这个地址的页面：",
    ),
    ("any", "全部"),
    ("yes", "是"),
    ("no", "否"),
    ("new", "新发现"),
    ("confirmed", "已确认"),
    ("dismissed", "已排除"),
    ("licensed", "已授权"),
    ("taken down", "已下架"),
    ("taken_down", "已下架"),
    ("reopen", "重新打开"),
    ("queued", "排队中"),
    ("running", "进行中"),
    ("ready", "已生成"),
    ("failed", "失败"),
    ("succeeded", "已完成"),
    // Login.
    (
        "Paste a publisher API key (chk_…), or the operator key (COPYHOUND_SERVER_ADMIN_KEY) to manage publishers and their keys. It is kept in an HttpOnly cookie.",
        "粘贴出版方 API 密钥（chk_…），或粘贴运维密钥（COPYHOUND_SERVER_ADMIN_KEY）以管理出版方及其密钥。密钥只保存在 HttpOnly Cookie 中。",
    ),
    (
        "unknown key: check that it was pasted whole, or ask your publisher's admin (or the operator) for a new one",
        "未知密钥：请检查是否完整粘贴，或向本出版方的管理员（或运维）索取新密钥",
    ),
    (
        "unknown key: a publisher key reads chk_<key id>_<64 hex digits>; check that it was pasted whole",
        "未知密钥：出版方密钥的格式为 chk_<密钥 id>_<64 位十六进制数>，请检查是否完整粘贴",
    ),
    (
        "too many login attempts; try again in {n} s",
        "登录尝试次数过多，请 {n} 秒后再试",
    ),
    (
        "your session is no longer valid; log in again",
        "会话已失效，请重新登录",
    ),
    // Dashboard and matches.
    ("Where to start", "从这里开始"),
    (
        "upload a novel or news articles (TXT, EPUB or JSON); its chapters are fingerprinted so that copies of them can be found.",
        "上传小说或新闻稿（TXT、EPUB 或 JSON），系统为其章节生成指纹，以便发现抄袭的副本。",
    ),
    (
        "name a site you suspect of copying your works; it is crawled on a schedule and its pages are compared with your works.",
        "填写疑似抄袭您作品的站点，系统按计划抓取该站点，并将其页面与您的作品比对。",
    ),
    ("works", "部作品"),
    ("watched sites", "个监控站点"),
    ("matches seen in 30 days", "条匹配（30 天内）"),
    ("New matches per day (30 days)", "每日新匹配（30 天）"),
    ("Newest infringements", "最新侵权"),
    ("Status", "状态"),
    ("Work", "作品"),
    ("Site", "站点"),
    ("Score at least", "最低分数"),
    ("Seen since", "发现于此日期之后"),
    ("Seen before", "首次发现早于此日期"),
    ("Review status", "审核状态"),
    (
        "default (notices: confirmed; other formats: all)",
        "默认（通知：仅已确认；其他格式：全部）",
    ),
    ("confirmed only", "仅已确认"),
    ("confirmed and unreviewed", "已确认和未审核"),
    (
        "all, dismissed and licensed included",
        "全部（含已驳回和已授权）",
    ),
    ("confirmed_and_unreviewed", "已确认和未审核"),
    ("all", "全部"),
    ("before", "早于"),
    (
        "Takedown notices, per site (Chinese and English)",
        "删除通知，每个网站一份（中文和英文）",
    ),
    (
        "Takedown notices as e-mail drafts (mbox)",
        "删除通知邮件草稿（mbox）",
    ),
    ("Filter", "筛选"),
    ("Selected:", "所选："),
    ("Note (optional)", "备注（可选）"),
    ("Confirm", "确认侵权"),
    ("Dismiss", "排除"),
    ("Taken down", "已下架"),
    ("Reopen", "重新打开"),
    ("all on this page", "全选本页"),
    ("Page", "页面"),
    ("Work / chapter", "作品 / 章节"),
    ("Score", "分数"),
    ("Coverage", "覆盖率"),
    ("Last seen (UTC)", "最近发现（UTC）"),
    ("No matches yet.", "暂无匹配。"),
    ("Next page →", "下一页 →"),
    // Match detail.
    ("Match", "匹配"),
    ("Evidence:", "证据："),
    ("captured response (WARC)", "抓取的原始响应（WARC）"),
    ("manifest with SHA-256 digests", "含 SHA-256 摘要的清单"),
    (
        "time-stamped bundle that verifies offline",
        "带可信时间戳、可离线验证的证据包",
    ),
    ("Copies:", "抄袭："),
    ("Score:", "分数："),
    ("chapter coverage:", "章节覆盖率："),
    ("page coverage:", "页面覆盖率："),
    ("first seen (UTC):", "首次发现（UTC）："),
    ("last seen:", "最近发现："),
    (
        "Note for the audit trail (optional)",
        "审核记录备注（可选）",
    ),
    ("Confirm infringement", "确认侵权"),
    ("Licensed", "已授权"),
    ("Side by side", "对照"),
    ("Registered chapter", "登记的章节"),
    ("Crawled page", "抓取的页面"),
    ("chapter text unavailable", "章节文本不可用"),
    ("page text unavailable", "页面文本不可用"),
    ("Evidence excerpts", "证据摘录"),
    ("Chapter", "章节"),
    ("Review history", "审核记录"),
    // Works.
    ("Id", "编号"),
    ("Title", "标题"),
    ("Author", "作者"),
    ("Kind", "类型"),
    ("Language", "语言"),
    ("Updated", "更新时间"),
    (
        "No works registered yet: upload one below.",
        "尚未登记作品：请在下方上传。",
    ),
    ("Showing the first 200.", "仅显示前 200 项。"),
    ("Register a work", "登记作品"),
    (
        "File (TXT in UTF-8 or GBK, EPUB, or JSON)",
        "文件（UTF-8 或 GBK 编码的 TXT、EPUB 或 JSON）",
    ),
    ("from the file when empty", "留空则取自文件"),
    ("novel", "小说"),
    ("news", "新闻"),
    (
        "Chapter heading (TXT; regular expression, empty: 第X章 / 第X回 / Chapter N)",
        "章节标题（TXT；正则表达式，留空则识别 第X章 / 第X回 / Chapter N）",
    ),
    ("Preview the chapters", "预览章节"),
    (
        "Nothing is stored until you confirm.",
        "确认前不会保存任何内容。",
    ),
    ("Delete work", "删除作品"),
    ("chapters", "章"),
    ("indexed", "已索引"),
    ("pending", "待处理"),
    ("Licensed hosts", "授权站点"),
    ("Where it lives", "盗版分布"),
    (
        "Release timetable (cron, UTC; at most hourly; empty: none)",
        "更新时间表（cron，UTC；至多每小时一次；留空则无）",
    ),
    ("Next release", "下次更新"),
    ("Count", "计数"),
    ("matches a reviewer confirmed", "经审核确认的匹配"),
    (
        "every match as it is found (minutes after a copy appears, before review)",
        "每个新发现的匹配（盗版出现几分钟内，审核之前）",
    ),
    (
        "The list pages that led to this work's copies, per site: a new chapter sends the crawler back to them at once, then less often over the next hour.",
        "各站点上引向本作品盗版的目录页：新章节发布时，爬虫立即回访这些页面，此后一小时内逐渐放缓。",
    ),
    ("Last release", "最近更新"),
    ("Watched page", "监控页面"),
    ("Copies it led to", "引向的盗版"),
    ("Last checked", "最近检查"),
    ("Changes every", "更新间隔"),
    ("never", "从未"),
    ("not measured yet", "尚未测得"),
    (
        "No site is known to carry this work yet: its pages are watched once a crawl matches them.",
        "尚未发现转载本作品的站点：抓取匹配到盗版后即开始监控。",
    ),
    (
        "Hosts licensed to carry this work, one per line; their copies are recorded as licensed",
        "获授权转载本作品的站点，每行一个；其上的副本记为已授权",
    ),
    ("none", "无"),
    // Upload preview.
    ("Preview:", "预览："),
    ("Keep", "保留"),
    ("Merge into previous", "并入上一章"),
    ("Title and text", "标题与正文"),
    ("characters", "字"),
    (
        "Edit titles and text, drop a chapter, or merge it into the one before; nothing is stored until you confirm.",
        "可修改标题和正文、删除章节或将其并入上一章；确认前不会保存任何内容。",
    ),
    ("Register", "登记"),
    // Sites.
    ("Watched sites", "监控站点"),
    ("Name", "名称"),
    ("Seeds", "起始网址"),
    ("Schedule", "计划"),
    ("Enabled", "启用"),
    ("on demand", "按需"),
    ("No sites yet: add one below.", "暂无站点：请在下方添加。"),
    ("Add a site", "添加站点"),
    ("Start URLs, one per line", "起始网址，每行一个"),
    (
        "Schedule (cron, UTC; empty: on demand)",
        "计划（cron，UTC；留空为按需）",
    ),
    ("Pages per run", "每次抓取页数"),
    ("Requests per second", "每秒请求数"),
    ("Add site", "添加站点"),
    ("Seeds:", "起始网址："),
    ("Schedule:", "计划："),
    ("Enabled:", "启用："),
    ("Depth:", "深度："),
    ("Budget:", "预算："),
    ("pages", "页"),
    ("Rate:", "速率："),
    ("Crawl now", "立即抓取"),
    ("Disable", "停用"),
    ("Enable", "启用"),
    ("Edit", "编辑"),
    ("What this site copied", "此站点抄袭的内容"),
    ("Best coverage", "最高覆盖率"),
    ("Pages", "页面数"),
    ("First seen (UTC)", "首次发现（UTC）"),
    ("Last seen", "最近发现"),
    ("Nothing found on this site yet.", "尚未在此站点发现抄袭。"),
    ("Crawl runs", "抓取记录"),
    ("Who to notify", "通知对象"),
    ("Send notices to", "通知发送至"),
    ("no abuse address found", "未找到投诉邮箱"),
    (
        "A CDN hides the origin host; its abuse desk forwards notices to it.",
        "CDN 隐藏了源站；其投诉渠道会把通知转交源站。",
    ),
    ("Hosting network", "托管网络"),
    ("Registrar", "注册商"),
    ("Looked up by RDAP (UTC):", "RDAP 查询时间（UTC）："),
    (
        "Look up the registrar, the hosting network and any CDN",
        "查询注册商、托管网络和 CDN",
    ),
    (
        "Recipient lookups are not configured (rdap.bootstrap).",
        "未配置通知对象查询（rdap.bootstrap）。",
    ),
    ("Run", "编号"),
    ("Created", "创建时间"),
    ("Fetched", "已抓取"),
    ("New", "新增"),
    ("Changed", "变更"),
    ("Failed", "失败"),
    ("Recent errors", "最近错误"),
    ("Rendered", "渲染页数"),
    ("Text read:", "文字读取："),
    (
        "after the page's scripts ran in a browser",
        "页面脚本在浏览器中运行后读取",
    ),
    (
        "{n} characters decoded through the site's web font (the page's code points are not the characters it shows)",
        "{n} 个字符经网站字体解码（页面码位并非其显示的字符）",
    ),
    ("Pages read", "页面读取方式"),
    (
        "as served; rendered when a script writes the text (default)",
        "按原样读取；文字由脚本写入时渲染（默认）",
    ),
    ("as served, never rendered", "按原样读取，从不渲染"),
    ("rendered by a browser, every page", "每页都用浏览器渲染"),
    ("Unreadable", "无法读取"),
    (
        "text drawn by a site font that could not be decoded",
        "文字由网站字体绘制，未能解码",
    ),
    (
        "text written by a script that did not run",
        "文字由页面脚本写入，脚本未运行",
    ),
    ("No runs yet.", "暂无抓取记录。"),
    // Reports.
    ("Generate a report", "生成报告"),
    ("Format", "格式"),
    (
        "HTML (charts, side-by-side evidence)",
        "HTML（图表与对照证据）",
    ),
    ("CSV, one row per match", "CSV（每条匹配一行）"),
    ("Evidence package (WARC)", "证据包（WARC）"),
    ("all works", "全部作品"),
    ("all sites", "全部站点"),
    ("Generate", "生成"),
    ("Generated", "已生成的报告"),
    ("Report", "报告"),
    ("Scope", "范围"),
    ("Requested (UTC)", "请求时间（UTC）"),
    ("everything", "全部"),
    ("Download", "下载"),
    ("No reports yet.", "暂无报告。"),
    // Policy.
    ("Infringement policy", "侵权判定规则"),
    ("Kind of work", "作品类型"),
    ("Minimum copied characters", "最少抄袭字数"),
    (
        "Minimum share of a short chapter (%)",
        "短章节最低抄袭比例（%）",
    ),
    ("In force", "当前生效"),
    ("Novels", "小说"),
    ("News articles", "新闻稿"),
    (
        "Only the publisher's admin keys edit the policy.",
        "只有出版方管理员密钥可以修改规则。",
    ),
    // Alerts.
    ("E-mail alerts", "邮件提醒"),
    ("deleted work", "已删除的作品"),
    ("Site:", "站点："),
    ("E-mail to the alert recipients", "邮件发给提醒收件人"),
    (
        "A schedule set to e-mail sends each report, once ready, to the recipients on the Alerts page: attached, or linked to the console when it is large.",
        "设为邮件发送的计划会在每份报告生成后发给“提醒”页的收件人：作为附件，文件较大时附控制台链接。",
    ),
    ("Send a test e-mail", "发送测试邮件"),
    (
        "to the saved recipients, through the operator's mail server (one a minute)",
        "发给已保存的收件人，经运维配置的邮件服务器（每分钟一封）",
    ),
    ("Delivered to:", "已送达："),
    ("Not delivered:", "未送达："),
    (
        "Alert after this many newly confirmed matches",
        "新确认的侵权达到此数量时发送提醒",
    ),
    ("No recipients: no e-mail.", "没有收件人则不发送邮件。"),
    ("Rights holder and language", "权利人信息与语言"),
    (
        "Takedown notices are signed with these details; alert e-mails are written in this language.",
        "删除通知以这些信息署名；提醒邮件使用此语言。",
    ),
    ("not set (English alerts)", "未设置（英文提醒）"),
    ("Rights holder (legal name)", "权利人（法定名称）"),
    ("Address", "地址"),
    ("Contact", "联系人"),
    ("E-mail", "电子邮件"),
    ("Telephone", "电话"),
    (
        "Only the publisher's admin keys edit the profile.",
        "只有出版方管理员密钥可以修改权利人信息。",
    ),
    (
        "Only the publisher's admin keys edit alerts.",
        "只有出版方管理员密钥可以修改提醒。",
    ),
    // People.
    ("People and API keys", "成员与 API 密钥"),
    ("Key", "密钥"),
    ("Holder", "持有人"),
    ("Role", "角色"),
    ("Created (UTC)", "创建时间（UTC）"),
    ("State", "状态"),
    ("admin", "管理员"),
    ("reviewer", "审核员"),
    ("revoked", "已吊销"),
    ("active", "有效"),
    ("Revoke", "吊销"),
    ("your key", "当前密钥"),
    ("Add a person or system", "添加成员或系统"),
    ("Create key", "创建密钥"),
    // Operator.
    ("Publishers", "出版方"),
    ("operator", "运营方"),
    ("Admin key for", "管理员密钥："),
    (
        "copy it now: it is not stored and cannot be shown again.",
        "请立即复制：密钥不会被保存，也无法再次显示。",
    ),
    ("New publisher", "新建出版方"),
    ("books", "图书"),
    ("Id (optional)", "编号（可选）"),
    ("First admin's name", "首位管理员姓名"),
    ("Create publisher and admin key", "创建出版方和管理员密钥"),
    ("All publishers", "全部出版方"),
    ("Another admin key", "补发管理员密钥"),
    ("holder's name", "持有人姓名"),
    ("Issue", "签发"),
    ("No publishers yet.", "还没有出版方。"),
    ("Next page", "下一页"),
    (
        "You are logged in with the installation's operator key. Create a publisher and its first admin key here; that admin then adds their own people, works and sites from the console.",
        "你正在使用本系统的运营方密钥。在这里创建出版方及其首个管理员密钥；之后由该管理员在控制台中添加成员、作品和站点。",
    ),
    // Report schedules.
    ("Schedules", "定时报告"),
    ("Schedules saved.", "定时设置已保存。"),
    ("Cron (UTC)", "Cron 表达式（UTC）"),
    ("Next run (UTC)", "下次运行（UTC）"),
    ("Save schedules", "保存定时设置"),
    (
        "Only the publisher's admin keys edit schedules.",
        "只有出版方管理员密钥可以修改定时设置。",
    ),
    (
        "Reports over all your matches, generated on a schedule (cron, UTC, at most hourly): 0 6 * * 1 is Mondays at 06:00, 0 3 * * * every day at 03:00. A new schedule's latest time runs at once. Clear a line to remove it.",
        "按计划（cron 表达式，UTC，最多每小时一次）生成覆盖全部侵权记录的报告：0 6 * * 1 表示每周一 06:00，0 3 * * * 表示每天 03:00。新计划的最近一个时间点会立即运行。清空一行即可删除该计划。",
    ),
    // Match order.
    ("Order", "排序"),
    ("newest first", "最新优先"),
    ("highest score first", "得分最高优先"),
    // Work editing.
    ("Preview", "预览"),
    ("Save the work", "保存作品"),
    (
        "Choose another id, or leave it empty for a generated one.",
        "请换一个 id，或留空由系统生成。",
    ),
    (
        "Warnings: check these before you confirm; they do not stop the registration.",
        "警告：请在确认前核对以下各项；它们不会阻止登记。",
    ),
    ("Edit title and chapters", "编辑标题与章节"),
    (
        "Saving replaces the work's chapters: changed chapters are fingerprinted and compared again.",
        "保存会替换作品的章节：有改动的章节会重新生成指纹并重新比对。",
    ),
    // Text with numbers, and table headings.
    (
        "When a copy counts as an infringement, per kind of work. A page infringes when it carries at least the minimum of copied characters of a chapter or article; a chapter too short to reach twice that also counts when the page carries the minimum share of it. Empty fields keep the installation's values ({chars} characters, {share}%). Changes apply to pages compared from now on.",
        "按作品类型设定何时算作侵权：页面复制某章节或文章的字数达到最低字数即构成侵权；章节过短、不足该字数两倍时，页面复制其比例达到最低比例也算侵权。留空则沿用系统设置（{chars} 字，{share}%）。修改只对此后比对的页面生效。",
    ),
    ("When", "时间"),
    ("Who", "操作人"),
    ("Note", "备注"),
    ("Characters", "字数"),
    ("Fingerprint", "指纹"),
    ("Register {n} chapters", "登记 {n} 个章节"),
    (
        "Counted over the newest {n} matches.",
        "按最新的 {n} 条侵权记录统计。",
    ),
    ("work", "作品"),
    ("site", "站点"),
    ("since", "起始"),
    ("New key for", "新密钥："),
    ("an unnamed holder", "未命名持有人"),
    (
        "Visits a month (your estimate; weighs the site's reach into its matches' scores)",
        "每月访问量（估计值，站点影响力计入其侵权记录的得分）",
    ),
    // Longer text.
    (
        "An e-mail goes to these people once the given number of matches has been confirmed since the last alert: a table of the pages, works and chapters. However many scheduler processes run, each alert is sent once.",
        "自上次提醒以来新确认的侵权达到设定数量时，向以下收件人发送邮件，列出页面、作品与章节。无论运行多少个调度进程，每条提醒只发送一次。",
    ),
    (
        "The operator has not configured a mail server ([smtp]): no e-mail goes out until they do.",
        "运维尚未配置邮件服务器（[smtp]），配置之前不会发送邮件。",
    ),
    (
        "Recipients, one per line (legal@publisher.example or Legal <legal@publisher.example>)",
        "收件人，每行一个（legal@publisher.example 或 Legal <legal@publisher.example>）",
    ),
    (
        "Everyone who works in the console or calls the API holds a key of this publisher. A reviewer key reads and reviews; an admin key also manages keys and the infringement policy. Reviews record the holder's name.",
        "使用控制台或调用 API 的每个人都持有本出版方的一把密钥。审核员密钥可查看和审核；管理员密钥还可管理密钥和侵权判定规则。审核记录会写明持有人姓名。",
    ),
    (
        "Reports render in the background; reload to see new ones ready. Scheduled reports appear here too.",
        "报告在后台生成，刷新页面即可看到；定时报告也会出现在这里。",
    ),
    ("Page:", "页面："),
    ("Not reviewed yet.", "尚未审核。"),
    ("No matches.", "暂无匹配。"),
    ("Chapters", "章节"),
    // Suggested sites.
    ("Suggested", "推荐站点"),
    ("Searched for your titles at:", "在此搜索您的作品标题："),
    ("Suggested sites", "推荐站点"),
    (
        "Sites your watched sites link to or name in their text, and sites your book-source files list. Each was checked once: its robots.txt and one page. Nothing more is fetched from it until you accept it.",
        "您监控的站点链接到或在正文中提到的站点，以及您导入的书源文件列出的站点。每个站点只检查过一次：读取 robots.txt 和一个页面。在您接受之前，不会再从该站点抓取任何内容。",
    ),
    ("Show", "显示"),
    ("open", "待决定"),
    ("accepted", "已接受"),
    ("verified", "已检查"),
    ("unreachable", "无法访问"),
    (
        "No suggested sites here yet. Crawls of your watched sites suggest the sites they point at.",
        "这里还没有推荐站点。抓取您监控的站点时，会推荐它们指向的站点。",
    ),
    ("Why", "原因"),
    ("What the check found", "检查结果"),
    ("from", "来自"),
    ("Chinese characters", "个汉字"),
    ("names your works", "提到您的作品"),
    ("not checked yet", "尚未检查"),
    ("watched site", "已监控站点"),
    ("Accept", "接受"),
    (
        "Import a reader app's book-source file with",
        "导入阅读软件的书源文件：使用",
    ),
    ("or", "或"),
];

/// Texts of the handlers that templates show through the `t` filter.
#[cfg(test)]
const SHOWN_THROUGH_THE_FILTER: &[&str] = &[
    super::login::UNKNOWN_KEY,
    super::login::UNKNOWN_PARTIAL_KEY,
    super::login::THROTTLED,
    super::login::EXPIRED,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_this_site_are_redirected_to() {
        for (referer, expected) in [
            ("http://127.0.0.1:8080/ui/sites?x=1", Some("/ui/sites?x=1")),
            ("https://console.example/", Some("/")),
            ("/ui/works", Some("/ui/works")),
            ("http://127.0.0.1:8080/\\evil.example/", None),
            ("http://127.0.0.1:8080//evil.example/", None),
            ("/\\evil.example/", None),
            ("//evil.example/", None),
            ("\\\\evil.example/", None),
            ("javascript:alert(1)", None),
            ("evil.example", None),
        ] {
            assert_eq!(local_path_of(referer).as_deref(), expected, "{referer}");
        }
    }

    /// Every text a template marks for translation has its Chinese: a page
    /// half in English is what the fallback would otherwise hide.
    #[test]
    fn every_marked_text_of_the_templates_has_its_chinese() {
        let known: std::collections::HashSet<&str> = ZH.iter().map(|(en, _)| *en).collect();
        let marked = regex::Regex::new(
            r#""((?:[^"\\]|\\.)*)"\s*\|\s*t\b|\(\s*"([^"]*)"\s+if[^)]*?else\s+"([^"]*)"\s*\)\s*\|\s*t\b"#,
        )
        .unwrap();
        let mut missing = Vec::new();
        let mut checked = 0;
        for (name, source) in super::super::TEMPLATES {
            for found in marked.captures_iter(source) {
                for text in found.iter().skip(1).flatten() {
                    checked += 1;
                    if !known.contains(text.as_str()) {
                        missing.push(format!("{name}: {:?}", text.as_str()));
                    }
                }
            }
        }
        assert!(
            checked > 150,
            "the pattern finds the marked texts ({checked})"
        );
        assert!(missing.is_empty(), "no Chinese for {missing:#?}");
    }

    /// Messages the handlers show through the `t` filter have their Chinese too.
    #[test]
    fn every_message_shown_through_the_filter_has_its_chinese() {
        let known: std::collections::HashSet<&str> = ZH.iter().map(|(en, _)| *en).collect();
        for text in SHOWN_THROUGH_THE_FILTER {
            assert!(known.contains(text), "no Chinese for {text:?}");
        }
    }

    #[test]
    fn the_cookie_wins_then_the_first_accepted_language() {
        let headers = |pairs: &[(axum::http::HeaderName, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.append(name.clone(), HeaderValue::from_str(value).unwrap());
            }
            map
        };
        assert_eq!(requested(&headers(&[])), Lang::En);
        assert_eq!(
            requested(&headers(&[(ACCEPT_LANGUAGE, "zh-CN,zh;q=0.9,en;q=0.8")])),
            Lang::Zh
        );
        assert_eq!(
            requested(&headers(&[(ACCEPT_LANGUAGE, "en-US,zh;q=0.5")])),
            Lang::En
        );
        assert_eq!(
            requested(&headers(&[
                (ACCEPT_LANGUAGE, "zh-CN"),
                (COOKIE, "copyhound_session=x; copyhound_lang=en")
            ])),
            Lang::En
        );
        assert_eq!(
            requested(&headers(&[(COOKIE, "copyhound_lang=zh")])),
            Lang::Zh
        );
        let keys: std::collections::HashSet<&str> = ZH.iter().map(|(en, _)| *en).collect();
        assert_eq!(keys.len(), ZH.len(), "each English text once");
    }
}
