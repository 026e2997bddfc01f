use mcp_runtime::prelude::*;

#[prompt]
fn greeting(name: String) -> impl Into<String> {
    format!("Say hello to {name}.")
}

fn main() {}
