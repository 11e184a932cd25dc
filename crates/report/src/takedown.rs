//! Takedown notice drafts, one per infringing site, in Chinese or English. The
//! wording belongs to the publisher's legal team, not to us: templates are plain
//! minijinja text files that can be replaced without recompiling (a directory
//! with `takedown.zh.txt` / `takedown.en.txt`); the built-in ones are defaults.
//! Drafts are meant to be reviewed by a person before they are sent.

use std::collections::BTreeMap;
use std::path::Path;

use copyhound_core::ids::SiteId;
use copyhound_core::model::{Language, MatchStatus, Recipients, ReviewScope, is_email_address};
use copyhound_core::{Error, ErrorKind, Result};
use minijinja::Environment;
use minijinja::syntax::SyntaxConfig;
use serde::Serialize;

use crate::data::{MatchEvidence, ReportData};

const BUILTIN_ZH: &str = include_str!("../templates/takedown.zh.txt");
const BUILTIN_EN: &str = include_str!("../templates/takedown.en.txt");

fn template_name(language: Language) -> &'static str {
    match language {
        Language::Zh => "takedown.zh.txt",
        Language::En => "takedown.en.txt",
    }
}

/// The notice templates, compiled; built-in defaults unless overridden.
#[derive(Debug)]
pub struct TakedownTemplates {
    environment: Environment<'static>,
}

impl TakedownTemplates {
    /// Returns the built-in templates (`crates/report/templates/takedown.*.txt`).
    pub fn builtin() -> Result<Self> {
        Self::from_sources(BUILTIN_ZH.to_string(), BUILTIN_EN.to_string())
    }

    /// Returns the templates of `directory`: `takedown.zh.txt` and
    /// `takedown.en.txt` where present, the built-in ones otherwise. A template
    /// that does not parse is a `Config` error naming the file.
    pub fn from_dir(directory: &Path) -> Result<Self> {
        let load = |language: Language, builtin: &str| -> Result<String> {
            let path = directory.join(template_name(language));
            let present = path.try_exists().map_err(|error| {
                Error::with_source(
                    ErrorKind::Config,
                    format!("cannot access {}", path.display()),
                    error,
                )
            })?;
            if !present {
                return Ok(builtin.to_string());
            }
            std::fs::read_to_string(&path).map_err(|error| {
                Error::with_source(
                    ErrorKind::Config,
                    format!("cannot read {}", path.display()),
                    error,
                )
            })
        };
        Self::from_sources(
            load(Language::Zh, BUILTIN_ZH)?,
            load(Language::En, BUILTIN_EN)?,
        )
    }

    /// Returns templates compiled from the given sources.
    pub fn from_sources(zh: String, en: String) -> Result<Self> {
        let mut environment = Environment::new();
        environment.set_syntax(
            SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .map_err(|error| {
                    Error::with_source(ErrorKind::Internal, "invalid template syntax config", error)
                })?,
        );
        for (language, source) in [(Language::Zh, zh), (Language::En, en)] {
            let name = template_name(language);
            environment
                .add_template_owned(name, source)
                .map_err(|error| {
                    Error::with_source(
                        ErrorKind::Config,
                        format!("takedown template {name} does not parse"),
                        error,
                    )
                })?;
        }
        Ok(Self { environment })
    }
}

/// Which matches a notice lists, and in which languages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TakedownOptions {
    /// Statuses listed (default: confirmed only; add `New` to draft before review).
    pub statuses: Vec<MatchStatus>,
    /// Languages of each notice, in order (default: Chinese, then English).
    pub languages: Vec<Language>,
}

impl Default for TakedownOptions {
    fn default() -> Self {
        Self {
            statuses: vec![MatchStatus::Confirmed],
            languages: vec![Language::Zh, Language::En],
        }
    }
}

