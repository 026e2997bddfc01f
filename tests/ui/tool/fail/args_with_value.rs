use mcp_runtime::prelude::*;

#[tool(args = true)]
fn echo(text: String) -> String {
    text
}

fn main() {}
