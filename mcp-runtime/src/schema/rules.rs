//! The rules that shape a schema for a client: each one small, pure function over JSON, with
//! the check of what it guarantees afterwards (the lint reports what a rule could not reach).
//!
//! Every rule but [`Rule::RequireAllProperties`] widens or keeps what a schema accepts: a value
//! the schemars output accepts is still accepted once shaped, so the arguments a model builds
//! from the shaped schema still deserialise into the same Rust types.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::walk::{
    append_description, describe, escape, for_each_child_mut, is_null_schema, readable_path, visit,
    visit_mut,
};

mod objects;

use objects::{check_strict, flatten_top_level_combinators, require_all_properties};

/// One transformation of a JSON Schema, for clients that refuse part of JSON Schema 2020-12.
/// Profiles ([`SchemaProfile`](super::SchemaProfile)) are lists of rules, applied in order.
///
/// ```
/// use mcp_runtime::schema::{Rule, SchemaProfile};
/// use mcp_runtime::serde_json::json;
///
/// let profile = SchemaProfile::Custom(vec![Rule::ConstToEnum, Rule::DropDialect]);
/// let shaped = profile.shape_input(&json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "properties": {"kind": {"const": "circle"}}
/// }));
/// assert_eq!(shaped, json!({"type": "object", "properties": {"kind": {"enum": ["circle"]}}}));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// Replaces every `$ref` by the schema it points at and removes `$defs`. A recursive type
    /// cannot be inlined for ever: its nested occurrence keeps only its `type` and says, in
    /// its description, which level it repeats (the lint warns about it).
    InlineRefs,
    /// Removes the `$schema` keyword, whose dialect URL some clients refuse.
    DropDialect,
    /// Merges a top-level `allOf` into the root object and turns a top-level `anyOf`/`oneOf`
    /// of objects into one object holding every branch's properties; which properties go
    /// together is stated in the description. The Anthropic API refuses these at the root.
    FlattenTopLevelCombinators,
    /// Renames `oneOf` to `anyOf` (the branches serde derives are disjoint anyway).
    OneOfToAnyOf,
    /// Writes `const: v` as `enum: [v]`.
    ConstToEnum,
    /// Writes a tuple's `prefixItems` as one `items` schema, naming the order in words.
    PrefixItemsToItems,
    /// Writes "or null" the OpenAPI 3.0 way: `type: ["string", "null"]` becomes
    /// `type: "string", nullable: true`; so do `null` in `enum` and a `null` branch of `anyOf`.
    NullableKeyword,
    /// Removes these keywords everywhere; what they required is added to the description in
    /// words (`Format: uint32.`, `At least 0.`, `Default: 5.`).
    StripKeywords(&'static [&'static str]),
    /// Removes every `format` not in this list, naming it in the description.
    KeepFormats(&'static [&'static str]),
    /// OpenAI's strict mode: every property is required and every object closed
    /// (`additionalProperties: false`). An optional property becomes nullable, and the runtime
    /// reads an explicit `null` for it as "not given" (so a `#[serde(default)]` field takes its
    /// default). Applies to input schemas only: output is what the server produces.
    RequireAllProperties,
    /// Writes 2020-12 keywords the draft-07 way: `$defs` → `definitions`, `prefixItems` →
    /// array `items`, `dependentRequired` → `dependencies`, and `$ref` with siblings inside an
    /// `allOf` (draft-07 ignores a `$ref`'s siblings).
    Draft07Keywords,
    /// Shortens tool names longer than this many characters (at least 16) to a prefix and a
    /// stable hash of the full name; calls by the short name reach the tool.
    MaxToolNameLength(usize),
}

/// Which schema of a tool is being shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `inputSchema`: what the model sends.
    Input,
    /// `outputSchema`: what the server sends.
    Output,
}

/// Something a rule changed or could not do, at a place in the schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    /// A JSON pointer into the schema.
    pub pointer: String,
    pub message: String,
}

