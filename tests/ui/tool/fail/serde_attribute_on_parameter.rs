use mcp_runtime::prelude::*;

/// Search the notes.
#[tool]
fn search(query: String, #[serde(default)] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
