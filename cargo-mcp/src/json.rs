//! JSON that keeps the order of every object's keys, so that a client's configuration file
//! is rewritten with only the one entry changed.

use std::fmt;

use mcp_runtime::serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use mcp_runtime::serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};

/// A JSON value whose objects keep their keys in the order read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Sets `key` in an object: in place when it is there (returning true), else at the end.
    pub(crate) fn set(&mut self, key: &str, value: Json) -> bool {
        let Json::Object(entries) = self else {
            return false;
        };
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => {
                *slot = value;
                true
            }
            None => {
                entries.push((key.to_owned(), value));
                false
            }
        }
    }

    /// The object at `key`, created empty at the end when it is missing; `None` when `self`
    /// is not an object or `key` holds something other than an object.
    pub(crate) fn object_at(&mut self, key: &str) -> Option<&mut Json> {
        let Json::Object(entries) = self else {
            return None;
        };
        let index = match entries.iter().position(|(k, _)| k == key) {
            Some(index) => index,
            None => {
                entries.push((key.to_owned(), Json::Object(Vec::new())));
                entries.len() - 1
            }
        };
        let slot = &mut entries[index].1;
        matches!(slot, Json::Object(_)).then_some(slot)
    }

    /// The value at `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Removes `key` from an object, returning its value.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Json> {
        let Json::Object(entries) = self else {
            return None;
        };
        let index = entries.iter().position(|(k, _)| k == key)?;
        Some(entries.remove(index).1)
    }

    /// The keys of an object.
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            Json::Object(entries) => entries.iter().map(|(k, _)| k.as_str()).collect(),
            _ => Vec::new(),
        }
    }
}

impl From<Value> for Json {
    fn from(value: Value) -> Self {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Number(n),
            Value::String(s) => Json::String(s),
            Value::Array(items) => Json::Array(items.into_iter().map(Json::from).collect()),
            Value::Object(map) => {
                Json::Object(map.into_iter().map(|(k, v)| (k, v.into())).collect())
            }
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries: Vec<(String, Json)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            // A repeated key: the last one wins, as in every JSON reader clients use.
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some((_, slot)) => *slot = value,
                None => entries.push((key, value)),
            }
        }
        Ok(Json::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn objects_keep_their_order_through_a_round_trip() {
        let text = r#"{"zeta":1,"alpha":{"b":[1,2.5,"x",null,true],"a":{}},"mid":-3}"#;
        let json: Json = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), text);
        assert_eq!(json.keys(), ["zeta", "alpha", "mid"]);
    }

    #[test]
    fn set_replaces_in_place_and_appends_new_keys() {
        let mut json: Json = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
        assert!(json.set("a", Json::Null));
        assert!(!json.set("c", Json::Bool(true)));
        assert_eq!(
            serde_json::to_string(&json).unwrap(),
            r#"{"a":null,"b":2,"c":true}"#
        );
        assert!(json.object_at("b").is_none(), "b holds a number");
        assert!(json.object_at("d").is_some());
        assert_eq!(json.keys(), ["a", "b", "c", "d"]);
    }
}