impl Note {
    fn new(pointer: &str, message: impl Into<String>) -> Self {
        Note {
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }
}

/// Applies one rule; `notes` receives what the schema no longer checks.
pub(crate) fn apply(rule: Rule, schema: &mut Value, target: Target, notes: &mut Vec<Note>) {
    match rule {
        Rule::InlineRefs => inline_refs(schema, notes),
        Rule::DropDialect => drop_dialect(schema),
        Rule::FlattenTopLevelCombinators => flatten_top_level_combinators(schema, notes),
        Rule::OneOfToAnyOf => one_of_to_any_of(schema),
        Rule::ConstToEnum => const_to_enum(schema),
        Rule::PrefixItemsToItems => prefix_items_to_items(schema, notes),
        Rule::NullableKeyword => nullable_keyword(schema),
        Rule::StripKeywords(keywords) => strip_keywords(schema, keywords),
        Rule::KeepFormats(formats) => keep_formats(schema, formats),
        Rule::RequireAllProperties if target == Target::Input => require_all_properties(schema),
        Rule::Draft07Keywords => draft07_keywords(schema, notes),
        Rule::RequireAllProperties | Rule::MaxToolNameLength(_) => {}
    }
}

/// What a shaped schema must no longer contain under this rule; each problem is a reason a
/// client may refuse the schema.
pub(crate) fn check(rule: Rule, schema: &Value, target: Target, problems: &mut Vec<Note>) {
    let mut found = |pointer: &str, message: String| problems.push(Note::new(pointer, message));
    match rule {
        Rule::InlineRefs => visit(schema, "", &mut |map, pointer| {
            if let Some(reference) = map.get("$ref") {
                found(
                    pointer,
                    format!(
                        "the reference {reference} points outside the schema and cannot be inlined"
                    ),
                );
            }
            for key in ["$defs", "definitions"] {
                if map.contains_key(key) {
                    found(pointer, format!("`{key}` remains"));
                }
            }
        }),
        Rule::DropDialect => {
            if schema.get("$schema").is_some() {
                found("", "`$schema` remains".into());
            }
        }
        Rule::FlattenTopLevelCombinators => {
            for key in ["allOf", "anyOf", "oneOf"] {
                if schema.get(key).is_some() {
                    found("", format!("`{key}` remains at the top level"));
                }
            }
        }
        Rule::OneOfToAnyOf => forbid_keywords(schema, &["oneOf"], &mut found),
        Rule::ConstToEnum => forbid_keywords(schema, &["const"], &mut found),
        Rule::PrefixItemsToItems => forbid_keywords(schema, &["prefixItems"], &mut found),
        Rule::StripKeywords(keywords) => forbid_keywords(schema, keywords, &mut found),
        Rule::NullableKeyword => visit(schema, "", &mut |map, pointer| {
            if map.get("type").is_some_and(Value::is_array) {
                found(pointer, "a list of types remains".into());
            }
            if map
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|v| v.contains(&Value::Null))
            {
                found(pointer, "`null` remains in `enum`".into());
            }
        }),
        Rule::KeepFormats(formats) => visit(schema, "", &mut |map, pointer| {
            if let Some(format) = map.get("format").and_then(Value::as_str)
                && !formats.contains(&format)
            {
                found(pointer, format!("the format `{format}` remains"));
            }
        }),
        Rule::RequireAllProperties if target == Target::Input => check_strict(schema, &mut found),
        Rule::Draft07Keywords => visit(schema, "", &mut |map, pointer| {
            for key in DRAFT_2020_12_ONLY {
                if map.contains_key(*key) {
                    found(pointer, format!("the 2020-12 keyword `{key}` remains"));
                }
            }
            if map.contains_key("$ref") && map.len() > 1 {
                found(pointer, "a `$ref` with sibling keywords remains".into());
            }
        }),
        Rule::RequireAllProperties | Rule::MaxToolNameLength(_) => {}
    }
}

