use mcp_runtime::prelude::*;

#[tool(name = "sum", title = "Sum", name = "total")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tool(annotations(read_only, idempotent, read_only = false))]
fn mul(a: i64, b: i64) -> i64 {
    a * b
}

fn main() {}
