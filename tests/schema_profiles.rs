//! Every schema profile over a catalogue of Rust types (optionals, unit and data-carrying
//! enums, nested and recursive structs, maps, arrays, integer formats, flattened structs,
//! `rename_all`, defaults): each shaped schema is valid JSON Schema (2020-12, or draft-07 for
//! the draft-07 profile), keeps to its profile's restrictions or the lint says why not, and
//! still accepts the values the original schema accepts — which, sent through a real
//! `tools/call`, still deserialise into the same Rust values.
//!
//! Regenerate the snapshot with `UPDATE_SNAPSHOTS=1 cargo test -p mcp-tests --test schema_profiles`.

use std::collections::BTreeMap;

use mcp_runtime::prelude::*;
use mcp_runtime::schema::{Rule, SchemaProfile};
use mcp_runtime::testing::{self, Severity};
use mcp_runtime::{MemoryClient, ProtocolVersion};
use serde_json::{Map, Value, json};

// ---- the catalogue ----

macro_rules! argument_type {
    ($item:item) => {
        #[derive(
            Debug, PartialEq, mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema,
        )]
        #[serde(crate = "mcp_runtime::serde")]
        #[schemars(crate = "mcp_runtime::schemars")]
        $item
    };
}

argument_type! { enum Colour { Red, Green, Blue } }
argument_type! { struct Point { x: f64, y: f64 } }
argument_type! { enum Shape { Circle { radius: f64 }, Square(f64), Empty } }
argument_type! {
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Event { Click { x: i32, y: i32 }, Key { code: String } }
}
argument_type! { struct Outer { inner: Inner, note: Option<String> } }
argument_type! { struct Inner { label: String, tags: Vec<String> } }
argument_type! { struct Tree { label: String, children: Vec<Tree> } }
argument_type! { struct Flattened { name: String, #[serde(flatten)] page: Paging } }
argument_type! { struct Paging { offset: u32, limit: Option<u32> } }
argument_type! {
    #[serde(rename_all = "camelCase")]
    struct Renamed { first_name: String, last_name: Option<String>, is_admin: bool }
}
argument_type! {
    struct WithDefaults {
        query: String,
        #[serde(default)]
        limit: u32,
        #[serde(default = "ten")]
        page_size: u64,
        #[serde(default)]
        exact: bool,
    }
}
argument_type! { struct Search { query: String, #[serde(flatten)] filter: Filter } }
argument_type! {
    #[serde(tag = "by", rename_all = "snake_case")]
    enum Filter { Author { author: String }, Year { year: u16 } }
}

fn ten() -> u64 {
    10
}

/// Optional parameters of every kind.
#[tool]
fn optionals(
    name: Option<String>,
    count: Option<u32>,
    colour: Option<Colour>,
    point: Option<Point>,
) -> String {
    format!("{name:?} {count:?} {colour:?} {point:?}")
}

/// A unit enum.
#[tool]
fn unit_enum(colour: Colour) -> String {
    format!("{colour:?}")
}

/// Data-carrying enums, one optional.
#[tool]
fn data_enum(shape: Shape, maybe: Option<Shape>) -> String {
    format!("{shape:?} {maybe:?}")
}

/// An internally tagged enum.
#[tool]
fn tagged(event: Event) -> String {
    format!("{event:?}")
}

/// Nested structs.
#[tool]
fn nested(outer: Outer) -> String {
    format!("{outer:?}")
}

/// A recursive struct.
#[tool]
fn recursive(tree: Tree, forest: Option<Vec<Tree>>) -> String {
    format!("{tree:?} {forest:?}")
}

/// A map.
#[tool]
fn maps(counts: BTreeMap<String, i64>) -> String {
    format!("{counts:?}")
}

/// Arrays and a tuple.
#[tool]
fn arrays(words: Vec<String>, matrix: Vec<Vec<i32>>, pair: (i32, String)) -> String {
    format!("{words:?} {matrix:?} {pair:?}")
}

/// Every integer width, and floats.
#[tool]
#[allow(clippy::too_many_arguments)]
fn integers(
    a: i8,
    b: u8,
    c: i16,
    d: u16,
    e: i32,
    f: u32,
    g: i64,
    h: u64,
    x: f32,
    y: f64,
) -> String {
    format!("{a} {b} {c} {d} {e} {f} {g} {h} {x} {y}")
}

/// A flattened struct.
#[tool(args)]
fn flattened(args: Flattened) -> String {
    format!("{args:?}")
}

/// `rename_all = "camelCase"`.
#[tool(args)]
fn renamed(args: Renamed) -> String {
    format!("{args:?}")
}

/// Defaulted fields.
#[tool(args)]
fn defaults(args: WithDefaults) -> String {
    format!("{args:?}")
}

/// A flattened internally tagged enum: the arguments' root holds a `oneOf`.
#[tool(args)]
fn search(args: Search) -> String {
    format!("{args:?}")
}

const LONG_NAME: &str = "summarise_every_document_in_the_knowledge_base_by_semantic_similarity";

/// A tool whose name is longer than Cursor accepts.
#[tool(name = "summarise_every_document_in_the_knowledge_base_by_semantic_similarity")]
fn long_name() -> &'static str {
    "summarised"
}

/// Valid arguments of each catalogue tool, under its original schema.
fn samples() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "optionals",
            vec![
                json!({}),
                json!({"name": "x", "count": 3, "colour": "Red", "point": {"x": 1.5, "y": -2.0}}),
                json!({"name": null, "colour": null}),
            ],
        ),
        ("unit_enum", vec![json!({"colour": "Green"})]),
        (
            "data_enum",
            vec![
                json!({"shape": {"Circle": {"radius": 2.5}}}),
                json!({"shape": {"Square": 3.0}, "maybe": "Empty"}),
                json!({"shape": "Empty", "maybe": {"Circle": {"radius": 1.0}}}),
            ],
        ),
        (
            "tagged",
            vec![
                json!({"event": {"kind": "click", "x": 1, "y": 2}}),
                json!({"event": {"kind": "key", "code": "Enter"}}),
            ],
        ),
        (
            "nested",
            vec![
                json!({"outer": {"inner": {"label": "a", "tags": ["x", "y"]}}}),
                json!({"outer": {"inner": {"label": "a", "tags": []}, "note": "n"}}),
            ],
        ),
        (
            "recursive",
            vec![
                json!({"tree": {"label": "r", "children": [
                    {"label": "a", "children": [{"label": "b", "children": []}]}
                ]}}),
                json!({"tree": {"label": "r", "children": []}, "forest": [{"label": "f", "children": []}]}),
            ],
        ),
        (
            "maps",
            vec![json!({"counts": {"a": 1, "b": -2}}), json!({"counts": {}})],
        ),
        (
            "arrays",
            vec![json!({"words": ["a"], "matrix": [[1, 2], [3]], "pair": [7, "seven"]})],
        ),
        (
            "integers",
            vec![json!({
                "a": -128, "b": 255, "c": -300, "d": 65535, "e": -70000, "f": 4_000_000_000_u64,
                "g": -9_000_000_000_i64, "h": 18_000_000_000_000_000_000_u64, "x": 1.5, "y": -0.25
            })],
        ),
        (
            "flattened",
            vec![
                json!({"name": "n", "offset": 10}),
                json!({"name": "n", "offset": 0, "limit": 5}),
            ],
        ),
        (
            "renamed",
            vec![
                json!({"firstName": "Ada", "isAdmin": true}),
                json!({"firstName": "Ada", "lastName": "Lovelace", "isAdmin": false}),
            ],
        ),
        (
            "defaults",
            vec![
                json!({"query": "q"}),
                json!({"query": "q", "limit": 3, "page_size": 20, "exact": true}),
            ],
        ),
        (
            "search",
            vec![
                json!({"query": "rust", "by": "author", "author": "Ferris"}),
                json!({"query": "rust", "by": "year", "year": 2015}),
            ],
        ),
    ]
}

