//! Sites nobody listed. Piracy sites link to each other, print their own
//! domains in the text and are listed in reader apps' book-source files; each
//! of those is a reason to look at a site. A suggestion gathers the reasons
//! per publisher and host, is verified cheaply (robots.txt and one page), and
//! waits for an admin to accept it (it becomes a watched site) or dismiss it.
//! A dismissed host stays dismissed: new reasons are counted, not re-raised.

use serde::{Deserialize, Serialize};

use super::Timestamp;
use super::persisted::persisted_v1;
use crate::ids::{PublisherId, SiteId, WorkId};

/// Most reasons a suggestion keeps (their count is kept beyond it).
pub const MAX_SUGGESTION_REASONS: usize = 20;

/// A candidate site for one publisher.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SiteSuggestion {
    /// `sg_` + a digest of the publisher and the origin.
    pub id: String,
    /// Whose suggestion it is.
    pub publisher_id: PublisherId,
    /// `scheme://host[:port]`, lower case.
    pub origin: String,
    /// Why it was suggested, newest last (at most [`MAX_SUGGESTION_REASONS`]).
    pub reasons: Vec<SuggestionReason>,
    /// Reasons seen in all, kept ones or not.
    pub reason_count: u64,
    /// Where it stands.
    pub status: SuggestionStatus,
    /// What the cheap check found, once run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// The site's own search, from a book-source file: a URL with `{{key}}`
    /// where the title goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_url: Option<String>,
    /// The watched site it became, once accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_id: Option<SiteId>,
    /// First reason's time.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub first_seen: Timestamp,
    /// Last change.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: Timestamp,
}

impl SiteSuggestion {
    /// The id of `publisher`'s suggestion of `origin`: one per pair.
    pub fn id_for(publisher_id: &PublisherId, origin: &str) -> String {
        format!(
            "sg_{}",
            &crate::ids::sha256_hex(format!("{publisher_id}\n{origin}").as_bytes())[..24]
        )
    }

    /// A new pending suggestion with its first reason.
    pub fn new(publisher_id: PublisherId, origin: String, reason: SuggestionReason) -> Self {
        let at = reason.at;
        Self {
            id: Self::id_for(&publisher_id, &origin),
            publisher_id,
            origin,
            reasons: vec![reason],
            reason_count: 1,
            status: SuggestionStatus::Pending,
            verification: None,
            search_url: None,
            site_id: None,
            first_seen: at,
            updated_at: at,
        }
    }

    /// Adds a reason unless the same one (kind and source) is kept already.
    /// Returns whether anything changed.
    pub fn add_reason(&mut self, reason: SuggestionReason) -> bool {
        if self
            .reasons
            .iter()
            .any(|kept| kept.kind == reason.kind && kept.from == reason.from)
        {
            return false;
        }
        self.reason_count += 1;
        self.updated_at = reason.at;
        if self.reasons.len() < MAX_SUGGESTION_REASONS {
            self.reasons.push(reason);
        }
        true
    }

    /// The distinct watched sites that pointed here.
    pub fn sites_pointing(&self) -> usize {
        let mut sites: Vec<&SiteId> = self
            .reasons
            .iter()
            .filter_map(|reason| reason.site_id.as_ref())
            .collect();
        sites.sort();
        sites.dedup();
        sites.len()
    }
}

/// Where a suggestion stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SuggestionStatus {
    /// Found, not checked yet.
    Pending,
    /// Checked: robots.txt read and one page fetched.
    Verified,
    /// Checked: it did not answer, or robots.txt refuses us.
    Unreachable,
    /// An admin (or the auto-accept budget) made it a watched site.
    Accepted,
    /// An admin said no; it is not raised again.
    Dismissed,
}

impl SuggestionStatus {
    /// The name used in the API and the console.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Verified => "verified",
            Self::Unreachable => "unreachable",
            Self::Accepted => "accepted",
            Self::Dismissed => "dismissed",
        }
    }

    /// Whether an admin still has to decide.
    pub fn is_open(self) -> bool {
        matches!(self, Self::Pending | Self::Verified | Self::Unreachable)
    }
}

/// One reason to look at a site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuggestionReason {
    /// What kind of evidence.
    pub kind: ReasonKind,
    /// Where it was seen: the page URL, or the book-source file's name.
    pub from: String,
    /// The watched site whose page it was on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_id: Option<SiteId>,
    /// The link or the text that named the site (shortened).
    pub detail: String,
    /// When it was seen.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: Timestamp,
}

/// What kind of evidence a reason is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    /// A watched site's page links to it (friend links, mirror lists).
    Link,
    /// A watched site's page names the domain in its text ("首发域名：…").
    Announced,
    /// An imported book-source file lists it.
    BookSource,
}

/// What the cheap check found: robots.txt and one page, nothing more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Verification {
    /// When it ran.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: Timestamp,
    /// The page fetched (after robots.txt).
    pub url: String,
    /// Its HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why it could not be checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The page's `<title>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Chinese characters in the page's text (a reading site has many).
    pub han_chars: u64,
    /// The publisher's works whose titles the page names: what it appears to carry.
    #[serde(default)]
    pub carries: Vec<WorkId>,
}

persisted_v1!(SiteSuggestion => "site_suggestion");

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(kind: ReasonKind, from: &str) -> SuggestionReason {
        SuggestionReason {
            kind,
            from: from.into(),
            site_id: Some("site_a".parse().unwrap()),
            detail: String::new(),
            at: chrono::Utc::now(),
        }
    }

    #[test]
    fn reasons_are_kept_once_and_counted() {
        let publisher: PublisherId = "pub_a".parse().unwrap();
        let mut suggestion = SiteSuggestion::new(
            publisher.clone(),
            "http://b.example".into(),
            reason(ReasonKind::Link, "http://a.example/"),
        );
        assert_eq!(
            suggestion.id,
            SiteSuggestion::id_for(&publisher, "http://b.example")
        );
        assert!(!suggestion.add_reason(reason(ReasonKind::Link, "http://a.example/")));
        assert!(suggestion.add_reason(reason(ReasonKind::Announced, "http://a.example/")));
        for n in 0..40 {
            suggestion.add_reason(reason(ReasonKind::Link, &format!("http://a.example/{n}")));
        }
        assert_eq!(suggestion.reasons.len(), MAX_SUGGESTION_REASONS);
        assert_eq!(suggestion.reason_count, 42);
        assert_eq!(suggestion.sites_pointing(), 1);
    }
}
