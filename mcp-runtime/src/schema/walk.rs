//! Walking the subschemas of a JSON Schema, and the few words that tell a model what a
//! removed keyword meant.
//!
//! Only schema positions are walked: the values of `enum`, `const`, `default` or `examples` are
//! data, and a property named `type` is a name, not a keyword.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];

/// Keywords whose value is an array of subschemas (`items` in its draft-07 tuple form).
const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords whose value maps names to subschemas.
const NAMED: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Escapes one segment of a JSON pointer (RFC 6901).
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Where a direct subschema sits in its parent: the JSON pointer segments that lead to it,
/// written out only by those who need them (most walks look at the keyword alone).
#[derive(Clone, Copy)]
pub(crate) enum Step<'a> {
    /// The value of a keyword that holds one subschema (`/items`).
    One(&'a str),
    /// An entry of a keyword's array of subschemas (`/anyOf/1`).
    Many(&'a str, usize),
    /// A named entry of a keyword's map of subschemas (`/properties/name`).
    Named(&'a str, &'a str),
}

impl std::fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::One(k) => write!(f, "/{k}"),
            Step::Many(k, i) => write!(f, "/{k}/{i}"),
            Step::Named(k, name) => {
                write!(f, "/{k}/")?;
                let mut rest = *name;
                while let Some(at) = rest.find(['~', '/']) {
                    f.write_str(&rest[..at])?;
                    f.write_str(if rest.as_bytes()[at] == b'~' {
                        "~0"
                    } else {
                        "~1"
                    })?;
                    rest = &rest[at + 1..];
                }
                f.write_str(rest)
            }
        }
    }
}