fn forbid_keywords(schema: &Value, keywords: &[&str], found: &mut impl FnMut(&str, String)) {
    visit(schema, "", &mut |map, pointer| {
        for key in keywords {
            if map.contains_key(*key) {
                found(pointer, format!("the keyword `{key}` remains"));
            }
        }
    });
}

/// The shortest name [`Rule::MaxToolNameLength`] shortens to: a prefix, `_` and 8 hex digits.
const MIN_NAME_LENGTH: usize = 16;

/// A tool's name under a length limit: unchanged when it fits, else a prefix of it, `_` and
/// a hash of the whole name (FNV-1a, stable across builds and platforms).
pub(crate) fn shorten_name(name: &str, max: usize) -> Cow<'_, str> {
    let max = max.max(MIN_NAME_LENGTH);
    if name.len() <= max {
        return Cow::Borrowed(name);
    }
    let hash = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let mut cut = max - 9;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    Cow::Owned(format!("{}_{hash:08x}", &name[..cut]))
}

/// Whether `short` is what [`shorten_name`] makes of `full` under some limit.
pub(crate) fn is_short_name_of(short: &str, full: &str) -> bool {
    let looks_short = short.len() > 9
        && short.as_bytes()[short.len() - 9] == b'_'
        && short[short.len() - 8..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit());
    looks_short
        && full.len() > short.len()
        && (short.len()..short.len() + 4).any(|max| shorten_name(full, max) == short)
}

// ---- InlineRefs ----

fn inline_refs(schema: &mut Value, notes: &mut Vec<Note>) {
    let Value::Object(root) = schema else { return };
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = root.remove(key) {
            for (name, def) in found {
                defs.insert(format!("#/{key}/{}", escape(&name)), def);
            }
        }
    }
    let whole = schema.clone();
    let mut inliner = Inliner {
        defs,
        whole,
        stack: vec![("#".into(), String::new())],
        notes,
    };
    inliner.resolve(schema, "");
}

struct Inliner<'n> {
    /// The definitions, by the reference that names them (`#/$defs/Tree`).
    defs: Map<String, Value>,
    /// The root schema, for `$ref: "#"`.
    whole: Value,
    /// The references being inlined, each with where it was first inlined.
    stack: Vec<(String, String)>,
    notes: &'n mut Vec<Note>,
}

impl Inliner<'_> {
    fn resolve(&mut self, node: &mut Value, pointer: &str) {
        let Value::Object(map) = node else { return };
        let Some(Value::String(reference)) = map.get("$ref") else {
            for_each_child_mut(map, |step, child| {
                self.resolve(child, &format!("{pointer}{step}"));
            });
            return;
        };
        let reference = reference.clone();
        let target = if reference == "#" {
            Some(&self.whole)
        } else {
            self.defs.get(&reference)
        };
        // A reference outside the schema stays; the check reports it.
        let Some(target) = target.cloned() else {
            return;
        };
        map.remove("$ref");
        let siblings = std::mem::take(map);
        let first = self
            .stack
            .iter()
            .find(|(r, _)| *r == reference)
            .map(|(_, p)| p.clone());
        let mut replacement = match &first {
            Some(_) => target.get("type").map_or_else(Map::new, |t| {
                Map::from_iter([("type".to_owned(), t.clone())])
            }),
            None => match target {
                Value::Object(target) => target,
                _ => Map::new(),
            },
        };
        // The referring schema's own keywords (a property's description) win.
        replacement.extend(siblings);
        let mut replacement = Value::Object(replacement);
        match first {
            Some(first) => {
                let name = reference.rsplit('/').next().unwrap_or("#");
                self.notes.push(Note::new(
                    pointer,
                    format!(
                        "the recursive type `{name}` cannot be expressed without `$ref`: its nested levels are not checked"
                    ),
                ));
                if let Value::Object(map) = &mut replacement {
                    append_description(
                        map,
                        &format!("Recursive: the same shape as {}.", readable_path(&first)),
                    );
                }
            }
            None => {
                self.stack.push((reference, pointer.to_owned()));
                self.resolve(&mut replacement, pointer);
                self.stack.pop();
            }
        }
        *node = replacement;
    }
}

