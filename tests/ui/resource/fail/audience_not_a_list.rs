use mcp_runtime::prelude::*;

#[resource("file:///notes.txt", audience = "user")]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
