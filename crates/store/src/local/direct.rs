//! Reading a stored document straight into its model. The general path
//! parses the JSON into a document tree, drops the store's own fields and
//! `schema_version`, upgrades old versions and then decodes the tree: two
//! passes and an allocation per field, 3 % of a devset run's CPU. The models
//! refuse unknown fields, so they cannot read the stored bytes as they are;
//! this adapter hides the store's fields (`_`-prefixed, kept aside) and
//! `schema_version` (noted) from the model, and can supply a field the store
//! keeps elsewhere (a page's body). A document of another version, or one
//! the adapter cannot read, is read the general way.

use std::borrow::Cow;

use serde::Deserializer as _;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde_json::Value;

use copyhound_core::model::{Persisted, SCHEMA_VERSION_FIELD};

/// A document read directly, with the store's fields it carried.
pub(crate) struct Direct<T> {
    pub value: T,
    /// The `_`-prefixed fields, as found.
    pub extras: Vec<(String, Value)>,
}

/// Reads `bytes` as a `T` of this build's schema version; `None` when they are
/// not that (another version, malformed, a field the model refuses).
/// `supply` names fields the document lacks by design, each with the
/// string it stands for.
pub(crate) fn decode<T: Persisted>(
    bytes: &[u8],
    supply: &[(&'static str, &'static str)],
) -> Option<Direct<T>> {
    let mut found = Found::default();
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let value = json
        .deserialize_map(Top {
            inner: std::marker::PhantomData::<T>,
            found: &mut found,
            supply,
        })
        .ok()?;
    json.end().ok()?;
    (found.version == Some(u64::from(T::SCHEMA_VERSION))).then_some(Direct {
        value,
        extras: found.extras,
    })
}

#[derive(Default)]
struct Found {
    version: Option<u64>,
    extras: Vec<(String, Value)>,
}

/// Visits the top-level object and hands the model a filtered view of it.
struct Top<'a, T> {
    inner: std::marker::PhantomData<T>,
    found: &'a mut Found,
    supply: &'a [(&'static str, &'static str)],
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Top<'_, T> {
    type Value = T;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a stored document")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(Filtered {
            map,
            found: self.found,
            seen: vec![false; self.supply.len()],
            supply: self.supply,
            supplying: None,
        }))
    }
}

/// The object without the store's fields, plus the supplied ones.
struct Filtered<'a, A> {
    map: A,
    found: &'a mut Found,
    supply: &'a [(&'static str, &'static str)],
    /// Which supplied fields the document had itself.
    seen: Vec<bool>,
    /// The value of the supplied field whose key was just returned.
    supplying: Option<&'static str>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Filtered<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<Cow<'de, str>>()? else {
                // Past the document's own fields: the supplied ones it lacked.
                let missing = self.seen.iter().position(|seen| !seen);
                let Some(index) = missing else {
                    return Ok(None);
                };
                self.seen[index] = true;
                let (name, value) = self.supply[index];
                self.supplying = Some(value);
                return seed.deserialize(name.into_deserializer()).map(Some);
            };
            if key == SCHEMA_VERSION_FIELD {
                self.found.version = Some(self.map.next_value::<u64>()?);
                continue;
            }
            if key.starts_with('_') {
                let value = self.map.next_value::<Value>()?;
                self.found.extras.push((key.into_owned(), value));
                continue;
            }
            if let Some(index) = self.supply.iter().position(|(name, _)| *name == key) {
                self.seen[index] = true;
            }
            return seed.deserialize(key.into_deserializer()).map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.supplying.take() {
            Some(value) => seed.deserialize(value.into_deserializer()),
            None => self.map.next_value_seed(seed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;
    use crate::tests::fixtures;

    fn read<T: Persisted>(bytes: &[u8]) -> Option<T> {
        decode::<T>(bytes, &[]).map(|direct| direct.value)
    }

    #[test]
    fn current_documents_read_as_the_general_way_reads_them() {
        let chapter = fixtures::chapter("w1", 1);
        let bytes = chapter.to_document_bytes().unwrap();
        assert_eq!(
            read::<copyhound_core::model::Chapter>(&bytes),
            Some(chapter)
        );
        let mut record = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 1);
        record.simhash = u64::MAX;
        let bytes = record.to_document_bytes().unwrap();
        assert_eq!(read(&bytes), Some(record));
        let site = fixtures::site("pub_a", "site_a");
        assert_eq!(read(&site.to_document_bytes().unwrap()), Some(site));
    }

    #[test]
    fn the_stores_fields_are_kept_aside_and_pages_get_their_body_field() {
        let mut state = codec::PageState {
            page: fixtures::page("http://a/1", "site_a", "正文"),
            version_first_seen: fixtures::at(7),
        };
        let meta = codec::page_meta_object(&mut state).unwrap();
        let bytes = serde_json::to_vec(&meta).unwrap();
        let direct = decode::<copyhound_core::model::Page>(&bytes, &[("raw_body", "")]).unwrap();
        let general = codec::page_state_from(meta, Vec::new()).unwrap();
        assert_eq!(direct.value, general.page);
        assert!(direct.value.raw_body.is_empty());
        assert_eq!(direct.extras.len(), 1);
        assert_eq!(direct.extras[0].0, codec::VERSION_FIRST_SEEN);
        let first_seen = direct.extras.into_iter().next().map(|(_, value)| value);
        assert_eq!(
            codec::page_state_with(direct.value, first_seen).version_first_seen,
            fixtures::at(7)
        );
    }

    #[test]
    fn other_versions_and_surprises_go_the_general_way() {
        let chapter = fixtures::chapter("w1", 1);
        let mut object = codec::encode(&chapter).unwrap();
        let with = |object: &serde_json::Map<String, Value>| serde_json::to_vec(object).unwrap();
        object.insert(SCHEMA_VERSION_FIELD.into(), 0.into());
        assert!(read::<copyhound_core::model::Chapter>(&with(&object)).is_none());
        object.remove(SCHEMA_VERSION_FIELD);
        assert!(read::<copyhound_core::model::Chapter>(&with(&object)).is_none());
        object.insert(SCHEMA_VERSION_FIELD.into(), "1".into());
        assert!(read::<copyhound_core::model::Chapter>(&with(&object)).is_none());
        object.insert(SCHEMA_VERSION_FIELD.into(), 1.into());
        object.insert("surprise".into(), true.into());
        assert!(read::<copyhound_core::model::Chapter>(&with(&object)).is_none());
        object.remove("surprise");
        object.insert("_owner".into(), "pub_a".into());
        assert_eq!(
            read::<copyhound_core::model::Chapter>(&with(&object)),
            Some(chapter)
        );
        assert!(read::<copyhound_core::model::Chapter>(b"{\"schema_version\":1").is_none());
        assert!(read::<copyhound_core::model::Chapter>(b"[]").is_none());
    }
}