/// A custom profile, given to clients named `custom-*`.
fn custom() -> SchemaProfile {
    SchemaProfile::Custom(vec![
        Rule::InlineRefs,
        Rule::ConstToEnum,
        Rule::OneOfToAnyOf,
        Rule::MaxToolNameLength(40),
    ])
}

fn server() -> Server {
    mcp_runtime::server!()
        .schema_profile_for_client("custom-*", custom())
        .build()
        .expect("a consistent catalogue")
}

fn profiles() -> Vec<(String, SchemaProfile)> {
    let mut all: Vec<(String, SchemaProfile)> = SchemaProfile::BUILT_IN
        .iter()
        .map(|p| (p.name().to_owned(), p.clone()))
        .collect();
    all.push(("custom-1".to_owned(), custom()));
    all
}

fn input_schema(list: &Value, tool: &str) -> Value {
    list["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == tool))
        .map(|t| t["inputSchema"].clone())
        .unwrap_or_else(|| panic!("`{tool}` is listed"))
}

// ---- what each profile must not contain ----

/// The keywords of a schema, at any depth (property names and data are not keywords).
fn keywords(schema: &Value, found: &mut Vec<String>) {
    if let Value::Object(map) = schema {
        for (key, value) in map {
            if key == "properties" {
                value
                    .as_object()
                    .into_iter()
                    .flat_map(Map::values)
                    .for_each(|p| keywords(p, found));
                continue;
            }
            found.push(key.clone());
            if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                keywords(value, found);
            }
        }
    } else if let Value::Array(items) = schema {
        items.iter().for_each(|i| keywords(i, found));
    }
}

