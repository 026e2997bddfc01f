use mcp_runtime::prelude::*;

#[resource("file:///notes.txt", version = "2")]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
