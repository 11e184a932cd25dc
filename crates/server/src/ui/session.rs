//! Console sessions. The cookie used to hold the API key itself, so logging
//! out did not end anything and a stolen cookie was a working key for the
//! API. Now a login mints a random session id, the cookie holds only that,
//! and the server maps it to the key id: logging out deletes the session,
//! and every request re-reads the key, so revoking a key ends its sessions.
//!
//! Sessions live in the serving process's memory (they are not worth a store
//! port: a lost session costs a login). A restart logs everyone out, and
//! several API servers behind one address need sticky sessions for the
//! console. Only the SHA-256 of a session id is kept, so a heap dump does not
//! hand out live sessions.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use axum::http::header::{COOKIE, FORWARDED};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Name of the session cookie (HttpOnly, SameSite=Strict, Secure over HTTPS).
pub const SESSION_COOKIE: &str = "copyhound_session";
/// The cookie that held the key itself before sessions; cleared at login and logout.
const LEGACY_KEY_COOKIE: &str = "copyhound_key";
/// How long a session lasts from its login.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Sessions kept at most; past it the oldest is ended.
pub const MAX_SESSIONS: usize = 10_000;
/// Sessions of one key at most, so one key's logins cannot push out everyone else's.
pub const MAX_SESSIONS_PER_KEY: usize = 32;

/// The console's sessions of this process.
#[derive(Clone, Debug, Default)]
pub struct Sessions {
    by_hash: Arc<Mutex<HashMap<[u8; 32], Session>>>,
}

#[derive(Clone, Debug)]
struct Session {
    key_id: String,
    created: Instant,
    /// What the next page shows once (a new key's secret), then forgets.
    flash: Option<serde_json::Value>,
    /// Form tokens already sent, newest last, at most [`REMEMBERED_FORMS`].
    sent_forms: VecDeque<String>,
}

/// Form tokens a session remembers: a form sent again among its last this many is ignored.
const REMEMBERED_FORMS: usize = 64;

impl Sessions {
    /// Starts a session of `key_id`; returns its id, for the cookie only.
    pub fn create(&self, key_id: &str) -> String {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let now = Instant::now();
        let mut sessions = self.lock();
        if sessions.len() >= MAX_SESSIONS {
            sessions.retain(|_, session| !session.expired(now));
        }
        let of_key = sessions
            .values()
            .filter(|session| session.key_id == key_id)
            .count();
        if of_key >= MAX_SESSIONS_PER_KEY {
            remove_oldest(&mut sessions, |session| session.key_id == key_id);
        } else if sessions.len() >= MAX_SESSIONS {
            remove_oldest(&mut sessions, |_| true);
        }
        sessions.insert(
            hash(&id),
            Session {
                key_id: key_id.to_string(),
                created: now,
                flash: None,
                sent_forms: VecDeque::new(),
            },
        );
        id
    }

    /// Records that the session sent the form of `token`; returns false when
    /// it sent it before (a double click, a resubmitted page), or has no session.
    pub fn first_send(&self, session_id: &str, token: &str) -> bool {
        let mut sessions = self.lock();
        let Some(session) = sessions.get_mut(&hash(session_id)) else {
            return false;
        };
        if session.sent_forms.iter().any(|sent| sent == token) {
            return false;
        }
        if session.sent_forms.len() == REMEMBERED_FORMS {
            session.sent_forms.pop_front();
        }
        session.sent_forms.push_back(token.to_string());
        true
    }

    /// Keeps `flash` for the session's next page.
    pub fn set_flash(&self, session_id: &str, flash: serde_json::Value) {
        if let Some(session) = self.lock().get_mut(&hash(session_id)) {
            session.flash = Some(flash);
        }
    }

    /// Returns what the session's page shows once, and forgets it.
    pub fn take_flash(&self, session_id: &str) -> Option<serde_json::Value> {
        self.lock().get_mut(&hash(session_id))?.flash.take()
    }

    /// Returns the key id of a live session.
    pub fn key_id(&self, session_id: &str) -> Option<String> {
        let hashed = hash(session_id);
        let mut sessions = self.lock();
        let session = sessions.get(&hashed)?;
        if session.expired(Instant::now()) {
            sessions.remove(&hashed);
            return None;
        }
        Some(session.key_id.clone())
    }

    /// Ends a session (logout); an unknown id is ignored.
    pub fn end(&self, session_id: &str) {
        self.lock().remove(&hash(session_id));
    }

    /// Ends every session of a key (it was revoked).
    pub fn end_key(&self, key_id: &str) {
        self.lock().retain(|_, session| session.key_id != key_id);
    }

    /// Returns the number of sessions held, expired ones included.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Returns whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Session>> {
        // A panic while holding the map leaves it consistent (single inserts and removes).
        self.by_hash
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Session {
    fn expired(&self, now: Instant) -> bool {
        now.duration_since(self.created) >= SESSION_LIFETIME
    }
}

fn remove_oldest(sessions: &mut HashMap<[u8; 32], Session>, eligible: impl Fn(&Session) -> bool) {
    let oldest = sessions
        .iter()
        .filter(|(_, session)| eligible(session))
        .min_by_key(|(_, session)| session.created)
        .map(|(hash, _)| *hash);
    if let Some(oldest) = oldest {
        sessions.remove(&oldest);
    }
}

fn hash(session_id: &str) -> [u8; 32] {
    Sha256::digest(session_id.as_bytes()).into()
}

/// Returns a fresh token for a form that must take effect once.
pub fn form_token() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Returns the session id of the request's cookie, if any.
pub fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == SESSION_COOKIE && !value.is_empty())
        .map(|(_, value)| value.to_string())
}