/// Every object schema below (and including) `schema`.
fn objects<'a>(schema: &'a Value, found: &mut Vec<&'a Map<String, Value>>) {
    match schema {
        Value::Object(map) => {
            found.push(map);
            for (key, value) in map {
                if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    if key == "properties" {
                        value
                            .as_object()
                            .into_iter()
                            .flat_map(Map::values)
                            .for_each(|p| objects(p, found));
                    } else {
                        objects(value, found);
                    }
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| objects(i, found)),
        _ => {}
    }
}

/// What in a shaped schema its profile's clients refuse, checked independently of the rules.
fn restrictions(profile: &str, schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    keywords(schema, &mut found);
    let forbidden: &[&str] = match profile {
        "default" => &["$schema"],
        "anthropic" => &["$schema", "$ref", "$defs", "definitions"],
        "gemini" => &[
            "$schema",
            "$ref",
            "$defs",
            "definitions",
            "additionalProperties",
            "const",
            "oneOf",
            "allOf",
            "prefixItems",
            "unevaluatedProperties",
        ],
        "openai-strict" => &[
            "$schema",
            "format",
            "default",
            "oneOf",
            "allOf",
            "prefixItems",
            "unevaluatedProperties",
        ],
        "draft-07" => &[
            "$schema",
            "$defs",
            "prefixItems",
            "unevaluatedProperties",
            "unevaluatedItems",
            "dependentRequired",
            "dependentSchemas",
        ],
        _ => &["$ref", "$defs", "const", "oneOf"],
    };
    let mut problems: Vec<String> = found
        .iter()
        .filter(|k| forbidden.contains(&k.as_str()))
        .map(|k| format!("`{k}`"))
        .collect();
    if matches!(profile, "anthropic" | "gemini" | "openai-strict") {
        for key in ["anyOf", "oneOf", "allOf"] {
            if schema.get(key).is_some() {
                problems.push(format!("top-level `{key}`"));
            }
        }
    }
    let mut all = Vec::new();
    objects(schema, &mut all);
    for object in all {
        if profile == "gemini" {
            if object.get("type").is_some_and(Value::is_array) {
                problems.push("a list of types".into());
            }
            if let Some(format) = object.get("format").and_then(Value::as_str)
                && !["int32", "int64", "float", "double", "date-time", "enum"].contains(&format)
            {
                problems.push(format!("the format `{format}`"));
            }
        }
        if profile == "openai-strict" {
            let is_object = object.get("type").is_some_and(|t| {
                t == "object" || t.as_array().is_some_and(|a| a.contains(&json!("object")))
            });
            if let Some(props) = object.get("properties").and_then(Value::as_object) {
                let required: Vec<&str> = object["required"]
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if props.keys().any(|k| !required.contains(&k.as_str())) {
                    problems.push("an optional property".into());
                }
                if object.get("additionalProperties") != Some(&json!(false)) {
                    problems.push("an open object".into());
                }
            } else if is_object {
                problems.push("an object without named properties".into());
            }
        }
    }
    problems
}

// ---- reading a shaped schema as its clients do ----

