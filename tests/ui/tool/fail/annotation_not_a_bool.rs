use mcp_runtime::prelude::*;

#[tool(annotations(read_only = "yes"))]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
