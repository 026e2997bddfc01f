use mcp_runtime::prelude::*;

#[tool]
fn greeting(name: String) -> impl std::fmt::Display {
    format!("Hello, {name}!")
}

fn main() {}