/// Calls `f` with each direct subschema and where it sits.
pub(crate) fn for_each_child_mut(
    schema: &mut Map<String, Value>,
    mut f: impl FnMut(Step<'_>, &mut Value),
) {
    for (key, value) in schema.iter_mut() {
        let k = key.as_str();
        match value {
            Value::Object(_) if ONE.contains(&k) => f(Step::One(k), value),
            Value::Array(items) if MANY.contains(&k) => {
                for (i, item) in items.iter_mut().enumerate() {
                    f(Step::Many(k, i), item);
                }
            }
            Value::Object(named) if NAMED.contains(&k) => {
                for (name, item) in named.iter_mut().filter(|(_, v)| v.is_object()) {
                    f(Step::Named(k, name), item);
                }
            }
            _ => {}
        }
    }
}

/// Calls `f` with each direct subschema and where it sits.
pub(crate) fn for_each_child(schema: &Map<String, Value>, mut f: impl FnMut(Step<'_>, &Value)) {
    for (key, value) in schema {
        let k = key.as_str();
        match value {
            Value::Object(_) if ONE.contains(&k) => f(Step::One(k), value),
            Value::Array(items) if MANY.contains(&k) => {
                for (i, item) in items.iter().enumerate() {
                    f(Step::Many(k, i), item);
                }
            }
            Value::Object(named) if NAMED.contains(&k) => {
                for (name, item) in named.iter().filter(|(_, v)| v.is_object()) {
                    f(Step::Named(k, name), item);
                }
            }
            _ => {}
        }
    }
}

/// Calls `f` on the schema and then on every subschema below it, each with its JSON pointer.
/// A parent is visited before its children, so the children `f` sees are those it left.
pub(crate) fn visit_mut(
    schema: &mut Value,
    pointer: &str,
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    let Value::Object(map) = schema else { return };
    f(map, pointer);
    for_each_child_mut(map, |step, child| {
        visit_mut(child, &format!("{pointer}{step}"), f);
    });
}

/// Calls `f` on the schema and on every subschema below it, each with its JSON pointer.
pub(crate) fn visit(schema: &Value, pointer: &str, f: &mut dyn FnMut(&Map<String, Value>, &str)) {
    let Value::Object(map) = schema else { return };
    f(map, pointer);
    for_each_child(map, |step, child| {
        visit(child, &format!("{pointer}{step}"), f);
    });
}

/// Adds a sentence to a schema's description, after what it says already.
pub(crate) fn append_description(schema: &mut Map<String, Value>, sentence: &str) {
    match schema.get_mut("description") {
        Some(Value::String(text)) if !text.trim().is_empty() => {
            if !text.ends_with(['.', '!', '?', ')', ':']) {
                text.push('.');
            }
            text.push(' ');
            text.push_str(sentence);
        }
        _ => {
            schema.insert("description".into(), sentence.into());
        }
    }
}

/// The instance types a schema names in `type`.
pub(crate) fn type_names(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a schema names `name` in `type` (as [`type_names`] would list it, without the list).
pub(crate) fn names_type(schema: &Map<String, Value>, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// Whether a schema describes objects with named properties (a struct, not a map).
pub(crate) fn is_object_like(schema: &Map<String, Value>) -> bool {
    schema.contains_key("properties")
        || (names_type(schema, "object")
            && !schema
                .get("additionalProperties")
                .is_some_and(Value::is_object))
}

/// Whether `null` is among the values a schema accepts, as far as its own keywords say.
pub(crate) fn accepts_null(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return schema == &Value::Bool(true);
    };
    if map.is_empty() {
        return true;
    }
    if map.get("const") == Some(&Value::Null)
        || map.get("nullable") == Some(&Value::Bool(true))
        || type_names(map).contains(&"null")
        || map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.contains(&Value::Null))
    {
        return true;
    }
    if ["anyOf", "oneOf"].iter().any(|key| {
        map.get(*key)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(accepts_null))
    }) {
        return true;
    }
    // Only annotations (a description, a title): any value, null too.
    !CONSTRAINING.iter().any(|k| map.contains_key(*k))
}

/// Keywords that restrict which kinds of value a schema accepts.
const CONSTRAINING: &[&str] = &[
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref", "if",
];

/// Whether a schema accepts `null` and nothing else.
pub(crate) fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// A few words naming what a schema accepts: `integer`, `array of string`, `"a" or "b"`.
pub(crate) fn describe(schema: &Value) -> String {
    let Value::Object(map) = schema else {
        return "any value".into();
    };
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if let Some(value) = map.get("const") {
        return value.to_string();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array) {
            return branches
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join(" or ");
        }
    }
    let names = type_names(map);
    if names.is_empty() {
        return "any value".into();
    }
    names
        .iter()
        .map(|t| match (*t, map.get("items")) {
            ("array", Some(items @ Value::Object(_))) => format!("array of {}", describe(items)),
            (t, _) => t.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// A JSON pointer into a schema as a reader says it: `/properties/tree/items` → `tree[]`.
pub(crate) fn readable_path(pointer: &str) -> String {
    let mut out = String::new();
    let mut segments = pointer.split('/').skip(1);
    while let Some(segment) = segments.next() {
        match segment {
            "properties" | "$defs" | "definitions" => {
                if let Some(name) = segments.next() {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&name.replace("~1", "/").replace("~0", "~"));
                }
            }
            "items" | "additionalItems" => out.push_str("[]"),
            "additionalProperties" => out.push_str("{}"),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                segments.next();
            }
            _ => {}
        }
    }
    if out.is_empty() {
        "the whole object".into()
    } else {
        format!("`{out}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_subschema_is_visited_and_data_is_not() {
        let schema = json!({
            "properties": {"type": {"enum": [{"properties": {}}]}, "a/b": {"items": {}}, "~/~": {}},
            "anyOf": [{}, {"not": {}}],
            "$defs": {"T": {"prefixItems": [{}]}},
            "default": {"properties": {"x": {}}}
        });
        let mut seen = Vec::new();
        visit(&schema, "", &mut |_, pointer| seen.push(pointer.to_owned()));
        seen.sort();
        assert_eq!(
            seen,
            [
                "",
                "/$defs/T",
                "/$defs/T/prefixItems/0",
                "/anyOf/0",
                "/anyOf/1",
                "/anyOf/1/not",
                "/properties/a~1b",
                "/properties/a~1b/items",
                "/properties/type",
                "/properties/~0~1~0",
            ]
        );
    }

    #[test]
    fn descriptions_gain_a_sentence() {
        let mut schema = Map::new();
        append_description(&mut schema, "Format: int32.");
        assert_eq!(schema["description"], "Format: int32.");
        append_description(&mut schema, "At least 0.");
        assert_eq!(schema["description"], "Format: int32. At least 0.");
        let mut schema = json!({"description": "A count"});
        append_description(schema.as_object_mut().unwrap(), "At least 0.");
        assert_eq!(schema["description"], "A count. At least 0.");
    }

    #[test]
    fn null_acceptance_follows_type_enum_and_branches() {
        assert!(accepts_null(&json!({"type": ["string", "null"]})));
        assert!(accepts_null(&json!({"enum": ["a", null]})));
        assert!(accepts_null(
            &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
        ));
        assert!(accepts_null(&json!({})));
        assert!(accepts_null(&json!({"description": "Anything."})));
        assert!(!accepts_null(&json!({"type": "integer", "default": 0})));
    }

    #[test]
    fn schemas_are_described_in_words() {
        assert_eq!(
            describe(&json!({"type": "array", "items": {"type": "integer"}})),
            "array of integer"
        );
        assert_eq!(describe(&json!({"enum": ["a", "b"]})), "\"a\" or \"b\"");
        assert_eq!(describe(&json!({})), "any value");
    }

    #[test]
    fn pointers_read_as_paths() {
        assert_eq!(
            readable_path("/properties/tree/properties/children/items"),
            "`tree.children[]`"
        );
        assert_eq!(readable_path(""), "the whole object");
        assert_eq!(readable_path("/anyOf/1/properties/x"), "`x`");
    }
}
