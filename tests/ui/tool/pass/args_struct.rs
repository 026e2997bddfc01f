//! A whole argument object as one struct: with `#[tool(args)]`, or detected when the only
//! argument parameter is named `args`. Its fields are the tool's properties.

use mcp_runtime::Tool;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::json;

/// What to search for.
#[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct SearchArgs {
    /// The words to look for.
    query: String,
    /// At most this many hits.
    limit: Option<u32>,
}

/// Search, with the argument struct declared.
#[tool(args)]
fn search(request: SearchArgs) -> String {
    format!("{} ({:?})", request.query, request.limit)
}

/// Search, with the argument struct detected by its name.
#[tool]
fn search_detected(args: SearchArgs) -> String {
    args.query
}

/// An argument struct next to a `Context`.
#[tool(args)]
async fn search_with_context(ctx: Context, request: SearchArgs) -> String {
    ctx.info("searching").await;
    request.query
}

/// A parameter named `args` next to another argument is an ordinary property.
#[tool]
fn not_detected(args: String, verbose: bool) -> String {
    format!("{args} {verbose}")
}

fn main() {
    let request = SearchArgs {
        query: "rust".to_owned(),
        limit: Some(3),
    };
    assert_eq!(search(request), "rust (Some(3))");

    for descriptor in [
        <search as Tool>::DESCRIPTOR,
        <search_detected as Tool>::DESCRIPTOR,
        <search_with_context as Tool>::DESCRIPTOR,
    ] {
        let schema = (descriptor.input_schema)();
        assert_eq!(schema["type"], "object", "{schema}");
        assert_eq!(
            schema["properties"]["query"]["description"], "The words to look for.",
            "{schema}"
        );
        assert_eq!(schema["required"], json!(["query"]), "{schema}");
    }

    let schema = (<not_detected as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(schema["properties"]["args"]["type"], "string", "{schema}");
    assert_eq!(not_detected("a".to_owned(), false), "a false");
}
