use mcp_runtime::prelude::*;

#[prompt]
fn greeting(name: impl ToString) -> String {
    format!("Say hello to {}.", name.to_string())
}

fn main() {}
