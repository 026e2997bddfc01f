use mcp_runtime::prelude::*;

/// A table's row count.
#[resource("db://tables/{table}/count")]
fn count(#[serde(rename = "name")] table: String) -> String {
    table
}

fn main() {}