impl TakedownOptions {
    /// Returns the options of the report `data`: the statuses of its review
    /// scope (confirmed only by default) that a notice may list (confirmed,
    /// and unreviewed when asked for: never dismissed, licensed or taken
    /// down), and both languages, the publisher's first.
    pub fn for_report(data: &ReportData) -> Self {
        let review = data.scope.review.unwrap_or(ReviewScope::Confirmed);
        let statuses = [MatchStatus::Confirmed, MatchStatus::New]
            .into_iter()
            .filter(|status| review.includes(*status))
            .collect();
        let languages = match data.profile.language {
            Some(Language::En) => vec![Language::En, Language::Zh],
            Some(Language::Zh) | None => vec![Language::Zh, Language::En],
        };
        Self {
            statuses,
            languages,
        }
    }
}

/// One drafted notice, to one site.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TakedownNotice {
    /// The site it is addressed to.
    pub site_id: SiteId,
    /// Its display name.
    pub site_name: String,
    /// Its host.
    pub host: String,
    /// Infringing URLs listed.
    pub urls: u32,
    /// The notice in each language of the options, in order: the rendered
    /// template (its first line `Subject: ...` / `主题：...` when it has one).
    pub texts: Vec<(Language, String)>,
    /// Who to send it to, when the report looked them up.
    pub recipients: Option<Recipients>,
}

/// The subject-line prefixes the templates start with.
const SUBJECT_PREFIXES: [&str; 3] = ["Subject:", "主题：", "主题:"];

impl TakedownNotice {
    /// The subject: each language's subject line, joined by ` / `.
    pub fn subject(&self) -> String {
        let subjects: Vec<&str> = self
            .texts
            .iter()
            .filter_map(|(_, text)| split_subject(text).0)
            .collect();
        if subjects.is_empty() {
            return format!("Copyright infringement on {}", self.host);
        }
        subjects.join(" / ")
    }

    /// The body of the e-mail draft: each language's text without its
    /// subject line, separated by a rule.
    pub fn body(&self) -> String {
        self.texts
            .iter()
            .map(|(_, text)| split_subject(text).1.trim_matches('\n'))
            .collect::<Vec<_>>()
            .join(LANGUAGE_RULE)
            + "\n"
    }
}

/// Separates the languages of one notice.
const LANGUAGE_RULE: &str =
    "\n\n---------------------------------------------------------------\n\n";

/// Returns (subject, rest) of a rendered notice.
fn split_subject(text: &str) -> (Option<&str>, &str) {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    SUBJECT_PREFIXES
        .iter()
        .find_map(|prefix| first.trim().strip_prefix(prefix))
        .map_or((None, text), |subject| (Some(subject.trim()), rest))
}

#[derive(Serialize)]
struct NoticeItem<'a> {
    url: &'a str,
    work_title: &'a str,
    chapter_title: &'a str,
    chapter_index: Option<u32>,
    chapter_coverage_percent: u32,
    first_seen: String,
    captured_at: String,
    page_body_sha256: &'a str,
    match_id: &'a str,
}

fn item(evidence: &MatchEvidence) -> NoticeItem<'_> {
    let time =
        |at: copyhound_core::model::Timestamp| at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    NoticeItem {
        url: &evidence.url,
        work_title: &evidence.work_title,
        chapter_title: &evidence.chapter_title,
        chapter_index: evidence.chapter_index,
        chapter_coverage_percent: (evidence.chapter_coverage.clamp(0.0, 1.0) * 100.0).round()
            as u32,
        first_seen: time(evidence.first_seen),
        captured_at: time(evidence.captured_at),
        page_body_sha256: &evidence.page_body_sha256,
        match_id: evidence.match_id.as_str(),
    }
}

/// The rights holder as templates see it: the profile, the legal name
/// falling back to the publisher's display name.
#[derive(Serialize)]
struct Holder<'a> {
    name: &'a str,
    address: &'a str,
    contact_name: &'a str,
    email: &'a str,
    phone: &'a str,
}

fn holder(data: &ReportData) -> Holder<'_> {
    let profile = &data.profile;
    Holder {
        name: if profile.legal_name.trim().is_empty() {
            &data.publisher
        } else {
            &profile.legal_name
        },
        address: &profile.address,
        contact_name: &profile.contact_name,
        email: &profile.email,
        phone: &profile.phone,
    }
}

