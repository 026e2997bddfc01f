use mcp_runtime::prelude::*;

#[prompt]
fn greeting((first, last): (String, String)) -> String {
    format!("Say hello to {first} {last}.")
}

fn main() {}
