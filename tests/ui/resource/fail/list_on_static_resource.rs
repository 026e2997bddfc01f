use mcp_runtime::prelude::*;

fn list_notes() -> Vec<Resource> {
    Vec::new()
}

#[resource("file:///notes.txt", list = list_notes)]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
