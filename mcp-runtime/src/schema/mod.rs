//! JSON Schemas from Rust types: the schemars settings every tool shares, and the profiles
//! that shape them for clients that refuse part of JSON Schema.
//!
//! Schemas follow JSON Schema 2020-12 (the dialect MCP 2025-11-25 names as the default), with
//! every subschema inlined — several clients do not resolve `$ref` — except where a type is
//! recursive and a `$ref` is the only finite form. No `$schema` keyword is emitted: some clients
//! reject a schema that names a dialect URL.
//!
//! Between schemars and the wire, a [`SchemaProfile`] (a list of [`Rule`]s) shapes each schema
//! for the client that reads it, once per tool, protocol revision and profile. The book's
//! chapter "JSON Schemas every client accepts" has the whole story.

mod closed;
mod profiles;
mod rules;
mod walk;

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

pub(crate) use closed::close_objects;
pub(crate) use profiles::ServerProfiles;
pub(crate) use profiles::name_matches;
pub use profiles::{KnownClient, SchemaProfile, UnknownSchemaProfile, known_clients};
pub use rules::Rule;
pub(crate) use rules::{Target, is_short_name_of};

fn settings(contract: Contract) -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
        s.contract = contract;
    })
}

/// The schema of a type as it is deserialised (tool arguments), before any profile.
///
/// ```
/// let s = mcp_runtime::schema::input_schema_for::<Option<u8>>();
/// assert_eq!(s["type"], mcp_runtime::serde_json::json!(["integer", "null"]));
/// ```
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let schema = settings(Contract::Deserialize)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = object_root(schema);
    object_subschemas(&mut value);
    value
}

/// The schema of a type as it is serialised (structured tool output).
///
/// ```
/// let s = mcp_runtime::schema::schema_for::<Vec<u8>>();
/// assert_eq!(s["type"], "array");
/// assert!(s.get("$schema").is_none());
/// ```
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut value = settings(Contract::Serialize)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    object_subschemas(&mut value);
    value
}

/// Rewrites boolean property schemas (`true` for "anything", as schemars gives for
/// `serde_json::Value`) as objects: MCP's `Tool` definition requires each property's schema to
/// be an object, and so do several clients.
fn object_subschemas(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "properties"
                    && let Value::Object(props) = v
                {
                    for prop in props.values_mut() {
                        match prop {
                            Value::Bool(true) => *prop = Value::Object(Map::new()),
                            Value::Bool(false) => *prop = serde_json::json!({ "not": {} }),
                            _ => {}
                        }
                    }
                }
                object_subschemas(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(object_subschemas),
        _ => {}
    }
}

/// Whether a schema's root describes only objects, as `inputSchema`, `outputSchema` and
/// `structuredContent` must.
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Wraps a non-object output schema as `{"result": …}`, the shape its values are sent in.
pub(crate) fn wrap_as_result(schema: Value) -> Value {
    let mut root = Map::new();
    let mut defs = None;
    let mut inner = schema;
    if let Some(obj) = inner.as_object_mut() {
        // `$defs` must stay at the root for the `$ref`s of recursive types to resolve.
        defs = obj.remove("$defs");
    }
    rewrite_root_refs(&mut inner);
    root.insert("type".into(), "object".into());
    root.insert("properties".into(), serde_json::json!({ "result": inner }));
    root.insert("required".into(), serde_json::json!(["result"]));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    let mut root = Value::Object(root);
    object_subschemas(&mut root);
    root
}

// `$ref: "#"` pointed at the old root; after wrapping it must point at the moved schema.
fn rewrite_root_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("$ref").and_then(Value::as_str) == Some("#") {
                map.insert("$ref".into(), "#/properties/result".into());
            }
            for v in map.values_mut() {
                rewrite_root_refs(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_root_refs),
        _ => {}
    }
}

fn object_root(schema: Schema) -> Value {
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        // A struct without fields comes out as `{"type":"object"}` already; `properties` is
        // added so clients that index into it find an object.
        if obj.get("type").and_then(Value::as_str) == Some("object")
            && !obj.contains_key("properties")
        {
            obj.insert("properties".into(), Value::Object(Map::new()));
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        label: String,
        children: Vec<Tree>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }

    #[test]
    fn nested_types_are_inlined_without_defs() {
        let s = input_schema_for::<Outer>();
        assert!(s.get("$defs").is_none(), "{s}");
        assert_eq!(
            s["properties"]["inner"]["properties"]["x"]["type"],
            "integer"
        );
        assert!(s.get("$schema").is_none());
    }

    #[test]
    fn recursive_types_keep_a_ref() {
        let s = input_schema_for::<Tree>();
        assert!(s.to_string().contains("$ref"), "{s}");
    }

    #[test]
    fn any_value_properties_are_empty_object_schemas() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Anything {
            value: serde_json::Value,
        }
        let s = input_schema_for::<Anything>();
        assert_eq!(s["properties"]["value"], json!({}));
        let s = wrap_as_result(schema_for::<serde_json::Value>());
        assert!(s["properties"]["result"].is_object(), "{s}");
    }

    #[test]
    fn non_object_output_is_wrapped_in_result() {
        let s = wrap_as_result(schema_for::<Vec<i32>>());
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["result"]));
        assert_eq!(s["properties"]["result"]["type"], "array");
    }
}
