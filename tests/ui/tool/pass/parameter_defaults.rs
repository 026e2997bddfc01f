//! `#[default = literal]` on a parameter: the argument may be left out (or sent as `null`), the
//! function gets the literal, and the schema shows it as `default`.

use mcp_runtime::Tool;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::json;

/// Search the notes.
#[tool]
fn search(
    /// What to look for.
    query: String,
    /// At most this many hits.
    #[default = 10]
    limit: u32,
    /// The unit of distances.
    #[default = "metric"]
    units: String,
    #[default = -1.5] offset: f64,
    #[default = true] exact: bool,
) -> String {
    format!("{query} {limit} {units} {offset} {exact}")
}

fn main() {
    let schema = (<search as Tool>::DESCRIPTOR.input_schema)();
    let properties = &schema["properties"];
    assert_eq!(properties["limit"]["default"], 10, "{schema}");
    assert_eq!(properties["limit"]["type"], "integer", "{schema}");
    assert_eq!(properties["limit"]["description"], "At most this many hits.", "{schema}");
    assert_eq!(properties["units"]["default"], "metric", "{schema}");
    assert_eq!(properties["units"]["type"], "string", "{schema}");
    assert_eq!(properties["offset"]["default"], -1.5, "{schema}");
    assert_eq!(properties["exact"]["default"], true, "{schema}");
    assert_eq!(schema["required"], json!(["query"]), "{schema}");
    assert_eq!(search("x".into(), 1, "si".into(), 0.0, false), "x 1 si 0 false");
}
