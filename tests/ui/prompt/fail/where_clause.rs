use mcp_runtime::prelude::*;

#[prompt]
fn greeting(name: String) -> String
where
    String: Clone,
{
    format!("Say hello to {name}.")
}

fn main() {}
