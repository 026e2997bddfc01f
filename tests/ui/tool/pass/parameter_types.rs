//! Every kind of parameter a tool accepts: numbers, `bool`, `String`, `Option<T>`, `Vec<T>`,
//! maps, JSON values, types of the user's own deriving `Deserialize` and `JsonSchema`, and a
//! `Context`, which is not an argument. Parameter doc comments describe their properties.

// Tools here go without descriptions for brevity: the warning that asks for one is checked
// on its own (`ui.rs`).
#![allow(deprecated)]

use std::collections::HashMap;

use mcp_runtime::Tool;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::{Value, json};

/// A temperature scale.
#[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
enum Scale {
    Celsius,
    Fahrenheit,
}

/// A point on a map.
#[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Point {
    x: f64,
    y: f64,
}

#[tool]
fn signed(a: i8, b: i16, c: i32, d: i64, e: isize) -> i64 {
    i64::from(a) + i64::from(b) + i64::from(c) + d + e as i64
}

#[tool]
fn unsigned(a: u8, b: u16, c: u32, d: u64, e: usize) -> u64 {
    u64::from(a) + u64::from(b) + u64::from(c) + d + e as u64
}

#[tool]
fn floats(a: f32, b: f64) -> f64 {
    f64::from(a) + b
}

#[tool]
fn text_and_flags(text: String, loud: bool) -> String {
    if loud { text.to_uppercase() } else { text }
}

#[tool]
fn optional(limit: Option<u32>, label: Option<String>) -> String {
    format!("{limit:?} {label:?}")
}

#[tool]
fn lists(words: Vec<String>, points: Vec<Point>) -> usize {
    words.len() + points.len()
}

#[tool]
fn own_types(scale: Scale, origin: Point) -> String {
    let unit = match scale {
        Scale::Celsius => "°C",
        Scale::Fahrenheit => "°F",
    };
    format!("{unit} at ({}, {})", origin.x, origin.y)
}

#[tool]
fn maps_and_values(counts: HashMap<String, i64>, extra: Value) -> String {
    format!("{} {extra}", counts.values().sum::<i64>())
}

/// Report progress; the `Context` is supplied by the runtime.
#[tool]
async fn with_context(ctx: Context, n: u32) -> u32 {
    ctx.progress(f64::from(n), None, None).await;
    n
}

/// A `Context` may come last and be written with its full path.
#[tool]
fn context_by_path(n: u32, _ctx: mcp_runtime::Context) -> u32 {
    n
}

/// Look up the weather.
#[tool]
fn documented(
    /// The city, in English.
    city: String,
    /// How many days ahead;
    /// zero is today.
    days: u8,
) -> String {
    format!("{city} in {days} days")
}

fn main() {
    assert_eq!(signed(1, 1, 1, 1, -1), 3);
    assert_eq!(unsigned(1, 1, 1, 1, 1), 5);
    assert_eq!(floats(0.5, 1.0), 1.5);
    assert_eq!(text_and_flags("a".to_owned(), true), "A");
    assert_eq!(optional(None, Some("x".to_owned())), "None Some(\"x\")");
    assert_eq!(
        lists(vec!["a".to_owned()], vec![Point { x: 0.0, y: 1.0 }]),
        2
    );
    assert_eq!(
        own_types(Scale::Fahrenheit, Point { x: 1.0, y: 2.0 }),
        "°F at (1, 2)"
    );
    assert_eq!(
        maps_and_values(HashMap::from([("a".to_owned(), 2)]), json!(null)),
        "2 null"
    );
    assert_eq!(context_by_path(3, Context::detached()), 3);
    let runtime = mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(runtime.block_on(with_context(Context::detached(), 3)), 3);

    let schema = (<with_context as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(
        schema["properties"].as_object().unwrap().len(),
        1,
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["n"]));

    let schema = (<optional as Tool>::DESCRIPTOR.input_schema)();
    assert!(
        schema.get("required").is_none_or(|r| r == &json!([])),
        "{schema}"
    );

    let schema = (<documented as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(
        schema["properties"]["city"]["description"],
        "The city, in English."
    );
    assert_eq!(
        schema["properties"]["days"]["description"],
        "How many days ahead;\nzero is today."
    );

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(server.tool_names().len(), 11);
}
