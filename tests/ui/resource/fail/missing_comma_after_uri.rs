use mcp_runtime::prelude::*;

#[resource("file:///notes.txt" mime = "text/plain")]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
