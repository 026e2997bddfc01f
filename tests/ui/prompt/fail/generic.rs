use mcp_runtime::prelude::*;

#[prompt]
fn greeting<T: std::fmt::Display>(name: T) -> String {
    format!("Say hello to {name}.")
}

fn main() {}
