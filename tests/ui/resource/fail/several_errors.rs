use mcp_runtime::prelude::*;

fn list_notes() -> Vec<Resource> {
    Vec::new()
}

#[resource("db://{table}/{#col}/{row", mmie = "text/plain", priority = 2, audience(everyone), list = list_notes)]
fn broken<T>(schema: String, (a, b): (u32, u32), text: &str) -> impl Into<String> {
    let _ = (schema, a, b, text);
    "x"
}

#[resource("file:///notes.txt", list = list_notes, size = "big")]
fn notes(owner: String) -> String {
    owner
}

fn main() {}
