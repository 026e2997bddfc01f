use mcp_runtime::prelude::*;

#[prompt(version = "2")]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
