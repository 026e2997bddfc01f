use mcp_runtime::prelude::*;

#[prompt(name = "greet", title = "Greeting", name = "hello")]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
