use mcp_runtime::prelude::*;

#[tool]
fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}
