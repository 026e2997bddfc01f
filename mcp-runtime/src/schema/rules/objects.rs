//! The rules that reshape objects: one object for a top-level `anyOf`/`oneOf`/`allOf`, and
//! OpenAI's strict objects, where every property is required and nothing else allowed.

use serde_json::{Map, Value, json};

use super::Note;
use crate::schema::walk::{
    accepts_null, append_description, describe, is_object_like, visit, visit_mut,
};

// ---- FlattenTopLevelCombinators ----

pub(super) fn flatten_top_level_combinators(schema: &mut Value, notes: &mut Vec<Note>) {
    let Value::Object(root) = schema else { return };
    if let Some(Value::Array(parts)) = root.remove("allOf") {
        for part in parts {
            if let Value::Object(part) = part {
                merge_part(root, part);
            }
        }
    }
    for (key, words) in [("oneOf", "Exactly one"), ("anyOf", "At least one")] {
        let Some(Value::Array(branches)) = root.remove(key) else {
            continue;
        };
        // The root is an object, so branches that are not objects match nothing.
        let branches: Vec<Map<String, Value>> = branches
            .into_iter()
            .filter_map(|b| match b {
                Value::Object(b) if is_object_like(&b) => Some(b),
                _ => None,
            })
            .collect();
        let Some((first, rest)) = branches.split_first() else {
            continue;
        };
        let mut merged: Vec<(String, Vec<Value>)> = Vec::new();
        for (name, property) in branches.iter().flat_map(properties) {
            match merged.iter_mut().find(|(n, _)| n == name) {
                Some((_, seen)) if seen.contains(property) => {}
                Some((_, seen)) => seen.push(property.clone()),
                None => merged.push((name.clone(), vec![property.clone()])),
            }
        }
        let common: Vec<Value> = required(first)
            .filter(|r| rest.iter().all(|b| required(b).any(|x| x == *r)))
            .cloned()
            .collect();
        let forms: Vec<String> = branches.iter().map(form).collect();
        let props = root
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(props) = props {
            for (name, schemas) in merged {
                props.entry(name).or_insert_with(|| union(schemas));
            }
        }
        add_required(root, common);
        append_description(
            root,
            &format!("{words} of these forms: {}.", forms.join("; ")),
        );
        notes.push(Note::new(
            "",
            format!(
                "the top-level `{key}` is merged into one object: which properties go together is stated in the description only"
            ),
        ));
    }
    // Every property is named at the root now, so "nothing unevaluated" is "nothing else".
    if root.get("unevaluatedProperties") == Some(&Value::Bool(false))
        && !["allOf", "anyOf", "oneOf"]
            .iter()
            .any(|k| root.contains_key(*k))
    {
        root.remove("unevaluatedProperties");
        root.entry("additionalProperties").or_insert(false.into());
    }
}

fn properties(schema: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

fn required(schema: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn add_required(schema: &mut Map<String, Value>, names: Vec<Value>) {
    if names.is_empty() {
        return;
    }
    if let Value::Array(list) = schema.entry("required").or_insert_with(|| json!([])) {
        for name in names {
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }
}

/// Merges one part of an `allOf` into the schema (both must hold, so this is exact for
/// object parts; a property named in both keeps the root's schema).
fn merge_part(root: &mut Map<String, Value>, mut part: Map<String, Value>) {
    if let Some(Value::Object(props)) = part.remove("properties")
        && let Value::Object(into) = root.entry("properties").or_insert_with(|| json!({}))
    {
        for (name, schema) in props {
            into.entry(name).or_insert(schema);
        }
    }
    if let Some(Value::Array(names)) = part.remove("required") {
        add_required(root, names);
    }
    for (key, value) in part {
        root.entry(key).or_insert(value);
    }
}

/// One branch in words: its required properties, with the value of those that are fixed.
fn form(branch: &Map<String, Value>) -> String {
    let props = branch.get("properties").and_then(Value::as_object);
    let fields: Vec<String> = required(branch)
        .filter_map(Value::as_str)
        .map(
            |name| match props.and_then(|p| p.get(name)).and_then(single_value) {
                Some(value) => format!("`{name}` = {value}"),
                None => format!("`{name}`"),
            },
        )
        .collect();
    if fields.is_empty() {
        "no required properties".into()
    } else {
        fields.join(" with ")
    }
}

/// The one value a schema allows, when it allows one (`const`, or `enum` of one).
fn single_value(schema: &Value) -> Option<&Value> {
    schema.get("const").or_else(|| match schema.get("enum") {
        Some(Value::Array(values)) if values.len() == 1 => values.first(),
        _ => None,
    })
}

/// A schema accepting what any of `schemas` accepts: an `enum` when each allows one value.
fn union(mut schemas: Vec<Value>) -> Value {
    if schemas.len() == 1 {
        return schemas.pop().unwrap_or_default();
    }
    let values: Option<Vec<Value>> = schemas.iter().map(|s| single_value(s).cloned()).collect();
    match values {
        Some(values) => {
            let mut out = Map::new();
            let ty = schemas[0].get("type");
            if ty.is_some() && schemas.iter().all(|s| s.get("type") == ty) {
                out.insert("type".into(), ty.cloned().unwrap_or_default());
            }
            if let Some(description) = schemas.iter().find_map(|s| s.get("description")) {
                out.insert("description".into(), description.clone());
            }
            out.insert("enum".into(), Value::Array(values));
            Value::Object(out)
        }
        None => json!({ "anyOf": schemas }),
    }
}

// ---- RequireAllProperties ----

pub(super) fn require_all_properties(schema: &mut Value) {
    visit_mut(schema, "", &mut |map, _| {
        if !is_object_like(map) {
            return;
        }
        let mut required: Vec<Value> = required(map).cloned().collect();
        if let Some(Value::Object(props)) = map.get_mut("properties") {
            for (name, property) in props.iter_mut() {
                let name = Value::String(name.clone());
                if required.contains(&name) {
                    continue;
                }
                required.push(name);
                if !accepts_null(property) {
                    make_nullable(property);
                }
            }
        } else {
            map.insert("properties".into(), json!({}));
        }
        map.insert("required".into(), Value::Array(required));
        // Closing an object whose combinators name more properties would refuse those; the
        // check reports it instead.
        let combined = ["allOf", "anyOf", "oneOf"]
            .iter()
            .any(|k| map.contains_key(*k));
        if !combined
            && !map
                .get("additionalProperties")
                .is_some_and(Value::is_object)
        {
            map.insert("additionalProperties".into(), false.into());
        }
    });
}

/// Lets a schema accept `null` too, saying what `null` means.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(value) = map.remove("const") {
        map.insert("enum".into(), json!([value]));
    }
    let has_enum = match map.get_mut("enum") {
        Some(Value::Array(values)) => {
            values.push(Value::Null);
            true
        }
        _ => false,
    };
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) => types.push("null".into()),
        _ if has_enum => {}
        _ => {
            let mut inner = std::mem::take(map);
            if let Some(description) = inner.remove("description") {
                map.insert("description".into(), description);
            }
            map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
        }
    }
    append_description(map, "Null when not given.");
}

