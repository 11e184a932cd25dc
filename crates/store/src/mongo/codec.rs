//! The BSON form of stored documents: core's JSON documents converted field by
//! field. Numbers that JSON holds as u64 fingerprints (`simhash`,
//! `shingle_simhash`, `dna`, `anchors`) are bit-cast to BSON int64 and back, so every u64
//! (including `u64::MAX`) round-trips exactly; any other integer above `i64::MAX`
//! is refused rather than silently altered. Timestamps stay RFC 3339 strings
//! (exact to the nanosecond); the `_*_ns` int64 fields beside them sort and filter.

use copyhound_core::model::Persisted;
use copyhound_core::{Error, ErrorKind, Result};
use mongodb::bson::{Bson, Document};
use serde_json::{Map, Number, Value};

use crate::codec;

/// Fields whose numbers are u64 fingerprints.
const U64_FIELDS: [&str; 4] = ["simhash", "shingle_simhash", "dna", "anchors"];

fn number_to_bson(number: &Number, field: &str, as_u64: bool) -> Result<Bson> {
    if let Some(signed) = number.as_i64() {
        return Ok(Bson::Int64(signed));
    }
    if let Some(unsigned) = number.as_u64() {
        if as_u64 {
            return Ok(Bson::Int64(unsigned as i64));
        }
        return Err(Error::invalid(format!(
            "field {field} = {unsigned} exceeds the stored integer range"
        )));
    }
    Ok(Bson::Double(number.as_f64().unwrap_or(f64::NAN)))
}

fn value_to_bson(value: Value, field: &str, as_u64: bool) -> Result<Bson> {
    Ok(match value {
        Value::Null => Bson::Null,
        Value::Bool(flag) => Bson::Boolean(flag),
        Value::Number(number) => number_to_bson(&number, field, as_u64)?,
        Value::String(text) => Bson::String(text),
        Value::Array(items) => Bson::Array(
            items
                .into_iter()
                .map(|item| value_to_bson(item, field, as_u64))
                .collect::<Result<_>>()?,
        ),
        Value::Object(object) => Bson::Document(object_to_document(object)?),
    })
}

/// Converts a JSON object into a BSON document.
pub(crate) fn object_to_document(object: Map<String, Value>) -> Result<Document> {
    let mut document = Document::new();
    for (key, value) in object {
        let as_u64 = U64_FIELDS.contains(&key.as_str());
        let converted = value_to_bson(value, &key, as_u64)?;
        document.insert(key, converted);
    }
    Ok(document)
}

fn bson_to_value(bson: Bson, field: &str, as_u64: bool) -> Result<Value> {
    Ok(match bson {
        Bson::Null => Value::Null,
        Bson::Boolean(flag) => Value::Bool(flag),
        Bson::Int32(number) => Value::from(number),
        Bson::Int64(number) if as_u64 => Value::from(number as u64),
        Bson::Int64(number) => Value::from(number),
        Bson::Double(number) => Number::from_f64(number).map(Value::Number).ok_or_else(|| {
            Error::new(
                ErrorKind::Corrupt,
                format!("field {field} holds a non-finite number"),
            )
        })?,
        Bson::String(text) => Value::String(text),
        Bson::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| bson_to_value(item, field, as_u64))
                .collect::<Result<_>>()?,
        ),
        Bson::Document(document) => Value::Object(document_to_object(document)?),
        other => {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "field {field} holds an unexpected {:?}",
                    other.element_type()
                ),
            ));
        }
    })
}

/// Converts a BSON document back into the JSON object it came from.
pub(crate) fn document_to_object(document: Document) -> Result<Map<String, Value>> {
    let mut object = Map::new();
    for (key, value) in document {
        let as_u64 = U64_FIELDS.contains(&key.as_str());
        let converted = bson_to_value(value, &key, as_u64)?;
        object.insert(key, converted);
    }
    Ok(object)
}

/// Returns the stored document of `value` under `_id`.
pub(crate) fn to_document<T: Persisted>(value: &T, id: &str) -> Result<Document> {
    let mut document = object_to_document(codec::encode(value)?)?;
    document.insert("_id", id);
    Ok(document)
}

/// Decodes a stored document (the store's `_` fields are dropped).
pub(crate) fn from_document<T: Persisted>(mut document: Document) -> Result<T> {
    let internal: Vec<String> = document
        .keys()
        .filter(|key| key.starts_with('_'))
        .cloned()
        .collect();
    for key in internal {
        document.remove(&key);
    }
    codec::decode(document_to_object(document)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_fingerprints_round_trip_and_other_big_integers_are_refused() {
        let object: Map<String, Value> = serde_json::from_str(
            r#"{"simhash": 18446744073709551615, "dna": [0, 9223372036854775808], "n": -3}"#,
        )
        .unwrap();
        let document = object_to_document(object.clone()).unwrap();
        assert_eq!(document.get_i64("simhash").unwrap(), -1);
        assert_eq!(document_to_object(document).unwrap(), object);
        let too_big: Map<String, Value> =
            serde_json::from_str(r#"{"bytes": 18446744073709551615}"#).unwrap();
        assert_eq!(
            object_to_document(too_big).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }
}
