use mcp_runtime::prelude::*;

#[prompt]
fn greeting(name: &str) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