// ---- DropDialect ----

fn drop_dialect(schema: &mut Value) {
    if let Value::Object(root) = schema {
        root.remove("$schema");
    }
}

// ---- OneOfToAnyOf, ConstToEnum, PrefixItemsToItems ----

fn one_of_to_any_of(schema: &mut Value) {
    visit_mut(schema, "", &mut |map, _| {
        if let Some(branches) = map.remove("oneOf") {
            if map.contains_key("anyOf") {
                let all = map.entry("allOf").or_insert_with(|| json!([]));
                if let Value::Array(all) = all {
                    all.push(json!({ "anyOf": branches }));
                }
            } else {
                map.insert("anyOf".into(), branches);
            }
        }
    });
}

fn const_to_enum(schema: &mut Value) {
    visit_mut(schema, "", &mut |map, _| {
        if let Some(value) = map.remove("const") {
            match map.get_mut("enum") {
                Some(Value::Array(values)) => values.retain(|v| *v == value),
                _ => {
                    map.insert("enum".into(), json!([value]));
                }
            }
        }
    });
}

fn prefix_items_to_items(schema: &mut Value, notes: &mut Vec<Note>) {
    visit_mut(schema, "", &mut |map, pointer| {
        let Some(Value::Array(prefix)) = map.remove("prefixItems") else {
            return;
        };
        let order: Vec<String> = prefix.iter().map(describe).collect();
        let mut kinds: Vec<Value> = Vec::new();
        for item in prefix
            .into_iter()
            .chain(map.remove("items").filter(Value::is_object))
        {
            if !kinds.contains(&item) {
                kinds.push(item);
            }
        }
        let items = match kinds.len() {
            1 => kinds.pop().unwrap_or_default(),
            _ => json!({ "anyOf": kinds }),
        };
        map.insert("items".into(), items);
        append_description(map, &format!("In this order: {}.", order.join(", ")));
        notes.push(Note::new(
            pointer,
            "the type of each position of a tuple is stated in the description only",
        ));
    });
}

// ---- NullableKeyword ----

fn nullable_keyword(schema: &mut Value) {
    visit_mut(schema, "", &mut |map, _| {
        let mut nullable = false;
        for key in ["anyOf", "oneOf"] {
            let Some(Value::Array(branches)) = map.get_mut(key) else {
                continue;
            };
            let before = branches.len();
            branches.retain(|b| !is_null_schema(b));
            if branches.len() == before {
                continue;
            }
            nullable = true;
            if branches.len() == 1 {
                let only = branches.pop();
                map.remove(key);
                if let Some(Value::Object(only)) = only {
                    for (k, v) in only {
                        map.entry(k).or_insert(v);
                    }
                }
            }
        }
        if let Some(Value::Array(types)) = map.get_mut("type") {
            let before = types.len();
            types.retain(|t| t != "null");
            nullable |= types.len() != before;
            let types = std::mem::take(types);
            map.remove("type");
            match <[Value; 1]>::try_from(types) {
                Ok([only]) => {
                    map.insert("type".into(), only);
                }
                Err(types) if !types.is_empty() => {
                    let branches: Vec<Value> =
                        types.into_iter().map(|t| json!({"type": t})).collect();
                    map.insert("anyOf".into(), branches.into());
                }
                Err(_) => {}
            }
        }
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            let before = values.len();
            values.retain(|v| !v.is_null());
            nullable |= values.len() != before;
        }
        if nullable {
            map.insert("nullable".into(), true.into());
        }
    });
}

