use mcp_runtime::prelude::*;

#[resource("file:///notes.txt", size = "1 KiB")]
fn notes() -> String {
    "remember the milk".to_owned()
}

#[resource("file:///todo.txt", size = -1)]
fn todo() -> String {
    "buy milk".to_owned()
}

fn main() {}
