//! A whole argument object as one struct, with `#[tool(args)]`: its fields are the tool's
//! properties, and every object of its schema is closed. A parameter's name never makes it
//! the argument object: a lone `args: Vec<String>` is one argument named `args`.

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

/// Run a command: `args` is an ordinary argument, a list of strings.
#[tool]
fn run_command(args: Vec<String>) -> String {
    args.join(" ")
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
        <search_with_context as Tool>::DESCRIPTOR,
    ] {
        let schema = (descriptor.input_schema)();
        assert_eq!(schema["type"], "object", "{schema}");
        assert_eq!(
            schema["properties"]["query"]["description"], "The words to look for.",
            "{schema}"
        );
        assert_eq!(schema["required"], json!(["query"]), "{schema}");
        assert_eq!(schema["additionalProperties"], false, "{schema}");
    }

    let schema = (<run_command as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["properties"]["args"]["type"], "array", "{schema}");
    assert_eq!(schema["required"], json!(["args"]), "{schema}");
    assert_eq!(run_command(vec!["ls".into(), "-l".into()]), "ls -l");

    let schema = (<not_detected as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(schema["properties"]["args"]["type"], "string", "{schema}");
    assert_eq!(not_detected("a".to_owned(), false), "a false");
}
