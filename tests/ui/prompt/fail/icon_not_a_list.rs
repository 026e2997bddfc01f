use mcp_runtime::prelude::*;

#[prompt(icon = "https://example.com/icon.png")]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
