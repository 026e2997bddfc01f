use mcp_runtime::prelude::*;

#[prompt(titel = "Greeting")]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