/// Returns the listed matches grouped per site, in site rank order.
fn listed_by_site<'a>(
    data: &'a ReportData,
    options: &TakedownOptions,
) -> Vec<(&'a SiteId, Vec<&'a MatchEvidence>)> {
    let mut by_site: BTreeMap<&SiteId, Vec<&MatchEvidence>> = BTreeMap::new();
    for evidence in data
        .evidence
        .iter()
        .filter(|one| options.statuses.contains(&one.status))
    {
        by_site.entry(&evidence.site_id).or_default().push(evidence);
    }
    let rank_of = |site_id: &SiteId| {
        data.sites
            .iter()
            .find(|site| site.site_id == *site_id)
            .map(|site| site.rank)
    };
    let mut ordered: Vec<(&SiteId, Vec<&MatchEvidence>)> = by_site.into_iter().collect();
    ordered.sort_by_key(|(site_id, _)| (rank_of(site_id).unwrap_or(u32::MAX), (*site_id).clone()));
    ordered
}

/// Returns one notice per site with listed matches, in site rank order.
///
/// A template sees `publisher`, `holder` (`name`: the legal name or else the
/// publisher's, `address`, `contact_name`, `email`, `phone`), `sender` (the
/// contact name and e-mail on one line), `date` (generation day), `site`
/// (`name`, `host`), `works` (titles) and `items` (each: `url`, `work_title`,
/// `chapter_title`, `chapter_index`, `chapter_coverage_percent`,
/// `first_seen`, `captured_at`, `page_body_sha256`, `match_id`) and
/// `recipients` (the site's [`Recipients`] as JSON, or none).
pub fn render_takedown_notices(
    data: &ReportData,
    templates: &TakedownTemplates,
    options: &TakedownOptions,
) -> Result<Vec<TakedownNotice>> {
    let holder = holder(data);
    let sender = [holder.contact_name, holder.email]
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    listed_by_site(data, options)
        .into_iter()
        .map(|(site_id, listed)| {
            let first = listed
                .first()
                .copied()
                .expect("a site is grouped only with at least one match");
            let mut works: Vec<String> = listed.iter().map(|one| one.work_title.clone()).collect();
            works.sort_unstable();
            works.dedup();
            let items: Vec<NoticeItem<'_>> = listed.iter().copied().map(item).collect();
            let recipients = data
                .sites
                .iter()
                .find(|site| site.site_id == *site_id)
                .and_then(|site| site.recipients.clone());
            let context = minijinja::context! {
                recipients => minijinja::Value::from(minijinja::value::Serde(&recipients)),
                publisher => &data.publisher,
                holder => minijinja::Value::from(minijinja::value::Serde(&holder)),
                sender => &sender,
                date => data.generated_at.format("%Y-%m-%d").to_string(),
                site => minijinja::context! { name => &first.site_name, host => &first.host },
                works => works,
                items => minijinja::Value::from(minijinja::value::Serde(&items)),
            };
            let texts = options
                .languages
                .iter()
                .map(|language| {
                    let text = templates
                        .environment
                        .get_template(template_name(*language))
                        .and_then(|template| template.render(&context))
                        .map_err(|error| {
                            Error::with_source(
                                ErrorKind::Config,
                                format!("takedown template failed for site {site_id}"),
                                error,
                            )
                        })?;
                    Ok((*language, text))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(TakedownNotice {
                site_id: site_id.clone(),
                site_name: first.site_name.clone(),
                host: first.host.clone(),
                urls: u32::try_from(listed.len()).unwrap_or(u32::MAX),
                texts,
                recipients,
            })
        })
        .collect()
}

/// Returns the notices of `data` as one plain-text document: a heading,
/// then per site its notice in each language.
pub fn render_takedown_document(
    data: &ReportData,
    templates: &TakedownTemplates,
) -> Result<Vec<u8>> {
    let notices = render_takedown_notices(data, templates, &TakedownOptions::for_report(data))?;
    let mut out = format!(
        "CopyHound 侵权删除通知 / takedown notices: {publisher}, {date}\n\
         {count} 个网站 / site(s). 发送前请核对 / Review each notice before sending it.\n",
        publisher = data.publisher,
        date = data.generated_at.format("%Y-%m-%d"),
        count = notices.len(),
    );
    if notices.is_empty() {
        out.push_str(
            "\n没有可列入通知的侵权网页（默认只列出已确认的匹配）。\n\
             No page to list: notices list confirmed matches unless asked otherwise.\n",
        );
    }
    for (number, notice) in notices.iter().enumerate() {
        out.push_str(&format!(
            "\n\n===============================================================\n\
             {number}. {name} ({host}): {urls} URL(s)\n\
             ===============================================================\n\n",
            number = number + 1,
            name = notice.site_name,
            host = notice.host,
            urls = notice.urls,
        ));
        if let Some(recipients) = &notice.recipients {
            out.push_str(&recipient_lines(recipients));
            out.push('\n');
        }
        let texts: Vec<&str> = notice
            .texts
            .iter()
            .map(|(_, text)| text.trim_matches('\n'))
            .collect();
        out.push_str(&texts.join(LANGUAGE_RULE));
        out.push('\n');
    }
    Ok(out.into_bytes())
}

/// Returns the notices of `data` as e-mail drafts: one RFC 5322 message per
/// site (`X-Unsent: 1`), addressed `To:` the abuse address of the site's
/// recipients when they were looked up (the CDN's when one fronts the site,
/// else the hosting network's, else the registrar's; none otherwise: the
/// sender fills it in), in one mbox file. The body is base64 so no line of a hostile
/// page can pass for a header or an mbox separator.
pub fn render_takedown_mbox(data: &ReportData, templates: &TakedownTemplates) -> Result<Vec<u8>> {
    let notices = render_takedown_notices(data, templates, &TakedownOptions::for_report(data))?;
    let holder = holder(data);
    let mut out = String::new();
    for notice in &notices {
        out.push_str(&format!(
            "From copyhound {}\n",
            data.generated_at.format("%a %b %e %H:%M:%S %Y")
        ));
        out.push_str(&email_draft(notice, &holder, data.generated_at));
        out.push('\n');
    }
    Ok(out.into_bytes())
}

/// One notice as an e-mail draft (what an `.eml` file holds).
fn email_draft(
    notice: &TakedownNotice,
    holder: &Holder<'_>,
    date: copyhound_core::model::Timestamp,
) -> String {
    use base64::Engine as _;
    let mut message = String::new();
    if is_email_address(holder.email) && !holder.email.contains(['<', '>']) {
        message.push_str(&format!(
            "From: {}\n <{}>\n",
            encode_header(holder.name),
            holder.email
        ));
    }
    if let Some(to) = notice
        .recipients
        .as_ref()
        .and_then(Recipients::primary_email)
        .filter(|to| is_email_address(to) && !to.contains(['<', '>', ',', '"']))
    {
        message.push_str(&format!("To: {to}\n"));
    }
    message.push_str(&format!("Date: {}\n", date.to_rfc2822()));
    message.push_str(&format!("Subject: {}\n", encode_header(&notice.subject())));
    message.push_str("X-Unsent: 1\n");
    message.push_str(&format!(
        "X-CopyHound-Site: {}\n",
        notice
            .host
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .collect::<String>()
    ));
    message.push_str("MIME-Version: 1.0\n");
    message.push_str("Content-Type: text/plain; charset=utf-8\n");
    message.push_str("Content-Transfer-Encoding: base64\n\n");
    let encoded = base64::engine::general_purpose::STANDARD.encode(notice.body());
    for line in encoded.as_bytes().chunks(76) {
        message.push_str(std::str::from_utf8(line).expect("base64 is ascii"));
        message.push('\n');
    }
    message
}

/// Returns who to notify as lines of the takedown document: where to send
/// the notice first, then each contact found.
fn recipient_lines(recipients: &Recipients) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let contacts = |parts: &[Option<&str>]| -> String {
        parts
            .iter()
            .flatten()
            .map(|part| clean(part))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut lines = Vec::new();
    if let Some(to) = recipients.primary_email() {
        lines.push(format!("收件人 / Send to: {}", clean(to)));
    }
    if let Some(cdn) = &recipients.cdn {
        lines.push(format!(
            "  CDN: {} ({}): {}. 转交源站 / The CDN forwards notices to the origin host.",
            clean(&cdn.name),
            clean(&cdn.detected_by),
            contacts(&[cdn.abuse_email.as_deref(), cdn.abuse_url.as_deref()]),
        ));
    }
    if let Some(hosting) = &recipients.hosting {
        let network = contacts(&[
            hosting.name.as_deref(),
            hosting.cidr.as_deref(),
            hosting.organization.as_deref(),
        ]);
        lines.push(format!(
            "  托管网络 / Hosting network: {} [{}]: {}",
            clean(&hosting.address),
            network,
            contacts(&[
                hosting.abuse_email.as_deref(),
                hosting.abuse_phone.as_deref()
            ]),
        ));
    }
    if let Some(registrar) = &recipients.registrar {
        lines.push(format!(
            "  注册商 / Registrar of {}: {}: {}",
            clean(recipients.domain.as_deref().unwrap_or(&recipients.host)),
            clean(&registrar.name),
            contacts(&[
                registrar.abuse_email.as_deref(),
                registrar.abuse_phone.as_deref(),
                registrar.url.as_deref(),
            ]),
        ));
    }
    lines.push(format!(
        "  查询 / Looked up by RDAP: {}",
        recipients.looked_up_at.format("%Y-%m-%d %H:%M UTC")
    ));
    lines.join("\n") + "\n"
}

/// Returns `text` as a header value: as is when it is printable ASCII,
/// else RFC 2047 encoded-words (UTF-8, base64) of at most 36 bytes of text
/// each, folded onto continuation lines; a character is never split.
fn encode_header(text: &str) -> String {
    use base64::Engine as _;
    if text.chars().all(|c| c.is_ascii() && !c.is_ascii_control()) && !text.contains("=?") {
        return text.to_string();
    }
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in text.chars().filter(|c| !c.is_control()) {
        if chunk.len() + c.len_utf8() > 36 {
            words.push(std::mem::take(&mut chunk));
        }
        chunk.push(c);
    }
    if !chunk.is_empty() {
        words.push(chunk);
    }
    words
        .iter()
        .map(|word| {
            format!(
                "=?UTF-8?B?{}?=",
                base64::engine::general_purpose::STANDARD.encode(word)
            )
        })
        .collect::<Vec<_>>()
        .join("\n ")
}

#[cfg(test)]
mod tests {
    use copyhound_core::model::{PublisherProfile, ReviewScope};

    use super::*;
    use crate::build_report_data;
    use crate::testsuite::sample_input;

    fn zh(notice: &TakedownNotice) -> &str {
        &notice.texts[0].1
    }

    #[test]
    fn drafts_list_confirmed_urls_with_titles_and_hashes_per_site_in_both_languages() {
        let data = build_report_data(&sample_input());
        let notices = render_takedown_notices(
            &data,
            &TakedownTemplates::builtin().unwrap(),
            &TakedownOptions::default(),
        )
        .unwrap();
        assert_eq!(notices.len(), 1, "only site alpha has confirmed matches");
        let notice = &notices[0];
        assert_eq!(notice.urls, 2);
        let languages: Vec<Language> = notice.texts.iter().map(|(lang, _)| *lang).collect();
        assert_eq!(languages, [Language::Zh, Language::En]);
        for (_, text) in &notice.texts {
            assert!(text.contains("https://alpha.example/book/w_dragon/1.html"));
            assert!(text.contains(&format!("{:064x}", 1)));
            assert!(text.contains("龙城传说"), "the work by title: {text}");
            assert!(text.contains("2024-03-01 08:00:00 UTC"));
        }
        assert!(zh(notice).contains("示例出版社"));
        assert!(
            notice.texts[1]
                .1
                .contains("Notice of copyright infringement")
        );
        assert!(
            notice
                .subject()
                .contains(" / Notice of copyright infringement"),
            "{}",
            notice.subject()
        );
        assert!(!notice.body().contains("Subject:"));
    }

    #[test]
    fn the_rights_holder_signs_and_the_publishers_language_comes_first() {
        let mut input = sample_input();
        input.profile = PublisherProfile {
            language: Some(Language::En),
            legal_name: "Demo Culture Media Co., Ltd.".into(),
            address: "1 Example Road, Beijing".into(),
            contact_name: "Rights Desk".into(),
            email: "legal@demo.example".into(),
            phone: "+86 10 0000 0000".into(),
        };
        input.scope.review = Some(ReviewScope::ConfirmedAndUnreviewed);
        let data = build_report_data(&input);
        let options = TakedownOptions::for_report(&data);
        assert_eq!(options.languages, [Language::En, Language::Zh]);
        assert_eq!(options.statuses, [MatchStatus::Confirmed, MatchStatus::New]);
        let notices =
            render_takedown_notices(&data, &TakedownTemplates::builtin().unwrap(), &options)
                .unwrap();
        assert_eq!(
            notices.iter().map(|notice| notice.urls).collect::<Vec<_>>(),
            [3, 2]
        );
        let english = &notices[0].texts[0].1;
        for needle in [
            "Rights holder: Demo Culture Media Co., Ltd.",
            "Address: 1 Example Road, Beijing",
            "Contact: Rights Desk",
            "E-mail: legal@demo.example",
            "Telephone: +86 10 0000 0000",
        ] {
            assert!(english.contains(needle), "{needle} in {english}");
        }
        assert!(
            notices[0].texts[1]
                .1
                .contains("权利人：Demo Culture Media Co., Ltd.")
        );
        // A review scope of everything still never lists dismissed or licensed pages.
        input.scope.review = Some(ReviewScope::All);
        let everything = TakedownOptions::for_report(&build_report_data(&input));
        assert_eq!(
            everything.statuses,
            [MatchStatus::Confirmed, MatchStatus::New]
        );
    }

    #[test]
    fn the_document_has_every_site_in_both_languages() {
        let data = build_report_data(&sample_input());
        let bytes =
            render_takedown_document(&data, &TakedownTemplates::builtin().unwrap()).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("1. "), "{text}");
        assert!(text.contains("alpha.example"));
        assert!(text.contains("删除通知"));
        assert!(text.contains("Notice of copyright infringement"));
        assert_eq!(
            text.matches("https://alpha.example/book/w_dragon/1.html")
                .count(),
            2
        );
    }

    #[test]
    fn e_mail_drafts_are_one_message_per_site_with_an_encoded_subject() {
        use base64::Engine as _;
        let mut input = sample_input();
        input.profile.email = "legal@demo.example".into();
        input.profile.legal_name = "示例\r\nBcc: x@evil.example".into();
        input.scope.review = Some(ReviewScope::ConfirmedAndUnreviewed);
        let data = build_report_data(&input);
        let mbox = String::from_utf8(
            render_takedown_mbox(&data, &TakedownTemplates::builtin().unwrap()).unwrap(),
        )
        .unwrap();
        let messages: Vec<&str> = mbox.split("\nFrom copyhound ").collect();
        assert_eq!(messages.len(), 2, "{mbox}");
        assert!(mbox.starts_with("From copyhound "));
        let first = messages[0];
        let (head, body) = first.split_once("\n\n").unwrap();
        assert!(head.contains("\nX-Unsent: 1\n"), "{head}");
        assert!(head.contains("Subject: =?UTF-8?B?"), "{head}");
        assert!(head.contains("From: =?UTF-8?B?"), "{head}");
        assert!(!head.contains("Bcc:"), "no header injection: {head}");
        assert!(head.lines().all(|line| line.len() <= 78), "{head}");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(body.lines().collect::<String>())
            .unwrap();
        let text = String::from_utf8(decoded).unwrap();
        assert!(text.contains("https://alpha.example/book/w_dragon/1.html"));
        assert!(text.contains("侵权网页清单") && text.contains("Infringing pages"));
        let subject =
            encode_header("关于 alpha 侵犯著作权内容的删除通知 / Notice of copyright infringement");
        assert!(subject.lines().all(|line| line.len() <= 76), "{subject}");
    }

    #[test]
    fn notices_are_addressed_to_the_recipients_when_known() {
        use copyhound_core::model::{CdnFront, HostingNetwork, Registrar};
        let mut data = build_report_data(&sample_input());
        let templates = TakedownTemplates::builtin().unwrap();
        let unknown = String::from_utf8(render_takedown_mbox(&data, &templates).unwrap()).unwrap();
        assert!(!unknown.contains("\nTo: "), "{unknown}");
        data.sites[0].recipients = Some(Recipients {
            host: data.sites[0].host.clone(),
            domain: Some("alpha.example".into()),
            registrar: Some(Registrar {
                name: "Example Names Registrar".into(),
                abuse_email: Some("abuse@registrar.example".into()),
                ..Registrar::default()
            }),
            hosting: Some(HostingNetwork {
                address: "104.16.10.20".into(),
                name: Some("CLOUDFLARENET".into()),
                abuse_email: Some("abuse@cloudflare.com".into()),
                ..HostingNetwork::default()
            }),
            cdn: Some(CdnFront {
                name: "Cloudflare".into(),
                detected_by: "network CLOUDFLARENET".into(),
                abuse_email: Some("abuse@cloudflare.com".into()),
                abuse_url: Some("https://abuse.cloudflare.com/".into()),
            }),
            looked_up_at: data.generated_at,
            sources: Vec::new(),
            problems: Vec::new(),
        });
        let mbox = String::from_utf8(render_takedown_mbox(&data, &templates).unwrap()).unwrap();
        let (head, _) = mbox.split_once("\n\n").unwrap();
        assert!(head.contains("\nTo: abuse@cloudflare.com\n"), "{head}");
        let document =
            String::from_utf8(render_takedown_document(&data, &templates).unwrap()).unwrap();
        assert!(
            document.contains("收件人 / Send to: abuse@cloudflare.com"),
            "{document}"
        );
        assert!(
            document.contains("forwards notices to the origin host"),
            "{document}"
        );
        assert!(
            document.contains(
                "Registrar of alpha.example: Example Names Registrar: abuse@registrar.example"
            ),
            "{document}"
        );

        // An address that could smuggle another header is left out.
        let recipients = data.sites[0].recipients.as_mut().unwrap();
        recipients.cdn = None;
        recipients.hosting = None;
        recipients.registrar.as_mut().unwrap().abuse_email =
            Some("a@b.example\r\nBcc: x@evil.example".into());
        let mbox = String::from_utf8(render_takedown_mbox(&data, &templates).unwrap()).unwrap();
        assert!(!mbox.contains("\nTo: ") && !mbox.contains("Bcc:"), "{mbox}");
    }

    #[test]
    fn a_directory_overrides_one_language_and_keeps_the_other() {
        let directory =
            std::env::temp_dir().join(format!("copyhound-takedown-test-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(
            directory.join("takedown.en.txt"),
            "To {{ site.host }}: {{ items|length }} urls",
        )
        .unwrap();
        let templates = TakedownTemplates::from_dir(&directory).unwrap();
        let data = build_report_data(&sample_input());
        let notices =
            render_takedown_notices(&data, &templates, &TakedownOptions::default()).unwrap();
        assert_eq!(notices[0].texts[1].1, "To alpha.example: 2 urls");
        assert!(zh(&notices[0]).contains("侵权"));
        std::fs::write(directory.join("takedown.zh.txt"), "{% if %}").unwrap();
        let error = TakedownTemplates::from_dir(&directory).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
