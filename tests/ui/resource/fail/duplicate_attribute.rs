use mcp_runtime::prelude::*;

#[resource(
    "file:///notes.txt",
    mime = "text/plain",
    title = "Notes",
    mime = "text/markdown"
)]
fn notes() -> String {
    "remember the milk".to_owned()
}

#[resource("file:///todo.txt", audience(user, assistant, user))]
fn todo() -> String {
    "buy milk".to_owned()
}

fn main() {}
