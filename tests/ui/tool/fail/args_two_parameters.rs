use mcp_runtime::prelude::*;

#[tool(args)]
fn search(query: String, limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
