use mcp_runtime::prelude::*;

#[resource("file:///notes.txt", icon(mime = "image/svg+xml"))]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