/// The schema as a JSON Schema validator must read it: `nullable: true` (OpenAPI 3.0, how the
/// Gemini API reads schemas) admits `null`.
fn as_its_clients_read_it(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| *k != "nullable")
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "enum" | "const" | "default" | "examples" => v.clone(),
                        _ => as_its_clients_read_it(v),
                    };
                    (k.clone(), v)
                })
                .collect();
            if map.get("nullable") == Some(&json!(true)) {
                if let Some(Value::String(t)) = out.get("type").cloned() {
                    out.insert("type".into(), json!([t, "null"]));
                } else if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
                    branches.push(json!({"type": "null"}));
                }
                if let Some(Value::Array(values)) = out.get_mut("enum") {
                    values.push(Value::Null);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(as_its_clients_read_it).collect()),
        other => other.clone(),
    }
}

/// The object schema a value takes: the schema, or the branch of its `anyOf` that fits.
fn branch_for<'a>(value: &Map<String, Value>, schema: &'a Value) -> Option<&'a Value> {
    if schema.get("properties").is_some() {
        return Some(schema);
    }
    schema.get("anyOf")?.as_array()?.iter().find_map(|branch| {
        let Some(props) = branch.get("properties").and_then(Value::as_object) else {
            return branch_for(value, branch);
        };
        let required = branch["required"].as_array().cloned().unwrap_or_default();
        let fits = required
            .iter()
            .filter_map(Value::as_str)
            .all(|r| value.contains_key(r))
            && value.keys().all(|k| props.contains_key(k));
        fits.then_some(branch)
    })
}

/// The arguments as a client in strict mode sends them: every property, `null` for those it
/// leaves out.
fn with_every_property(value: &Value, schema: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let Some(props) = branch_for(map, schema)
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
            else {
                return value.clone();
            };
            let mut out = Map::new();
            for (name, property) in props {
                let given = map.get(name);
                out.insert(
                    name.clone(),
                    given.map_or(Value::Null, |v| with_every_property(v, property)),
                );
            }
            Value::Object(out)
        }
        Value::Array(items) => match schema.get("items") {
            Some(item) if item.is_object() => {
                Value::Array(items.iter().map(|i| with_every_property(i, item)).collect())
            }
            _ => value.clone(),
        },
        _ => value.clone(),
    }
}

fn validator(profile: &str, schema: &Value) -> jsonschema::Validator {
    let read = as_its_clients_read_it(schema);
    let compiled = if profile == "draft-07" {
        jsonschema::draft7::meta::validate(&read)
            .unwrap_or_else(|e| panic!("{profile}: not a draft-07 schema: {e}\n{read:#}"));
        jsonschema::draft7::new(&read)
    } else {
        jsonschema::draft202012::meta::validate(&read)
            .unwrap_or_else(|e| panic!("{profile}: not a 2020-12 schema: {e}\n{read:#}"));
        jsonschema::draft202012::new(&read)
    };
    compiled.unwrap_or_else(|e| panic!("{profile}: the schema compiles: {e}"))
}

async fn call_text(client: &MemoryClient, tool: &str, arguments: &Value) -> String {
    let result = client
        .call_tool(tool, arguments.clone())
        .await
        .unwrap_or_else(|e| panic!("`{tool}` {arguments}: {e:?}"));
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert!(!result.is_error, "`{tool}` refused {arguments}: {text}");
    text.as_str().unwrap_or_default().to_owned()
}

// ---- the tests ----

