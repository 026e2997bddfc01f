use mcp_runtime::prelude::*;

#[prompt]
unsafe fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
