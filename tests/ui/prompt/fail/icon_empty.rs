use mcp_runtime::prelude::*;

#[prompt(icon())]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
