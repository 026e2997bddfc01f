use mcp_runtime::prelude::*;

#[tool(name = add_numbers)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
