use mcp_runtime::prelude::*;

#[resource(mime = "text/plain", "file:///notes.txt")]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
