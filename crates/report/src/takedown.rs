//! Takedown notice drafts, one per infringing site, in Chinese or English. The
//! wording belongs to the publisher's legal team, not to us: templates are plain
//! minijinja text files that can be replaced without recompiling (a directory
//! with `takedown.zh.txt` / `takedown.en.txt`); the built-in ones are defaults.
//! Drafts are meant to be reviewed by a person before they are sent.

use std::collections::BTreeMap;
use std::path::Path;

use copyhound_core::ids::SiteId;
use copyhound_core::model::{Language, MatchStatus};
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

/// Which matches a notice lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TakedownOptions {
    /// Statuses listed (default: confirmed only; add `New` to draft before review).
    pub statuses: Vec<MatchStatus>,
    /// Language of the drafts.
    pub language: Language,
    /// Who sends the notice (name and contact), printed as the signature.
    pub sender: String,
}

impl Default for TakedownOptions {
    fn default() -> Self {
        Self {
            statuses: vec![MatchStatus::Confirmed],
            language: Language::Zh,
            sender: String::new(),
        }
    }
}

/// One drafted notice.
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
    /// The rendered text.
    pub text: String,
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

/// Returns one notice per site with listed matches, in site rank order.
///
/// A template sees `publisher`, `sender`, `date` (generation day), `site` (`name`,
/// `host`), `works` (titles) and `items` (each: `url`, `work_title`,
/// `chapter_title`, `chapter_index`, `chapter_coverage_percent`, `first_seen`,
/// `captured_at`, `page_body_sha256`, `match_id`).
pub fn render_takedown_notices(
    data: &ReportData,
    templates: &TakedownTemplates,
    options: &TakedownOptions,
) -> Result<Vec<TakedownNotice>> {
    let template = templates
        .environment
        .get_template(template_name(options.language))
        .map_err(|error| {
            Error::with_source(ErrorKind::Internal, "takedown template missing", error)
        })?;
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
            let context = minijinja::context! {
                publisher => &data.publisher,
                sender => &options.sender,
                date => data.generated_at.format("%Y-%m-%d").to_string(),
                site => minijinja::context! { name => &first.site_name, host => &first.host },
                works => works,
                items => minijinja::Value::from(minijinja::value::Serde(&items)),
            };
            let text = template.render(context).map_err(|error| {
                Error::with_source(
                    ErrorKind::Config,
                    format!("takedown template failed for site {site_id}"),
                    error,
                )
            })?;
            Ok(TakedownNotice {
                site_id: site_id.clone(),
                site_name: first.site_name.clone(),
                host: first.host.clone(),
                urls: u32::try_from(listed.len()).unwrap_or(u32::MAX),
                text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build_report_data;
    use crate::testsuite::sample_input;

    #[test]
    fn drafts_list_confirmed_urls_with_hashes_per_site() {
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
        assert!(
            notice
                .text
                .contains("https://alpha.example/book/w_dragon/1.html")
        );
        assert!(notice.text.contains(&format!("{:064x}", 1)));
        assert!(notice.text.contains("示例出版社"));
        assert!(notice.text.contains("2024-03-01 08:00:00 UTC"));
    }

    #[test]
    fn english_drafts_and_new_matches_on_request() {
        let data = build_report_data(&sample_input());
        let options = TakedownOptions {
            statuses: vec![MatchStatus::Confirmed, MatchStatus::New],
            language: Language::En,
            sender: "Legal <legal@demo.example>".to_string(),
        };
        let notices =
            render_takedown_notices(&data, &TakedownTemplates::builtin().unwrap(), &options)
                .unwrap();
        assert_eq!(
            notices.iter().map(|notice| notice.urls).collect::<Vec<_>>(),
            [3, 2]
        );
        assert!(notices[0].text.contains("Notice of copyright infringement"));
        assert!(
            notices[0].text.contains("Legal <legal@demo.example>"),
            "plain text is not html-escaped"
        );
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
        let english = TakedownOptions {
            language: Language::En,
            ..TakedownOptions::default()
        };
        let notices = render_takedown_notices(&data, &templates, &english).unwrap();
        assert_eq!(notices[0].text, "To alpha.example: 2 urls");
        let chinese =
            render_takedown_notices(&data, &templates, &TakedownOptions::default()).unwrap();
        assert!(chinese[0].text.contains("侵权"));
        std::fs::write(directory.join("takedown.zh.txt"), "{% if %}").unwrap();
        let error = TakedownTemplates::from_dir(&directory).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
