//! A JSON object read with its fields in order and their values as raw text, so the proxy can
//! replace a few fields of an agent's request and keep every other one exactly as it came.

use std::fmt;

use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// Why a well-formed request is passed through: serde_json reads 128 levels of nesting; a body
/// that nests deeper is valid JSON the provider may accept, so it goes upstream as it came.
pub const TOO_DEEP: &str = "it nests JSON deeper than the engine reads (128 levels)";

fn is_too_deep(error: &serde_json::Error) -> bool {
    error.to_string().contains("recursion limit exceeded")
}

/// The fields of one JSON object, in their order, each value as its raw JSON text.
#[derive(Debug, Clone, Default)]
pub struct RawObject {
    fields: Vec<(String, Box<RawValue>)>,
}

impl RawObject {
    /// Parse a JSON object; anything else (an array, invalid JSON) is an error saying what.
    pub fn parse(bytes: &[u8]) -> Result<RawObject, String> {
        serde_json::from_slice::<RawObject>(bytes).map_err(|e| {
            if is_too_deep(&e) {
                TOO_DEEP.to_owned()
            } else if e.is_data() {
                "the body is JSON but not an object".to_owned()
            } else {
                format!("the body is not JSON: {e}")
            }
        })
    }

    /// The raw value of `key` (the last one, when the object repeats it).
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_ref())
    }

    /// `key` parsed as a `T`; `Ok(None)` when absent, an error naming the field when mistyped.
    pub fn field<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(raw) => serde_json::from_str(raw.get()).map(Some).map_err(|e| match is_too_deep(&e) {
                true => format!("`{key}`: {TOO_DEEP}"),
                false => format!("`{key}`: {e}"),
            }),
        }
    }

    /// `key` as a JSON value (`Null` when absent or unreadable).
    pub fn value(&self, key: &str) -> Value {
        self.field::<Value>(key).ok().flatten().unwrap_or(Value::Null)
    }

    /// Set `key` to `value`: in place when present, else at the end.
    pub fn set(&mut self, key: &str, value: &impl Serialize) {
        let raw = serde_json::value::to_raw_value(value)
            .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("null is JSON"));
        match self.fields.iter_mut().rev().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = raw,
            None => self.fields.push((key.to_owned(), raw)),
        }
    }

    pub fn remove(&mut self, key: &str) {
        self.fields.retain(|(k, _)| k != key);
    }

    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The object as compact JSON: the fields in their order, untouched values byte-exact.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.fields.iter().map(|(k, v)| k.len() + v.get().len() + 4).sum());
        out.push('{');
        for (i, (key, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).unwrap_or_else(|_| "\"\"".to_owned()));
            out.push(':');
            out.push_str(value.get());
        }
        out.push('}');
        out
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = RawObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Box<RawValue>>()? {
                    fields.push((key, value));
                }
                Ok(RawObject { fields })
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// `value` without its `cache_control` field (when it is an object), and whether it had one.
pub fn without_cache_control(mut value: Value) -> (Value, Option<Value>) {
    let removed = match &mut value {
        Value::Object(fields) => fields.remove("cache_control"),
        _ => None,
    };
    (value, removed)
}

/// Compact JSON text of a value (keys in the map's order: sorted).
pub fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_their_order_and_bytes() {
        let body = br#"{"model":"m", "temperature": 1.0, "messages":[1], "extra" : {"b":1,"a":2}, "n": 1e3}"#;
        let mut object = RawObject::parse(body).unwrap();
        object.set("messages", &serde_json::json!([2, 3]));
        object.set("added", &true);
        assert_eq!(
            object.to_json(),
            r#"{"model":"m","temperature":1.0,"messages":[2,3],"extra":{"b":1,"a":2},"n":1e3,"added":true}"#
        );
        assert_eq!(object.field::<String>("model").unwrap().as_deref(), Some("m"));
        assert!(object.field::<String>("temperature").unwrap_err().starts_with("`temperature`"));
        object.remove("extra");
        assert!(!object.contains("extra"));
        assert_eq!(RawObject::parse(b"[1]").unwrap_err(), "the body is JSON but not an object");
        assert!(RawObject::parse(b"{\"a\":").unwrap_err().starts_with("the body is not JSON"));
    }
}
