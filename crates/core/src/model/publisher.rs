use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::ids::{ApiKeyId, PublisherId};

/// What a publisher publishes; it picks the defaults for works it registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PublisherKind {
    /// A novel platform or book publisher.
    Books,
    /// A news agency.
    News,
}

/// A tenant: everything it registers and everything found for it is visible to it alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Publisher {
    /// Its id.
    pub id: PublisherId,
    /// Display name.
    pub name: String,
    /// What it publishes.
    pub kind: PublisherKind,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When a copy counts as an infringement, per work kind; unset values
    /// are the installation's (`[matcher]`).
    #[serde(default, skip_serializing_if = "InfringementPolicy::is_default")]
    pub policy: InfringementPolicy,
    /// Who gets e-mail alerts, and when; set by the publisher's admins.
    #[serde(default, skip_serializing_if = "AlertSettings::is_off")]
    pub alerts: AlertSettings,
    /// Reports the scheduler generates for the publisher; set by its admins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub report_schedules: Vec<ReportScheduleSetting>,
    /// The rights holder's details, printed on takedown notices, and the
    /// language of its alert e-mails; set by its admins.
    #[serde(default, skip_serializing_if = "PublisherProfile::is_empty")]
    pub profile: PublisherProfile,
}

/// Who holds the rights, as a takedown notice names them, and the language
/// the publisher reads. Empty fields are left out of notices (the legal name
/// falls back to the publisher's display name).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PublisherProfile {
    /// Language of alert e-mails and the first language of notices; unset:
    /// English alerts, notices in Chinese then English.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<super::Language>,
    /// The rights holder's legal name (`某某文化传媒有限公司`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 200, pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$")
    )]
    pub legal_name: String,
    /// Postal address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 500,
            pattern = r"^[^\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f]*$"
        )
    )]
    pub address: String,
    /// Who signs notices (a person or a desk).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 200, pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$")
    )]
    pub contact_name: String,
    /// Where a host answers a notice.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "openapi", schema(schema_with = profile_email_schema))]
    pub email: String,
    /// Telephone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 50, pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$")
    )]
    pub phone: String,
}

impl PublisherProfile {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// Checks lengths, that no field but the address spans lines (they go
    /// into mail headers and signatures), and the e-mail address.
    pub fn validate(&self) -> crate::Result<()> {
        let fields = [
            ("legal_name", &self.legal_name, 200, false),
            ("address", &self.address, 500, true),
            ("contact_name", &self.contact_name, 200, false),
            ("email", &self.email, 254, false),
            ("phone", &self.phone, 50, false),
        ];
        for (name, value, most, multiline) in fields {
            if value.chars().count() > most {
                return Err(crate::Error::invalid(format!(
                    "profile.{name}: at most {most} characters"
                )));
            }
            let bad = |c: char| c.is_control() && !(multiline && (c == '\n' || c == '\r'));
            if value.chars().any(bad) {
                return Err(crate::Error::invalid(format!(
                    "profile.{name}: control characters are not allowed"
                )));
            }
        }
        if !self.email.is_empty() && !is_email_address(&self.email) {
            return Err(crate::Error::invalid(format!(
                "profile.email: {:?} is not an e-mail address",
                self.email
            )));
        }
        Ok(())
    }
}

/// A report generated on a cron schedule (UTC), over all the publisher's matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportScheduleSetting {
    /// Cron expression, 5 fields, UTC (`0 6 * * 1`: Mondays 06:00), at most hourly.
    #[cfg_attr(feature = "openapi", schema(schema_with = report_cron_schema))]
    pub cron: String,
    /// Output format.
    pub format: super::ReportFormat,
    /// E-mail each report, once rendered, to the publisher's alert recipients
    /// (`alerts.email_to`) through the installation's mail server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub email: bool,
}

/// Most report schedules per publisher.
pub const MAX_REPORT_SCHEDULES: usize = 10;
/// Longest report cron expression, characters.
pub const MAX_REPORT_CRON_CHARS: usize = 100;

#[cfg(feature = "openapi")]
fn report_cron_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(utoipa::openapi::SchemaFormat::Custom(
            "report-cron".into(),
        )))
        .min_length(Some(1))
        .max_length(Some(MAX_REPORT_CRON_CHARS))
        .description(Some(
            "Cron expression, 5 fields, UTC, firing at most once an hour",
        ))
        .into()
}

