use mcp_runtime::prelude::*;

#[tool]
fn echo(value: impl ToString) -> String {
    value.to_string()
}

fn main() {}