/// Whether the browser reached us over HTTPS: a TLS-terminating proxy says
/// so in `X-Forwarded-Proto` or `Forwarded`. A client that claims HTTPS over
/// plain HTTP only makes its own cookie `Secure`, which its browser then
/// withholds: it can lock itself out, nobody else.
pub fn over_https(headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get(super::csrf::X_FORWARDED_PROTO)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(',').next())
        .map(str::trim);
    if let Some(proto) = forwarded_proto {
        return proto.eq_ignore_ascii_case("https");
    }
    headers
        .get(FORWARDED)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(',').next())
        .is_some_and(|first| {
            first.split(';').any(|pair| {
                pair.trim().split_once('=').is_some_and(|(name, value)| {
                    name.eq_ignore_ascii_case("proto")
                        && value.trim_matches('"').eq_ignore_ascii_case("https")
                })
            })
        })
}

/// The `Set-Cookie` values that start a session (and drop the old key cookie).
pub fn login_cookies(session_id: &str, secure: bool) -> [String; 2] {
    let lifetime = SESSION_LIFETIME.as_secs();
    [
        format!(
            "{SESSION_COOKIE}={session_id}; {}; Max-Age={lifetime}",
            attributes(secure)
        ),
        format!("{LEGACY_KEY_COOKIE}=; {}; Max-Age=0", attributes(secure)),
    ]
}

/// The `Set-Cookie` values that end a session in the browser.
pub fn logout_cookies(secure: bool) -> [String; 2] {
    [
        format!("{SESSION_COOKIE}=; {}; Max-Age=0", attributes(secure)),
        format!("{LEGACY_KEY_COOKIE}=; {}; Max-Age=0", attributes(secure)),
    ]
}

fn attributes(secure: bool) -> &'static str {
    if secure {
        "Path=/; HttpOnly; SameSite=Strict; Secure"
    } else {
        "Path=/; HttpOnly; SameSite=Strict"
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn sessions_end_at_logout_on_revocation_and_never_store_the_id() {
        let sessions = Sessions::default();
        let first = sessions.create("key_a");
        let second = sessions.create("key_a");
        let other = sessions.create("key_b");
        assert_ne!(first, second);
        assert_eq!(first.len(), 64);
        assert_eq!(sessions.key_id(&first).as_deref(), Some("key_a"));
        assert_eq!(sessions.key_id("not-a-session"), None);
        let stored = format!("{:?}", sessions.by_hash.lock().unwrap());
        assert!(!stored.contains(&first), "the id itself is kept");
        sessions.end(&first);
        assert_eq!(sessions.key_id(&first), None);
        assert_eq!(sessions.key_id(&second).as_deref(), Some("key_a"));
        sessions.end_key("key_a");
        assert_eq!(sessions.key_id(&second), None);
        assert_eq!(sessions.key_id(&other).as_deref(), Some("key_b"));
    }

    #[test]
    fn a_form_takes_effect_once_and_a_flash_shows_once() {
        let sessions = Sessions::default();
        let session = sessions.create("key_a");
        let token = form_token();
        assert!(sessions.first_send(&session, &token));
        assert!(!sessions.first_send(&session, &token));
        assert!(!sessions.first_send("no-session", &form_token()));
        for _ in 0..REMEMBERED_FORMS {
            assert!(sessions.first_send(&session, &form_token()));
        }
        assert_eq!(
            sessions.by_hash.lock().unwrap()[&hash(&session)]
                .sent_forms
                .len(),
            REMEMBERED_FORMS
        );
        sessions.set_flash(&session, serde_json::json!({"key": "chk_x"}));
        assert_eq!(
            sessions.take_flash(&session),
            Some(serde_json::json!({"key": "chk_x"}))
        );
        assert_eq!(sessions.take_flash(&session), None);
    }

    #[test]
    fn sessions_expire_and_the_store_stays_bounded() {
        let sessions = Sessions::default();
        let old = sessions.create("key_a");
        if let Some(session) = sessions.by_hash.lock().unwrap().get_mut(&hash(&old)) {
            session.created = Instant::now() - SESSION_LIFETIME;
        }
        assert_eq!(sessions.key_id(&old), None);
        let kept = sessions.create("key_a");
        for _ in 0..MAX_SESSIONS_PER_KEY + 5 {
            sessions.create("key_b");
        }
        assert_eq!(sessions.len(), 1 + MAX_SESSIONS_PER_KEY);
        for number in 0..MAX_SESSIONS {
            sessions.create(&format!("key_{number}"));
        }
        assert_eq!(sessions.len(), MAX_SESSIONS);
        assert_eq!(sessions.key_id(&kept), None, "the oldest went first");
    }

    #[test]
    fn cookies_are_secure_when_a_proxy_says_https() {
        let mut headers = HeaderMap::new();
        assert!(!over_https(&headers));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(over_https(&headers));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("http"));
        assert!(!over_https(&headers));
        let mut forwarded = HeaderMap::new();
        forwarded.insert(
            FORWARDED,
            HeaderValue::from_static("for=192.0.2.60;proto=https;by=203.0.113.43"),
        );
        assert!(over_https(&forwarded));
        let [session, legacy] = login_cookies("abc", true);
        assert!(session.starts_with("copyhound_session=abc;"), "{session}");
        assert!(session.contains("; Secure") && session.contains("HttpOnly"));
        assert!(legacy.contains("Max-Age=0"));
        assert!(!login_cookies("abc", false)[0].contains("Secure"));
    }
}