pub(super) fn check_strict(schema: &Value, found: &mut impl FnMut(&str, String)) {
    visit(schema, "", &mut |map, pointer| {
        if let Some(values) = map.get("additionalProperties").filter(|v| v.is_object()) {
            found(
                pointer,
                format!(
                    "a map (an object with any keys, values: {}) cannot be expressed: strict mode requires `additionalProperties: false`",
                    describe(values)
                ),
            );
        } else if is_object_like(map) {
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                found(
                    pointer,
                    "an object cannot be closed with `additionalProperties: false`: its `anyOf`/`oneOf`/`allOf` name more properties".into(),
                );
            }
            let required: Vec<&Value> = required(map).collect();
            for (name, _) in properties(map) {
                if !required.contains(&&Value::String(name.clone())) {
                    found(pointer, format!("the property `{name}` is not required"));
                }
            }
        }
        let typed = ["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"]
            .iter()
            .any(|k| map.contains_key(*k));
        if !typed && !pointer.ends_with("/not") {
            found(
                pointer,
                "a value of any type cannot be expressed: strict mode needs a `type`".into(),
            );
        }
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::shaped;
    use super::super::{Rule, Target, apply, check};

    #[test]
    fn top_level_one_of_becomes_one_object_described_in_words() {
        let (s, notes) = shaped(
            Rule::FlattenTopLevelCombinators,
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "A"}, "x": {"type": "integer"}}, "required": ["kind", "x"]},
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "B"}, "y": {"type": "string"}}, "required": ["kind", "y"]}
                ],
                "unevaluatedProperties": false
            }),
        );
        assert_eq!(
            s["properties"]["kind"],
            json!({"type": "string", "enum": ["A", "B"]})
        );
        assert_eq!(s["required"], json!(["a", "kind"]));
        assert_eq!(s["additionalProperties"], false);
        assert!(s.get("unevaluatedProperties").is_none());
        assert_eq!(
            s["description"],
            "Exactly one of these forms: `kind` = \"A\" with `x`; `kind` = \"B\" with `y`."
        );
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn top_level_all_of_is_merged() {
        let (s, _) = shaped(
            Rule::FlattenTopLevelCombinators,
            json!({"type": "object", "allOf": [{"properties": {"x": {"type": "integer"}}, "required": ["x"]}]}),
        );
        assert_eq!(
            s,
            json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})
        );
    }

    #[test]
    fn require_all_properties_makes_optional_ones_nullable_and_objects_closed() {
        let (s, _) = shaped(
            Rule::RequireAllProperties,
            json!({"type": "object", "properties": {
                "a": {"type": "integer"},
                "b": {"type": ["string", "null"]},
                "c": {"type": "integer", "default": 3},
                "d": {"type": "object", "properties": {"x": {"enum": ["p", "q"], "type": "string"}}}
            }, "required": ["a"]}),
        );
        assert_eq!(s["required"], json!(["a", "b", "c", "d"]));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["b"], json!({"type": ["string", "null"]}));
        assert_eq!(
            s["properties"]["c"],
            json!({"type": ["integer", "null"], "default": 3, "description": "Null when not given."})
        );
        let d = &s["properties"]["d"];
        assert_eq!(d["type"], json!(["object", "null"]));
        assert_eq!(d["required"], json!(["x"]));
        assert_eq!(d["properties"]["x"]["enum"], json!(["p", "q", null]));
    }

    #[test]
    fn require_all_properties_reports_maps_and_untyped_values() {
        let mut schema = json!({"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "integer"}},
            "any": {"description": "Anything."}
        }});
        apply(
            Rule::RequireAllProperties,
            &mut schema,
            Target::Input,
            &mut Vec::new(),
        );
        let mut problems = Vec::new();
        check(
            Rule::RequireAllProperties,
            &schema,
            Target::Input,
            &mut problems,
        );
        let at: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(at, ["/properties/any", "/properties/m"]);
    }

    #[test]
    fn require_all_properties_leaves_output_schemas_alone() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let mut shaped = schema.clone();
        apply(
            Rule::RequireAllProperties,
            &mut shaped,
            Target::Output,
            &mut Vec::new(),
        );
        assert_eq!(shaped, schema);
    }
}
