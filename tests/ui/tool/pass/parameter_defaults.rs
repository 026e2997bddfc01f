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
    /// Past what `json!` takes for an `i32`.
    #[default = 5000000000]
    budget: u64,
    #[default = -3] shift: i64,
) -> String {
    format!("{query} {limit} {units} {offset} {exact} {budget} {shift}")
}

/// Scales by a factor whose default is written with a trailing dot.
#[tool]
fn scale(#[default = 2.] factor: f64) -> f64 {
    factor
}

fn main() {
    let scaled = (<scale as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(scaled["properties"]["factor"]["default"], 2.0, "{scaled}");
    assert_eq!(scale(0.5), 0.5);

    let schema = (<search as Tool>::DESCRIPTOR.input_schema)();
    let properties = &schema["properties"];
    assert_eq!(properties["limit"]["default"], 10, "{schema}");
    assert_eq!(properties["limit"]["type"], "integer", "{schema}");
    assert_eq!(
        properties["limit"]["description"], "At most this many hits.",
        "{schema}"
    );
    assert_eq!(properties["units"]["default"], "metric", "{schema}");
    assert_eq!(properties["units"]["type"], "string", "{schema}");
    assert_eq!(properties["offset"]["default"], -1.5, "{schema}");
    assert_eq!(properties["exact"]["default"], true, "{schema}");
    assert_eq!(
        properties["budget"]["default"], 5_000_000_000_u64,
        "{schema}"
    );
    assert_eq!(properties["shift"]["default"], -3, "{schema}");
    assert_eq!(schema["required"], json!(["query"]), "{schema}");
    assert_eq!(
        search("x".into(), 1, "si".into(), 0.0, false, 2, 0),
        "x 1 si 0 false 2 0"
    );

    let runtime = mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = mcp_runtime::server!()
            .auto_register(false)
            .tools(mcp_runtime::tools![search, search_by_hand])
            .build()
            .unwrap();
        let client = server.connect_memory();
        client.initialize().await.unwrap();
        for (tool, arguments, expected) in [
            (
                "search",
                json!({"query": "x"}),
                "x 10 metric -1.5 true 5000000000 -3",
            ),
            (
                "search",
                json!({"query": "x", "limit": null}),
                "x 10 metric -1.5 true 5000000000 -3",
            ),
            (
                "search",
                json!({"query": "x", "limit": 2}),
                "x 2 metric -1.5 true 5000000000 -3",
            ),
            ("search_by_hand", json!({"query": "x"}), "x 10"),
        ] {
            let result = client.call_tool(tool, arguments.clone()).await.unwrap();
            assert_eq!(
                result.content,
                vec![Content::text(expected)],
                "{tool} {arguments}"
            );
        }
    });
}

/// The same parameters with a schema written by hand: the default still applies.
#[tool(input_schema = hand_written)]
fn search_by_hand(query: String, #[default = 10] limit: u32) -> String {
    format!("{query} {limit}")
}

fn hand_written() -> mcp_runtime::serde_json::Value {
    json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 10}}})
}
