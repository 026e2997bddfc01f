use mcp_runtime::prelude::*;

#[resource("file:///notes.txt")]
fn notes() -> impl Into<String> {
    "remember the milk"
}

fn main() {}
