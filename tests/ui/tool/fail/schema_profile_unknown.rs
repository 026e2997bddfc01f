use mcp_runtime::prelude::*;

#[tool(schema_profile = "antropic")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tool(schema_profile = "strict")]
fn sub(a: i64, b: i64) -> i64 {
    a - b
}

#[tool(schema_profile = anthropic)]
fn mul(a: i64, b: i64) -> i64 {
    a * b
}

fn main() {}
