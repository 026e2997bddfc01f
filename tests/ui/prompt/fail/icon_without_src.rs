use mcp_runtime::prelude::*;

#[prompt(icon(mime = "image/png", sizes = "48x48"))]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
