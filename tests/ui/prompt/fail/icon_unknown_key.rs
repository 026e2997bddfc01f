use mcp_runtime::prelude::*;

#[prompt(icon(src = "https://example.com/icon.png", size = "48x48"))]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
