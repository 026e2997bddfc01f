use mcp_runtime::prelude::*;

#[resource("file:///notes.txt", priority, mime = "text/plain")]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
