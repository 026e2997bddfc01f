use mcp_runtime::prelude::*;

#[resource("docs://page{#section}")]
fn page(section: String) -> String {
    format!("section {section}")
}

fn main() {}
