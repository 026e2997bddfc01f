use mcp_runtime::prelude::*;

#[tool]
fn echo(value: String) -> String
where
    String: Clone,
{
    value
}

fn main() {}
