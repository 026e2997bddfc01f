use mcp_runtime::prelude::*;

/// Derives `Deserialize` but not `JsonSchema`.
#[derive(mcp_runtime::serde::Deserialize)]
#[serde(crate = "mcp_runtime::serde")]
struct SearchArgs {
    query: String,
}

#[tool(args, description = "Search the notes.")]
fn search(args: SearchArgs) -> String {
    args.query
}

fn main() {}