// ---- StripKeywords, KeepFormats ----

fn strip_keywords(schema: &mut Value, keywords: &[&str]) {
    visit_mut(schema, "", &mut |map, _| {
        let sentences: Vec<String> = keywords
            .iter()
            .filter_map(|k| map.remove(*k).and_then(|v| in_words(k, &v)))
            .collect();
        if !sentences.is_empty() {
            append_description(map, &sentences.join(" "));
        }
    });
}

fn keep_formats(schema: &mut Value, formats: &[&str]) {
    visit_mut(schema, "", &mut |map, _| {
        if let Some(Value::String(format)) = map.get("format")
            && !formats.contains(&format.as_str())
        {
            let sentence = format!("Format: {format}.");
            map.remove("format");
            append_description(map, &sentence);
        }
    });
}

/// What a removed keyword required, as a sentence; `None` for annotations that say nothing a
/// model needs (or that the server checks anyway, such as `additionalProperties: false`).
fn in_words(keyword: &str, value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some(match keyword {
        "format" => format!("Format: {text}."),
        "minimum" => format!("At least {text}."),
        "maximum" => format!("At most {text}."),
        "exclusiveMinimum" => format!("Greater than {text}."),
        "exclusiveMaximum" => format!("Less than {text}."),
        "multipleOf" => format!("A multiple of {text}."),
        "minLength" => format!("At least {text} characters."),
        "maxLength" => format!("At most {text} characters."),
        "pattern" => format!("Matches the pattern `{text}`."),
        "minItems" => format!("At least {text} items."),
        "maxItems" => format!("At most {text} items."),
        "uniqueItems" if value == &Value::Bool(true) => "The items are unique.".into(),
        "minProperties" => format!("At least {text} properties."),
        "maxProperties" => format!("At most {text} properties."),
        "default" => format!("Default: {value}."),
        "examples" => format!("Examples: {value}."),
        "additionalProperties" | "unevaluatedProperties" if value.is_object() => {
            format!("Other properties: {}.", describe(value))
        }
        "propertyNames" => format!("Property names: {}.", describe(value)),
        "uniqueItems"
        | "additionalProperties"
        | "unevaluatedProperties"
        | "title"
        | "$comment"
        | "$id"
        | "$anchor"
        | "$schema"
        | "readOnly"
        | "writeOnly"
        | "deprecated"
        | "contentEncoding"
        | "contentMediaType" => return None,
        other => format!("`{other}`: {value}."),
    })
}

// ---- Draft07Keywords ----

/// Keywords draft-07 does not have.
const DRAFT_2020_12_ONLY: &[&str] = &[
    "$defs",
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "minContains",
    "maxContains",
    "contentSchema",
];