/// Checks a publisher's report schedules: at most [`MAX_REPORT_SCHEDULES`],
/// each a 5-field cron expression that fires, at most once an hour (a tenant
/// cannot make the workers render a report every second).
pub fn validate_report_schedules(
    schedules: &[ReportScheduleSetting],
    now: super::Timestamp,
) -> crate::Result<()> {
    if schedules.len() > MAX_REPORT_SCHEDULES {
        return Err(crate::Error::invalid(format!(
            "at most {MAX_REPORT_SCHEDULES} report schedules"
        )));
    }
    for schedule in schedules {
        let cron = schedule.cron.trim();
        if cron.chars().count() > MAX_REPORT_CRON_CHARS || cron.split_whitespace().count() != 5 {
            return Err(crate::Error::invalid(format!(
                "`cron`: {:?} must have 5 fields (minute hour day month weekday), UTC",
                schedule
                    .cron
                    .chars()
                    .take(MAX_REPORT_CRON_CHARS)
                    .collect::<String>()
            )));
        }
        let parsed = crate::schedule::parse_schedule(cron)?;
        if crate::schedule::next_slot(&parsed, now).is_none() {
            return Err(crate::Error::invalid(format!(
                "`cron`: {cron:?} never fires"
            )));
        }
        if crate::schedule::check_floor(&parsed, std::time::Duration::from_secs(3600), "cron")
            .is_err()
        {
            return Err(crate::Error::invalid(format!(
                "`cron`: {cron:?} fires more than once an hour; reports run at most hourly"
            )));
        }
    }
    Ok(())
}

/// What an alert counts: matches a reviewer confirmed (the default: nothing
/// goes out before a person looked), or every match as it is detected (a copy
/// is announced minutes after it appears, before anyone reviewed it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AlertOn {
    /// Matches confirmed since the last alert.
    #[default]
    Confirmed,
    /// Matches detected since the last alert (new or confirmed; never those
    /// dismissed, licensed or taken down).
    Detected,
}

impl AlertOn {
    /// The name used in configuration, the API and webhook events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Detected => "detected",
        }
    }
}

/// A publisher's e-mail alerts: sent through the installation's mail server
/// when this many matches were confirmed (or detected) since the last alert.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AlertSettings {
    /// Recipients (`legal@publisher.example` or `Legal <legal@publisher.example>`); none: no e-mail.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = email_list_schema))]
    pub email_to: Vec<String>,
    /// Confirmed (or, with `alert_on = detected`, detected) matches since the
    /// last alert that trigger one.
    #[serde(default = "one")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10000))]
    pub threshold_new_confirmed: u32,
    /// What the threshold counts.
    #[serde(default)]
    pub alert_on: AlertOn,
}

fn one() -> u32 {
    1
}

/// What [`is_email_address`] accepts, as a pattern.
#[cfg(feature = "openapi")]
fn email_pattern() -> String {
    const NAME: &str = "[^\\u0000-\\u001f\\u007f-\\u009f<]*";
    const PART: &str = "[^\\s@<>\\u0000-\\u001f\\u007f-\\u009f]+";
    format!("^(?:{NAME}<{PART}@{PART}>|{PART}@{PART})$")
}

/// The schema of `email_to`: e-mail addresses.
#[cfg(feature = "openapi")]
fn email_list_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(254))
                .pattern(Some(email_pattern())),
        )
        .max_items(Some(MAX_ALERT_RECIPIENTS))
        .into()
}

/// The schema of the profile's e-mail: empty, or an e-mail address.
#[cfg(feature = "openapi")]
fn profile_email_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let address = email_pattern();
    let inner = address.trim_start_matches('^').trim_end_matches('$');
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(254))
        .pattern(Some(format!("^(?:{inner})?$")))
        .into()
}

impl Default for AlertSettings {
    fn default() -> Self {
        Self {
            email_to: Vec::new(),
            threshold_new_confirmed: 1,
            alert_on: AlertOn::Confirmed,
        }
    }
}

/// Most alert recipients per publisher.
pub const MAX_ALERT_RECIPIENTS: usize = 20;

impl AlertSettings {
    /// Whether no e-mail goes out.
    pub fn is_off(&self) -> bool {
        self.email_to.is_empty()
            && self.threshold_new_confirmed == 1
            && self.alert_on == AlertOn::Confirmed
    }

