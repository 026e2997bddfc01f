use mcp_runtime::prelude::*;

#[tool]
fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

fn main() {}
