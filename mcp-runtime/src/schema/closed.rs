//! Closed argument objects. serde drops a property its struct does not name, so a model that
//! misspells one would never know; the runtime refuses such a property instead (see
//! `registry::arguments`), and the schemas derived for arguments say so with
//! `additionalProperties: false` on every object — except where the type takes other
//! properties (a flattened map, or `additionalProperties` set by hand) or where closing would
//! refuse what serde accepts.

use serde_json::{Map, Value};

use super::walk::{Step, for_each_child_mut, is_object_like};

/// Closes every object schema that names its properties and says nothing of others.
pub(crate) fn close_objects(schema: &mut Value) {
    close(schema, false);
}

/// `beside_properties`: the schema is a branch of an `allOf`/`anyOf`/`oneOf` (or `then`/`else`)
/// whose parent names properties of its own (a flattened enum). Closing the branch would
/// refuse those, so it stays open.
fn close(schema: &mut Value, beside_properties: bool) {
    let Value::Object(map) = schema else { return };
    if !beside_properties && is_object_like(map) && !combined(map) && !says_what_else(map) {
        map.insert("additionalProperties".into(), false.into());
    }
    let has_properties = map.contains_key("properties");
    for_each_child_mut(map, |step, child| {
        let branch = matches!(
            step,
            Step::Many("allOf" | "anyOf" | "oneOf", _) | Step::One("then" | "else")
        );
        close(child, branch && has_properties);
    });
}

/// Whether other keywords decide which properties are allowed.
fn combined(map: &Map<String, Value>) -> bool {
    ["allOf", "anyOf", "oneOf", "if", "$ref", "dependentSchemas"]
        .iter()
        .any(|k| map.contains_key(*k))
}

/// Whether the schema already says what happens to properties it does not name.
fn says_what_else(map: &Map<String, Value>) -> bool {
    [
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
    ]
    .iter()
    .any(|k| map.contains_key(*k))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_with_named_properties_are_closed_at_every_depth() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "filter": {"type": ["object", "null"], "properties": {"tag": {"type": "string"}}},
                "items": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}}
            }
        });
        close_objects(&mut s);
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["filter"]["additionalProperties"], false);
        assert_eq!(
            s["properties"]["items"]["items"]["additionalProperties"],
            false
        );
    }

    #[test]
    fn maps_and_objects_that_take_other_properties_stay_open() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "map": {"type": "object", "additionalProperties": {"type": "integer"}},
                "any": {"type": "object", "additionalProperties": true},
                "flattened": {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": true}
            }
        });
        close_objects(&mut s);
        assert_eq!(
            s["properties"]["map"]["additionalProperties"]["type"],
            "integer"
        );
        assert_eq!(s["properties"]["any"]["additionalProperties"], true);
        assert!(
            s["properties"]["flattened"]
                .get("additionalProperties")
                .is_none()
        );
    }

    #[test]
    fn the_branches_of_a_flattened_enum_stay_open_and_those_of_a_plain_enum_close() {
        let branch = json!({"type": "object", "properties": {"kind": {"const": "A"}, "x": {}}});
        let mut flattened = json!({
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "oneOf": [branch.clone()]
        });
        close_objects(&mut flattened);
        assert!(flattened.get("additionalProperties").is_none());
        assert!(flattened["oneOf"][0].get("additionalProperties").is_none());

        let mut plain = json!({"oneOf": [branch]});
        close_objects(&mut plain);
        assert_eq!(plain["oneOf"][0]["additionalProperties"], false);
    }
}
