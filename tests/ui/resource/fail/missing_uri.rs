use mcp_runtime::prelude::*;

#[resource]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