    /// Checks the recipients and the threshold.
    pub fn validate(&self) -> crate::Result<()> {
        if self.email_to.len() > MAX_ALERT_RECIPIENTS {
            return Err(crate::Error::invalid(format!(
                "at most {MAX_ALERT_RECIPIENTS} alert recipients"
            )));
        }
        if let Some(bad) = self
            .email_to
            .iter()
            .find(|address| !is_email_address(address))
        {
            return Err(crate::Error::invalid(format!(
                "{bad:?} is not an e-mail address"
            )));
        }
        if !(1..=10_000).contains(&self.threshold_new_confirmed) {
            return Err(crate::Error::invalid(
                "threshold_new_confirmed must be within 1..=10000",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod profile_tests {
    use super::*;

    #[test]
    fn a_publisher_stored_without_a_profile_decodes_and_a_profile_is_checked() {
        use crate::model::Persisted;
        let stored = serde_json::json!({
            "id": "P01", "name": "Demo", "kind": "books",
            "created_at": "2026-01-05T06:00:00Z", "schema_version": 1,
        });
        let publisher = Publisher::from_document(stored).unwrap();
        assert!(publisher.profile.is_empty());
        assert!(publisher.to_document().unwrap().get("profile").is_none());
        let mut profile = PublisherProfile {
            language: Some(crate::model::Language::Zh),
            legal_name: "示例文化传媒有限公司".into(),
            address: "北京市海淀区\n示例路 1 号".into(),
            email: "legal@p01.example".into(),
            ..PublisherProfile::default()
        };
        profile.validate().unwrap();
        profile.legal_name = "X\r\nBcc: victim@example".into();
        assert!(profile.validate().is_err());
        profile.legal_name.clear();
        profile.email = "not an address".into();
        assert!(profile.validate().is_err());
    }
}

#[cfg(test)]
mod schedule_tests {
    use super::*;

    fn schedule(cron: &str) -> ReportScheduleSetting {
        ReportScheduleSetting {
            cron: cron.into(),
            format: crate::model::ReportFormat::Html,
            email: false,
        }
    }

    #[test]
    fn report_schedules_fire_at_most_hourly_on_five_fields() {
        let now = chrono::Utc::now();
        for good in ["0 6 * * 1", "0 * * * *", "30 2 * * 1-5", "0 0 1 * *"] {
            validate_report_schedules(&[schedule(good)], now).unwrap();
        }
        for bad in [
            "*/15 * * * *",
            "0,30 * * * *",
            "* * * * * *",
            "0 6 * *",
            "every monday",
            "0 0 31 2 *",
            "",
        ] {
            let error = validate_report_schedules(&[schedule(bad)], now).unwrap_err();
            assert_eq!(
                error.kind(),
                crate::ErrorKind::InvalidInput,
                "{bad}: {error}"
            );
        }
        let many = vec![schedule("0 6 * * 1"); MAX_REPORT_SCHEDULES + 1];
        assert!(validate_report_schedules(&many, now).is_err());
    }
}

/// Whether `address` looks like `name@domain` or `Name <name@domain>`, at
/// most 254 characters, without line breaks (they would inject mail headers).
pub fn is_email_address(address: &str) -> bool {
    let bare = match (address.find('<'), address.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => address,
    };
    address.chars().count() <= 254
        && !address.chars().any(char::is_control)
        && bare.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !bare.contains(char::is_whitespace)
        })
}

/// A publisher's bar for an infringement, per kind of work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct InfringementPolicy {
    /// For novels.
    #[serde(default, skip_serializing_if = "Thresholds::is_default")]
    pub novel: Thresholds,
    /// For news articles.
    #[serde(default, skip_serializing_if = "Thresholds::is_default")]
    pub news: Thresholds,
}

impl InfringementPolicy {
    /// Whether nothing is overridden.
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }

    /// The thresholds for works of `kind`.
    pub fn for_kind(&self, kind: super::WorkKind) -> &Thresholds {
        match kind {
            super::WorkKind::Novel => &self.novel,
            super::WorkKind::News => &self.news,
        }
    }

    /// Checks every value's range.
    pub fn validate(&self) -> crate::Result<()> {
        for (name, thresholds) in [("novel", &self.novel), ("news", &self.news)] {
            if let Some(chars) = thresholds.min_copied_chars
                && !(MIN_POLICY_CHARS..=MAX_POLICY_CHARS).contains(&chars)
            {
                return Err(crate::Error::invalid(format!(
                    "policy.{name}.min_copied_chars = {chars}: must be within {MIN_POLICY_CHARS}..={MAX_POLICY_CHARS}"
                )));
            }
            if let Some(coverage) = thresholds.min_chapter_coverage
                && !(MIN_POLICY_COVERAGE..=1.0).contains(&coverage)
            {
                return Err(crate::Error::invalid(format!(
                    "policy.{name}.min_chapter_coverage = {coverage}: must be within {MIN_POLICY_COVERAGE}..=1"
                )));
            }
        }
        Ok(())
    }
}

/// The smallest `min_copied_chars` a policy may set: below it, shared
/// boilerplate and quotes would count.
pub const MIN_POLICY_CHARS: u32 = 50;
/// The smallest `min_chapter_coverage` a policy may set (1%).
pub const MIN_POLICY_COVERAGE: f32 = 0.01;
/// The largest `min_copied_chars` a policy may set.
pub const MAX_POLICY_CHARS: u32 = 100_000;

/// Overrides of the installation's thresholds; `None` keeps its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Copied characters at which a page infringes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 50, maximum = 100000))]
    pub min_copied_chars: Option<u32>,
    /// Share of a short chapter at which a page infringes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0.01, maximum = 1.0))]
    pub min_chapter_coverage: Option<f32>,
}

impl Thresholds {
    /// Whether nothing is overridden.
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }
}

/// What an API key may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Acts within its publisher only.
    Publisher,
    /// Also administers its publisher's keys (never another publisher's; only the
    /// operator's configured key administers the installation).
    Admin,
}

/// An API key record. The key is shown once at creation; only its hash is kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKey {
    /// Its id (also the public prefix of the key).
    pub id: ApiKeyId,
    /// The tenant it acts for.
    pub publisher_id: PublisherId,
    /// SHA-256 of the secret part, hex.
    pub secret_sha256: String,
    /// What it may do.
    pub role: Role,
    /// When it was created.
    pub created_at: Timestamp,
    /// Revoked keys authenticate nobody.
    pub revoked: bool,
    /// Who holds the key (a person or a system); reviews record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

super::persisted::persisted_v1!(Publisher => "publisher", ApiKey => "api_key");
