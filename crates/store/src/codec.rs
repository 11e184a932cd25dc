//! Backend-neutral pieces of the stored form: limits, body compression, opaque
//! keyset cursors, sortable timestamp keys, and the page version rule. Both
//! backends call these so they cannot drift apart in behaviour.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use copyhound_core::config::StoreConfig;
use copyhound_core::model::{Page, PageVersion, Persisted, Timestamp};
use copyhound_core::ports::{PageRequest, PageUpsert, Paged};
use copyhound_core::{Error, ErrorKind, Result};
use serde_json::{Map, Value};

/// Page size used when a request asks for 0 items.
pub const DEFAULT_PAGE_LIMIT: usize = 100;
/// Largest page size served; larger requests are capped.
pub const MAX_PAGE_LIMIT: usize = 1_000;
/// Versions kept in a page's history; the oldest are dropped past this, so a page
/// that changes on every visit cannot grow its document without bound.
pub const MAX_PAGE_VERSIONS: usize = 100;

/// Size limits applied on write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreLimits {
    /// Raw bodies (and extracted texts) longer than this are cut and flagged.
    pub max_body_bytes: u64,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self::from_config(&StoreConfig::default())
    }
}

impl StoreLimits {
    /// Returns the limits of a store configuration.
    pub fn from_config(config: &StoreConfig) -> Self {
        // Stay well below MongoDB's 16 MiB document limit whatever the config says:
        // body and text share one document.
        Self {
            max_body_bytes: config.max_body_bytes.clamp(1, 6 << 20),
        }
    }

    fn max_bytes(&self) -> usize {
        usize::try_from(self.max_body_bytes).unwrap_or(usize::MAX)
    }
}

/// Returns the page as it is stored: body and text cut at the limit, flagged.
pub(crate) fn cap_page(page: &Page, limits: StoreLimits) -> Page {
    let max = limits.max_bytes();
    let mut capped = page.clone();
    if capped.raw_body.len() > max {
        capped.raw_body.truncate(max);
        capped.body_truncated = true;
    }
    if capped.text.len() > max {
        let mut cut = max;
        while !capped.text.is_char_boundary(cut) {
            cut -= 1;
        }
        capped.text.truncate(cut);
        capped.body_truncated = true;
    }
    capped
}

/// Returns `bytes` compressed (LZ4 block, size-prefixed).
pub(crate) fn compress(bytes: &[u8]) -> Vec<u8> {
    lz4_flex::compress_prepend_size(bytes)
}

/// Returns the bytes of a [`compress`]ed buffer.
pub(crate) fn decompress(bytes: &[u8]) -> Result<Vec<u8>> {
    lz4_flex::decompress_size_prepended(bytes).map_err(|error| {
        Error::with_source(
            ErrorKind::Corrupt,
            "stored body cannot be decompressed",
            error,
        )
    })
}

/// Returns the effective page size of a request.
pub(crate) fn page_limit(request: &PageRequest) -> usize {
    match usize::try_from(request.limit).unwrap_or(MAX_PAGE_LIMIT) {
        0 => DEFAULT_PAGE_LIMIT,
        limit => limit.min(MAX_PAGE_LIMIT),
    }
}

/// Returns the opaque cursor of a sort key.
pub(crate) fn encode_cursor(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(key.as_bytes())
}

/// Returns the sort key of a cursor made by [`encode_cursor`].
pub(crate) fn decode_cursor(cursor: &str) -> Result<String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::invalid("malformed page cursor"))?;
    String::from_utf8(bytes).map_err(|_| Error::invalid("malformed page cursor"))
}

/// Returns the request's cursor key, if any.
pub(crate) fn cursor_key(request: &PageRequest) -> Result<Option<String>> {
    request.after.as_deref().map(decode_cursor).transpose()
}

/// Builds a page from up to `limit + 1` fetched items: the extra one only proves
/// that a next page exists.
pub(crate) fn paged<T>(mut items: Vec<T>, limit: usize, key_of: impl Fn(&T) -> String) -> Paged<T> {
    let has_more = items.len() > limit;
    items.truncate(limit);
    let next = if has_more {
        items.last().map(|last| encode_cursor(&key_of(last)))
    } else {
        None
    };
    Paged { items, next }
}

