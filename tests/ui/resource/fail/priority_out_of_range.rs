use mcp_runtime::prelude::*;

#[resource("file:///notes.txt", priority = 1.5)]
fn notes() -> String {
    "remember the milk".to_owned()
}

#[resource("file:///todo.txt", priority = "high")]
fn todo() -> String {
    "buy milk".to_owned()
}

fn main() {}
