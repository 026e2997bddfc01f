//! Tool arguments mirrored into HTTP headers (`x-mcp-header`, 2026-07-28): found in a tool's
//! input schema once, when the catalogue is built, and checked against the specification's
//! constraints there, so a server never lists a tool that clients must reject. What a header
//! name is comes from `mcp_grammar::header`, which `#[header]` checks too.

use mcp_grammar::header::{self, NameProblem};
use serde_json::Value;

/// The keyword naming the header a property is mirrored into.
pub(crate) const KEYWORD: &str = "x-mcp-header";

/// The JSON type of a mirrored argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Primitive {
    String,
    Integer,
    Boolean,
}

/// One argument mirrored into `Mcp-Param-{name}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    /// The chain of `properties` keys from the schema's root to the argument.
    pub path: Vec<String>,
    /// The name after `Mcp-Param-`, as the schema writes it.
    pub name: String,
    /// The whole header name, in lower case (`mcp-param-region`).
    pub header: String,
    pub kind: Primitive,
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
impl HeaderParam {
    /// The argument's value in a call's `arguments`, when it is there and not `null`.
    pub(crate) fn value_in<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        let mut node = arguments;
        for key in &self.path {
            node = node.get(key)?;
        }
        (!node.is_null()).then_some(node)
    }
}

/// The mirrored arguments of an input schema, or what makes the schema's `x-mcp-header`s
/// invalid.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let everywhere = count_keyword(schema);
    if everywhere == 0 {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    collect(schema, schema, &mut Vec::new(), &mut found)?;
    if everywhere > found.len() {
        return Err(format!(
            "`{KEYWORD}` may only mark a property reachable from the schema's root through `properties` alone (not through `items`, `$ref`, `$defs`, `anyOf`, `if` or the like)"
        ));
    }
    for (i, param) in found.iter().enumerate() {
        if found[..i].iter().any(|p| p.header == param.header) {
            return Err(format!(
                "two properties are mirrored into the header `Mcp-Param-{}` (header names are compared without regard to case)",
                param.name
            ));
        }
    }
    Ok(found)
}

/// Gives each mirrored property its one primitive type: an optional argument's
/// `["string", "null"]` becomes `"string"`, as clients that check the mark's constraints
/// expect. The argument may still be left out, which is how a client sends no value (and no
/// header).
pub(crate) fn plain_types(schema: &mut Value, params: &[HeaderParam]) {
    for param in params {
        let pointer: String = param
            .path
            .iter()
            .map(|key| format!("/properties/{}", key.replace('~', "~0").replace('/', "~1")))
            .collect();
        let Some(node) = schema.pointer_mut(&pointer) else {
            continue;
        };
        if let Some(Value::Array(_)) = node.get("type") {
            let plain = match param.kind {
                Primitive::String => "string",
                Primitive::Integer => "integer",
                Primitive::Boolean => "boolean",
            };
            node["type"] = plain.into();
        }
    }
}

fn collect<'s>(
    root: &Value,
    schema: &'s Value,
    path: &mut Vec<&'s str>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key);
        if let Some(name) = property.get(KEYWORD) {
            let at = path.join(".");
            let name = name
                .as_str()
                .ok_or_else(|| format!("`{KEYWORD}` of `{at}` must be a string"))?;
            header::check_name(name).map_err(|problem| {
                let problem = match problem {
                    NameProblem::Empty => "the header name is empty".to_owned(),
                    NameProblem::Character(c) => {
                        format!("`{}` cannot be in an HTTP header name", c.escape_default())
                    }
                };
                format!("`{KEYWORD}` of `{at}`: {problem}")
            })?;
            let kind = primitive(root, property).ok_or_else(|| {
                format!(
                    "`{KEYWORD}` marks `{at}`, which is not a string, an integer or a boolean; only those can be mirrored into a header"
                )
            })?;
            found.push(HeaderParam {
                path: path.iter().map(|key| (*key).to_owned()).collect(),
                name: name.to_owned(),
                header: header::field_name(name),
                kind,
            });
        }
        collect(root, property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// The one primitive type a property has (`null` aside, for optional arguments), looking
/// through a `$ref` into `$defs` for its type only.
fn primitive(root: &Value, property: &Value) -> Option<Primitive> {
    let property = match property.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.strip_prefix("#/$defs/")?;
            root.get("$defs")?.get(name)?
        }
        None => property,
    };
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        // An `enum` of strings alone is a string.
        None => match property.get("enum").and_then(Value::as_array) {
            Some(values) if values.iter().all(Value::is_string) => vec!["string"],
            _ => return None,
        },
        Some(_) => return None,
    };
    let mut kinds = types.into_iter().filter(|t| *t != "null");
    let kind = match kinds.next()? {
        "string" => Primitive::String,
        "integer" => Primitive::Integer,
        "boolean" => Primitive::Boolean,
        _ => return None,
    };
    kinds.next().is_none().then_some(kind)
}

fn count_keyword(schema: &Value) -> usize {
    match schema {
        Value::Object(map) => {
            usize::from(map.contains_key(KEYWORD)) + map.values().map(count_keyword).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_keyword).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marked_properties_are_found_at_their_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "limits": {"type": "object", "properties": {
                    "max": {"type": ["integer", "null"], "x-mcp-header": "Max"}
                }},
                "query": {"type": "string"}
            }
        });
        let found = header_params(&schema).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, ["limits", "max"]);
        assert_eq!(found[0].kind, Primitive::Integer);
        assert_eq!(found[1].header, "mcp-param-region");
        let args = json!({"region": "eu", "limits": {"max": null}});
        assert_eq!(found[1].value_in(&args), Some(&json!("eu")));
        assert_eq!(found[0].value_in(&args), None, "null means not given");
        let mut plain = schema.clone();
        plain_types(&mut plain, &found);
        assert_eq!(
            plain["properties"]["limits"]["properties"]["max"]["type"],
            "integer"
        );
    }

    #[test]
    fn invalid_marks_are_refused_with_the_reason() {
        let cases = [
            (
                json!({"properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
                "not a string",
            ),
            (
                json!({"properties": {"x": {"type": "string", "x-mcp-header": "A B"}}}),
                "`x-mcp-header` of `x`: ` ` cannot be in an HTTP header name",
            ),
            (
                json!({"properties": {"x": {"type": "string", "x-mcp-header": ""}}}),
                "`x-mcp-header` of `x`: the header name is empty",
            ),
            (
                json!({"properties": {
                    "a": {"type": "string", "x-mcp-header": "Same"},
                    "b": {"type": "string", "x-mcp-header": "same"}
                }}),
                "two properties",
            ),
            (
                json!({"properties": {"xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}}),
                "reachable",
            ),
        ];
        for (schema, expected) in cases {
            let problem = header_params(&schema).unwrap_err();
            assert!(problem.contains(expected), "{problem}");
        }
    }

    #[test]
    fn a_string_enum_behind_a_ref_is_a_string() {
        let schema = json!({
            "properties": {"r": {"$ref": "#/$defs/Region", "x-mcp-header": "Region"}},
            "$defs": {"Region": {"type": "string", "enum": ["eu", "us"]}}
        });
        assert_eq!(header_params(&schema).unwrap()[0].kind, Primitive::String);
    }
}