/// Returns nanoseconds since the epoch, saturated outside 1677..2262.
pub(crate) fn timestamp_ns(at: &Timestamp) -> i64 {
    at.timestamp_nanos_opt().unwrap_or(if at.timestamp() < 0 {
        i64::MIN
    } else {
        i64::MAX
    })
}

/// Returns a fixed-width string that sorts like the timestamp.
pub(crate) fn sortable_ns(nanos: i64) -> String {
    format!("{:020}", (nanos as u64) ^ (1 << 63))
}

/// Returns the key of a newest-first listing: sortable time, then id.
pub(crate) fn time_id_key(nanos: i64, id: &str) -> String {
    format!("{}:{id}", sortable_ns(nanos))
}

/// Splits a [`time_id_key`] into nanoseconds and id.
pub(crate) fn split_time_id_key(key: &str) -> Result<(i64, String)> {
    let (time, id) = key
        .split_once(':')
        .ok_or_else(|| Error::invalid("malformed page cursor"))?;
    let flipped: u64 = time
        .parse()
        .map_err(|_| Error::invalid("malformed page cursor"))?;
    Ok(((flipped ^ (1 << 63)) as i64, id.to_string()))
}

/// Returns a fixed-width string that sorts like a score (a non-negative
/// finite `f32`'s bits sort like its value; anything else counts as 0).
pub(crate) fn score_id_key(score: f32, id: &str) -> String {
    let bits = if score.is_finite() && score > 0.0 {
        score.to_bits()
    } else {
        0
    };
    format!("{bits:010}:{id}")
}

/// Splits a [`score_id_key`] into the score and the id.
pub(crate) fn split_score_id_key(key: &str) -> Result<(f32, String)> {
    key.split_once(':')
        .and_then(|(bits, id)| Some((f32::from_bits(bits.parse().ok()?), id.to_string())))
        .filter(|(score, _)| score.is_finite())
        .ok_or_else(|| Error::invalid("malformed page cursor"))
}

/// Returns the stored JSON object of a value (with `schema_version`).
pub(crate) fn encode<T: Persisted>(value: &T) -> Result<Map<String, Value>> {
    match value.to_document()? {
        Value::Object(object) => Ok(object),
        _ => Err(Error::internal(format!(
            "{} does not encode as an object",
            T::KIND
        ))),
    }
}

/// Decodes a stored JSON object, dropping the store's own `_`-prefixed fields.
pub(crate) fn decode<T: Persisted>(mut object: Map<String, Value>) -> Result<T> {
    object.retain(|key, _| !key.starts_with('_'));
    T::from_document(Value::Object(object))
}

/// A stored page and the time its current content was first seen.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PageState {
    pub page: Page,
    pub version_first_seen: Timestamp,
}

/// Applies a fetched page to the stored state: the page version rule.
///
/// Same `content_sha256`: only `last_seen` (never backwards), fetch metadata
/// and, when the bytes differ, the body move. Different: the stored version goes to the history (oldest dropped past
/// [`MAX_PAGE_VERSIONS`]) and `first_seen` of the page is kept.
pub(crate) fn merge_page(existing: Option<PageState>, incoming: Page) -> (PageUpsert, PageState) {
    let Some(stored) = existing else {
        let version_first_seen = incoming.last_seen;
        return (
            PageUpsert::New,
            PageState {
                page: incoming,
                version_first_seen,
            },
        );
    };
    if stored.page.content_sha256 == incoming.content_sha256 {
        let body_changed = stored.page.body_sha256 != incoming.body_sha256;
        let mut page = stored.page;
        page.last_seen = page.last_seen.max(incoming.last_seen);
        page.fetch = incoming.fetch;
        // The same text in other bytes: the body kept is the one the fetch
        // metadata (header fields, receive time) describes, so evidence
        // never pairs one response's header with another's body.
        if body_changed {
            page.raw_body = incoming.raw_body;
            page.body_sha256 = incoming.body_sha256;
            page.body_truncated = incoming.body_truncated;
        }
        return (
            PageUpsert::Unchanged,
            PageState {
                page,
                version_first_seen: stored.version_first_seen,
            },
        );
    }
    let mut history = stored.page.previous_versions;
    history.push(PageVersion {
        body_sha256: stored.page.body_sha256,
        first_seen: stored.version_first_seen,
        last_seen: stored.page.last_seen,
    });
    if history.len() > MAX_PAGE_VERSIONS {
        history.drain(..history.len() - MAX_PAGE_VERSIONS);
    }
    let version_first_seen = incoming.last_seen;
    let page = Page {
        first_seen: stored.page.first_seen,
        previous_versions: history,
        ..incoming
    };
    (
        PageUpsert::Changed,
        PageState {
            page,
            version_first_seen,
        },
    )
}