#[mcp_runtime::test]
async fn every_profile_keeps_values_accepted_and_deserialised_the_same() {
    let server = server();
    let client = server.connect_memory();
    client.initialize().await.expect("initialize");
    let lint = testing::lint_schemas(&server);
    let version = ProtocolVersion::LATEST_HANDSHAKE;
    let original_list = testing::tools_list(&server, version, &SchemaProfile::Default);
    let mut checked = 0;
    for (profile_name, profile) in profiles() {
        let list = testing::tools_list(&server, version, &profile);
        for (tool, values) in samples() {
            let original = input_schema(&original_list, tool);
            let shaped = input_schema(&list, tool);
            let at = format!("`{tool}` under `{profile_name}`");
            let problems = restrictions(&profile_name, &shaped);
            let errors = lint
                .errors()
                .filter(|f| f.name == tool && f.profile.as_deref() == Some(&profile_name))
                .count();
            assert_eq!(
                problems.is_empty(),
                errors == 0,
                "{at}: the restrictions found {problems:?}, the lint {errors} errors\n{shaped:#}"
            );
            let original_validator = validator("default", &original);
            let shaped_validator = validator(&profile_name, &shaped);
            for value in values {
                assert!(original_validator.is_valid(&value), "{at}: sample {value}");
                let sent = if profile == SchemaProfile::OpenAiStrict {
                    with_every_property(&value, &shaped)
                } else {
                    value.clone()
                };
                let refused: Vec<String> = shaped_validator
                    .iter_errors(&sent)
                    .map(|e| format!("{e} at {}", e.instance_path()))
                    .collect();
                assert!(
                    refused.is_empty(),
                    "{at} refuses {sent}: {refused:?}\n{shaped:#}"
                );
                assert_eq!(
                    call_text(&client, tool, &sent).await,
                    call_text(&client, tool, &value).await,
                    "{at}: {sent} and {value} deserialise differently"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6 * 25);
}

#[test]
fn the_lint_reports_what_a_profile_cannot_express_and_what_it_only_says_in_words() {
    let lint = testing::lint_schemas(&server());
    let has = |severity, tool: &str, profile: Option<&str>, words: &str| {
        lint.findings().iter().any(|f| {
            f.severity == severity
                && f.name == tool
                && f.profile.as_deref() == profile
                && f.message.contains(words)
        })
    };
    assert!(
        has(Severity::Error, "maps", Some("openai-strict"), "a map"),
        "{lint}"
    );
    for profile in ["anthropic", "gemini", "custom-1"] {
        assert!(
            has(
                Severity::Warning,
                "recursive",
                Some(profile),
                "recursive type `Tree`"
            ),
            "{profile}: {lint}"
        );
    }
    assert!(
        has(
            Severity::Warning,
            "search",
            Some("anthropic"),
            "top-level `oneOf`"
        ),
        "{lint}"
    );
    assert!(has(Severity::Warning, LONG_NAME, None, "Cursor"), "{lint}");
    assert!(
        has(Severity::Warning, LONG_NAME, Some("custom-2"), "sent as")
            || has(Severity::Warning, LONG_NAME, Some("custom-1"), "sent as"),
        "{lint}"
    );
    assert!(
        !lint
            .errors()
            .any(|f| f.profile.as_deref() != Some("openai-strict")),
        "only strict mode cannot express something of this catalogue:\n{lint}"
    );
}

#[mcp_runtime::test]
async fn the_builder_profile_reaches_every_client() {
    let server = mcp_runtime::server!()
        .schema_profile(SchemaProfile::Gemini)
        .build()
        .unwrap();
    let client = server.connect_memory();
    client.initialize().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let text = Value::Array(tools).to_string();
    for refused in ["additionalProperties", "\"const\"", "$ref", "\"null\""] {
        assert!(!text.contains(refused), "{refused} in {text}");
    }
    assert!(text.contains("\"nullable\":true"));
}

#[mcp_runtime::test]
async fn long_names_are_shortened_for_cursor_and_either_name_calls_the_tool() {
    let server = server();
    let list =
        testing::tools_list_for_client(&server, ProtocolVersion::LATEST_HANDSHAKE, "cursor-vscode");
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let short = names
        .iter()
        .find(|n| n.starts_with("summarise_every"))
        .unwrap();
    assert_eq!(short.len(), 60);
    assert!(names.iter().all(|n| n.len() <= 60));
    let client = server.connect_memory();
    client.initialize().await.unwrap();
    for name in [*short, LONG_NAME] {
        assert_eq!(
            call_text(&client, name, &json!({})).await,
            "summarised",
            "{name}"
        );
    }
}

#[mcp_runtime::test]
async fn a_known_client_receives_its_profile_over_the_wire() {
    let server = server();
    let client = server.connect_memory();
    client
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "claude-ai", "version": "0.1.0"}
            }),
        )
        .await
        .unwrap();
    let tools = Value::Array(client.list_tools().await.unwrap()).to_string();
    assert!(!tools.contains("$ref"), "{tools}");
}

#[test]
fn the_catalogue_matches_its_snapshot_in_every_profile() {
    testing::assert_tools_list_snapshot(&server(), "snapshots/schema_profiles.json");
}
