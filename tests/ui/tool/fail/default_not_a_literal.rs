use mcp_runtime::prelude::*;

const TEN: u32 = 10;

/// Search the notes.
#[tool]
fn search(query: String, #[default = TEN] limit: u32) -> String {
    format!("{query} {limit}")
}

/// Search with a struct of arguments.
#[tool(args)]
fn search_all(#[default = 1] request: Request) -> String {
    request.query
}

#[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Request {
    query: String,
}

fn main() {}
