use mcp_runtime::prelude::*;
use mcp_runtime::{schemars, serde};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Query {
    region: String,
}

#[tool(args)]
fn route(#[header] query: Query) -> String {
    query.region
}

fn main() {}