/// The stored page's own field: when its current content was first seen.
pub(crate) const VERSION_FIRST_SEEN: &str = "_version_first_seen";

/// Returns the stored form of a page without its body (stored compressed apart).
pub(crate) fn page_meta_object(state: &mut PageState) -> Result<Map<String, Value>> {
    // The body is stored apart: taken out for the encoding, it is not
    // base64-encoded only to be dropped.
    let body = std::mem::take(&mut state.page.raw_body);
    let encoded = encode(&state.page);
    state.page.raw_body = body;
    let mut object = encoded?;
    object.remove("raw_body");
    let first_seen = serde_json::to_value(state.version_first_seen).map_err(|error| {
        Error::with_source(ErrorKind::Internal, "failed to encode a timestamp", error)
    })?;
    object.insert(VERSION_FIRST_SEEN.to_string(), first_seen);
    Ok(object)
}

/// Rebuilds a page state from its stored form and its (decompressed) body.
pub(crate) fn page_state_from(mut object: Map<String, Value>, body: Vec<u8>) -> Result<PageState> {
    let first_seen = object.remove(VERSION_FIRST_SEEN).unwrap_or(Value::Null);
    // The body is set after decoding: through the document it would be
    // base64-encoded only to be decoded again.
    object.insert("raw_body".to_string(), Value::String(String::new()));
    let mut page: Page = decode(object)?;
    page.raw_body = body;
    Ok(page_state_with(page, Some(first_seen)))
}

/// A page state from a decoded page and its stored `_version_first_seen`
/// (the page's first sighting when missing or unreadable).
pub(crate) fn page_state_with(page: Page, first_seen: Option<Value>) -> PageState {
    let version_first_seen = first_seen
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or(page.first_seen);
    PageState {
        page,
        version_first_seen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_and_time_keys_round_trip() {
        let key = time_id_key(-5, "m_1");
        assert_eq!(
            split_time_id_key(&decode_cursor(&encode_cursor(&key)).unwrap()).unwrap(),
            (-5, "m_1".into())
        );
        assert!(sortable_ns(-1) < sortable_ns(0) && sortable_ns(0) < sortable_ns(i64::MAX));
        assert!(decode_cursor("%%").is_err());
    }

    #[test]
    fn documents_written_in_one_pass_read_as_the_tree_did() {
        use crate::tests::fixtures;
        fn same<T: Persisted + std::fmt::Debug + PartialEq>(value: &T) {
            let bytes = value.to_document_bytes().unwrap();
            let parsed: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(parsed, Value::Object(encode(value).unwrap()));
            let Value::Object(object) = parsed else {
                unreachable!("checked above")
            };
            assert_eq!(&decode::<T>(object).unwrap(), value);
        }
        let mut record = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 1);
        record.simhash = u64::MAX;
        same(&record);
        same(&fixtures::chapter("w1", 1));
        same(&fixtures::work("pub_a", "w1"));
        same(&fixtures::site("pub_a", "site_a"));
        same(&fixtures::publisher("pub_a"));
        same(&fixtures::report("pub_a", "r1", 5));
    }

    #[test]
    fn text_is_cut_on_a_char_boundary() {
        let mut page = crate::tests::fixtures::page("http://a/", "site_a", "汉字汉字");
        page.raw_body = vec![1; 10];
        let capped = cap_page(&page, StoreLimits { max_body_bytes: 4 });
        assert_eq!(capped.text, "汉");
        assert_eq!(capped.raw_body.len(), 4);
        assert!(capped.body_truncated);
    }
}