fn draft07_keywords(schema: &mut Value, notes: &mut Vec<Note>) {
    visit_mut(schema, "", &mut |map, pointer| {
        if let Some(Value::Object(defs)) = map.remove("$defs")
            && let Value::Object(into) = map.entry("definitions").or_insert_with(|| json!({}))
        {
            into.extend(defs);
        }
        if let Some(Value::String(reference)) = map.get_mut("$ref")
            && let Some(name) = reference.strip_prefix("#/$defs/")
        {
            *reference = format!("#/definitions/{name}");
        }
        if let Some(prefix) = map.remove("prefixItems") {
            if let Some(rest) = map.remove("items") {
                map.insert("additionalItems".into(), rest);
            }
            map.insert("items".into(), prefix);
        }
        for key in ["dependentRequired", "dependentSchemas"] {
            if let Some(Value::Object(deps)) = map.remove(key)
                && let Value::Object(into) = map.entry("dependencies").or_insert_with(|| json!({}))
            {
                into.extend(deps);
            }
        }
        let combined = ["allOf", "anyOf", "oneOf", "if", "$ref"]
            .iter()
            .any(|k| map.contains_key(*k));
        match map.remove("unevaluatedProperties") {
            Some(Value::Bool(false)) if !combined => {
                map.entry("additionalProperties").or_insert(false.into());
            }
            Some(_) => notes.push(Note::new(
                pointer,
                "`unevaluatedProperties` has no draft-07 form: other properties are not refused",
            )),
            None => {}
        }
        if map.remove("unevaluatedItems").is_some() {
            notes.push(Note::new(
                pointer,
                "`unevaluatedItems` has no draft-07 form: other items are not refused",
            ));
        }
        for key in ["$anchor", "$dynamicRef", "$dynamicAnchor", "contentSchema"] {
            map.remove(key);
        }
        for key in ["minContains", "maxContains"] {
            if let Some(value) = map.remove(key) {
                append_description(map, &format!("`{key}`: {value}."));
            }
        }
        if map.contains_key("$ref") && map.len() > 1 {
            let reference = map.remove("$ref").unwrap_or_default();
            let all = map.entry("allOf").or_insert_with(|| json!([]));
            if let Value::Array(all) = all {
                all.insert(0, json!({ "$ref": reference }));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn shaped(rule: Rule, mut schema: Value) -> (Value, Vec<Note>) {
        let mut notes = Vec::new();
        apply(rule, &mut schema, Target::Input, &mut notes);
        let mut problems = Vec::new();
        check(rule, &schema, Target::Input, &mut problems);
        assert!(
            problems.is_empty(),
            "{rule:?} left {problems:?} in {schema}"
        );
        (schema, notes)
    }

    #[test]
    fn inline_refs_replaces_references_and_drops_defs() {
        let (s, notes) = shaped(
            Rule::InlineRefs,
            json!({
                "type": "object",
                "properties": {"p": {"$ref": "#/$defs/Point", "description": "Where."}},
                "$defs": {"Point": {"type": "object", "description": "A point.", "properties": {"x": {"type": "number"}}}}
            }),
        );
        assert_eq!(
            s,
            json!({"type": "object", "properties": {"p": {"type": "object", "description": "Where.", "properties": {"x": {"type": "number"}}}}})
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn inline_refs_cuts_recursion_after_one_level_and_says_so() {
        let (s, notes) = shaped(
            Rule::InlineRefs,
            json!({
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/Tree"}},
                "$defs": {"Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}
            }),
        );
        let nested = &s["properties"]["tree"]["properties"]["children"]["items"];
        assert_eq!(nested["type"], "object");
        assert_eq!(
            nested["description"],
            "Recursive: the same shape as `tree`."
        );
        assert_eq!(notes.len(), 1);
        assert_eq!(
            notes[0].pointer,
            "/properties/tree/properties/children/items"
        );
    }

    #[test]
    fn inline_refs_resolves_the_root_reference() {
        let (s, notes) = shaped(
            Rule::InlineRefs,
            json!({"type": "object", "properties": {"next": {"type": ["object", "null"], "anyOf": [{"$ref": "#"}]}}}),
        );
        assert_eq!(s["properties"]["next"]["anyOf"][0]["type"], "object");
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn drop_dialect_removes_the_schema_url() {
        let (s, _) = shaped(
            Rule::DropDialect,
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
        );
        assert_eq!(s, json!({"type": "object"}));
    }

    #[test]
    fn one_of_becomes_any_of() {
        let (s, _) = shaped(Rule::OneOfToAnyOf, json!({"oneOf": [{"type": "string"}]}));
        assert_eq!(s, json!({"anyOf": [{"type": "string"}]}));
    }

    #[test]
    fn const_becomes_a_one_value_enum() {
        let (s, _) = shaped(
            Rule::ConstToEnum,
            json!({"properties": {"k": {"type": "string", "const": "A"}}}),
        );
        assert_eq!(
            s["properties"]["k"],
            json!({"type": "string", "enum": ["A"]})
        );
    }

    #[test]
    fn tuples_become_arrays_with_the_order_in_words() {
        let (s, notes) = shaped(
            Rule::PrefixItemsToItems,
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}),
        );
        assert_eq!(
            s["items"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
        assert_eq!(s["description"], "In this order: integer, string.");
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn nullable_keyword_replaces_type_lists_null_enums_and_null_branches() {
        let (s, _) = shaped(
            Rule::NullableKeyword,
            json!({"properties": {
                "s": {"type": ["string", "null"]},
                "e": {"type": ["string", "null"], "enum": ["a", null]},
                "o": {"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}], "description": "An O."},
                "n": {"type": ["integer", "string"]}
            }}),
        );
        let p = &s["properties"];
        assert_eq!(p["s"], json!({"type": "string", "nullable": true}));
        assert_eq!(
            p["e"],
            json!({"type": "string", "enum": ["a"], "nullable": true})
        );
        assert_eq!(
            p["o"],
            json!({"type": "object", "properties": {}, "description": "An O.", "nullable": true})
        );
        assert_eq!(
            p["n"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
    }

    #[test]
    fn stripped_keywords_move_into_the_description() {
        let (s, _) = shaped(
            Rule::StripKeywords(&["format", "minimum", "default", "additionalProperties"]),
            json!({"type": "object", "additionalProperties": false, "properties": {
                "n": {"type": "integer", "format": "uint32", "minimum": 0, "default": 5, "description": "A count"},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}}
            }}),
        );
        assert_eq!(
            s,
            json!({"type": "object", "properties": {
                "n": {"type": "integer", "description": "A count. Format: uint32. At least 0. Default: 5."},
                "m": {"type": "object", "description": "Other properties: integer."}
            }})
        );
    }

    #[test]
    fn unknown_formats_move_into_the_description() {
        let (s, _) = shaped(
            Rule::KeepFormats(&["int32"]),
            json!({"properties": {"a": {"format": "int32"}, "b": {"format": "uint8"}}}),
        );
        assert_eq!(s["properties"]["a"], json!({"format": "int32"}));
        assert_eq!(
            s["properties"]["b"],
            json!({"description": "Format: uint8."})
        );
    }

    #[test]
    fn draft07_keywords_rewrites_defs_tuples_and_ref_siblings() {
        let (s, _) = shaped(
            Rule::Draft07Keywords,
            json!({
                "type": "object",
                "properties": {
                    "t": {"type": "array", "prefixItems": [{"type": "integer"}], "items": false},
                    "r": {"$ref": "#/$defs/R", "description": "An R."}
                },
                "$defs": {"R": {"type": "object", "properties": {"r": {"$ref": "#/$defs/R"}}}},
                "unevaluatedProperties": false
            }),
        );
        assert_eq!(
            s["properties"]["t"],
            json!({"type": "array", "items": [{"type": "integer"}], "additionalItems": false})
        );
        assert_eq!(
            s["properties"]["r"],
            json!({"allOf": [{"$ref": "#/definitions/R"}], "description": "An R."})
        );
        assert_eq!(
            s["definitions"]["R"]["properties"]["r"],
            json!({"$ref": "#/definitions/R"})
        );
        assert_eq!(s["additionalProperties"], false);
    }

    #[test]
    fn long_tool_names_shorten_to_a_stable_prefix_and_hash() {
        let long = "search_every_document_in_the_knowledge_base_by_semantic_similarity";
        let short = shorten_name(long, 60);
        assert_eq!(short.len(), 60);
        assert!(short.starts_with("search_every_document"));
        assert_eq!(short, shorten_name(long, 60), "stable");
        assert!(is_short_name_of(&short, long));
        assert!(!is_short_name_of(&short, "another_name"));
        assert_eq!(shorten_name("short", 60), "short");
        assert_eq!(shorten_name(long, 3).len(), MIN_NAME_LENGTH);
    }
}
